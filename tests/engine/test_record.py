"""Round records: JSON and one-line text, replay, and every kind of tampering."""

from __future__ import annotations

import copy
import doctest
import importlib
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.engine.actions import Bid, PassCards, Play, SeeCards
from game.engine.cards import SEAT_LETTERS, format_card, parse_card, parse_hand
from game.engine.deal import deal_hands
from game.engine.record import (
    FORMAT,
    RecordError,
    _hand_text,
    _parse_hand_text,
    from_json,
    from_text,
    record_of,
    replay,
    to_json,
    to_text,
)
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from tests.support.engine_steps import ROTATING, random_round, random_step, snapshot

N, E, S, W = 0, 1, 2, 3


@pytest.fixture(scope="module")
def finished() -> RoundState:
    return random_round(Rules(), seed=11, dealer=W)


@pytest.fixture(scope="module")
def exchanged() -> RoundState:
    """Both North and South bid blind nil and exchange cards; the two of clubs leads."""
    rules = Rules(blind_nil_pass=2, first_lead="two_of_clubs")
    r = random_round(rules, seed=4, dealer=E, scores_before=(0, 150))
    assert r.blind == [True, False, True, False] and len(r.passes) == 4
    return r


@pytest.fixture
def doc(finished) -> dict:
    return copy.deepcopy(record_of(finished))


def rejected(doc, match: str) -> RecordError:
    with pytest.raises(RecordError, match=match) as e:
        replay(doc)
    with pytest.raises(RecordError, match=match):
        from_json(json.dumps(doc))
    return e.value


def test_record_error_is_a_value_error():
    assert issubclass(RecordError, ValueError)


def test_record_shape(finished, doc):
    assert doc["format"] == FORMAT == "spades-round/1"
    assert doc["dealer"] == "W"
    assert set(doc["hands"]) == set("NESW")
    assert [b["seat"] for b in doc["bids"]] == ["N", "E", "S", "W"]
    assert len(doc["tricks"]) == 13
    assert all(len(t["cards"]) == 4 for t in doc["tricks"])
    assert doc["tricks_won"] == finished.tricks_won
    assert doc["scores_after"] == [p.score_after for p in finished.result]
    assert len(doc["round_types"]) == 4 and len(doc["nil_positions"]) == 2
    assert json.loads(to_json(finished)) == doc
    assert json.loads(to_json(finished, indent=2)) == doc


def test_a_good_record_replays(finished, doc):
    r = replay(doc)
    assert record_of(r) == doc
    assert r.tricks == finished.tricks
    assert r.result == finished.result
    assert record_of(from_json(to_json(finished))) == doc
    assert record_of(from_json(to_json(finished).encode())) == doc


def test_only_a_finished_round_has_a_record():
    r = RoundState(Rules(), W, ROTATING)
    with pytest.raises(RecordError, match="only a finished round has a record"):
        record_of(r)
    with pytest.raises(RecordError):
        to_json(r)


# ----- tampering ---------------------------------------------------------------------------


def test_wrong_trick_winner(doc):
    t = doc["tricks"][4]
    right = t["winner"]
    t["winner"] = SEAT_LETTERS[(SEAT_LETTERS.index(right) + 1) % 4]
    rejected(doc, f"trick 5 was won by {right}, not {t['winner']}")


def test_wrong_trick_leader(doc):
    t = doc["tricks"][3]
    t["leader"] = SEAT_LETTERS[(SEAT_LETTERS.index(t["leader"]) + 1) % 4]
    rejected(doc, "trick 4: the leader should be")


def test_wrong_tricks_won(doc):
    won = doc["tricks_won"]
    i = next(k for k in range(4) if won[k] != won[(k + 1) % 4])
    won[i], won[(i + 1) % 4] = won[(i + 1) % 4], won[i]
    rejected(doc, "'tricks_won' does not match the replay")


@pytest.mark.parametrize(
    "path, key",
    [
        (("result", 0, "points"), "result"),
        (("result", 1, "bags"), "result"),
        (("result", 0, "made"), "result"),
        (("scores_after", 0), "scores_after"),
        (("scores_after", 1), "scores_after"),
        (("bags_after", 1), "bags_after"),
    ],
)
def test_wrong_score(doc, path, key):
    target = doc
    for p in path[:-1]:
        target = target[p]
    value = target[path[-1]]
    target[path[-1]] = (not value) if isinstance(value, bool) else value + 10
    rejected(doc, f"'{key}' does not match the replay")


def test_wrong_round_types(doc):
    doc["round_types"][0] = "fourteen" if doc["round_types"][0] != "fourteen" else "over"
    rejected(doc, "'round_types' does not match")


def test_wrong_nil_positions(doc):
    doc["nil_positions"] = list(reversed(doc["nil_positions"])) + ["x"]
    rejected(doc, "'nil_positions' does not match")


def test_changed_card_in_a_hand_makes_a_play_illegal(doc):
    n = doc["hands"]["N"].split()
    e = doc["hands"]["E"].split()
    n[0], e[0] = e[0], n[0]
    doc["hands"]["N"], doc["hands"]["E"] = " ".join(n), " ".join(e)
    rejected(doc, "illegal action in the record: you (do not hold|must follow)")


def test_changed_card_in_a_trick(doc, finished):
    # North's first card replaced by a card North never held.
    t = doc["tricks"][0]
    k = (SEAT_LETTERS.index("N") - SEAT_LETTERS.index(t["leader"])) % 4
    other = next(c for c in range(52) if not finished.hands_dealt[N] >> c & 1)
    t["cards"][k] = format_card(other)
    rejected(doc, "illegal action in the record")


def test_a_hand_that_is_not_a_deal(doc):
    doc["hands"]["N"] = doc["hands"]["E"]
    rejected(doc, "52 cards once each")


def test_an_extra_trick(doc):
    doc["tricks"].append(copy.deepcopy(doc["tricks"][-1]))
    rejected(doc, "trick 14: the leader should be")


def test_a_missing_trick(doc):
    doc["tricks"].pop()
    rejected(doc, "the record stops before the round is over")


def test_a_missing_bid(doc):
    doc["bids"].pop()
    rejected(doc, "trick 1: the leader should be")


def test_a_changed_bid(doc):
    doc["bids"][0]["bid"] = (doc["bids"][0]["bid"] + 1) % 14 or 1
    rejected(doc, "does not match the replay")


def test_bids_out_of_order(doc):
    doc["bids"][0], doc["bids"][1] = doc["bids"][1], doc["bids"][0]
    rejected(doc, "illegal action in the record: it is North's turn")


def test_an_unearned_blind_nil(doc):
    doc["bids"][0]["bid"] = 0
    doc["bids"][0]["blind"] = True
    rejected(doc, "illegal action in the record: blind nil")


def test_a_pass_that_never_happened(doc):
    doc["passes"] = [{"seat": "N", "cards": "2C 3C"}]
    rejected(doc, "illegal action in the record")


@pytest.mark.parametrize("tag", ["spades-round/2", "", None, 1])
def test_wrong_format_tag(doc, tag):
    doc["format"] = tag
    rejected(doc, "unknown record format")


def test_missing_format_tag(doc):
    del doc["format"]
    rejected(doc, "unknown record format None")


@pytest.mark.parametrize("text", ["", "{", "not json", "[1, 2", b"\xff\xfe"])
def test_not_json(text):
    with pytest.raises(RecordError, match="not JSON"):
        from_json(text)


@pytest.mark.parametrize("value", [[], "record", 3, None])
def test_not_an_object(value):
    with pytest.raises(RecordError, match="a round record is a JSON object"):
        replay(value)
    with pytest.raises(RecordError, match="a round record is a JSON object"):
        from_json(json.dumps(value))


@pytest.mark.parametrize(
    "key",
    ["rules", "hands", "dealer", "scores_before", "bags_before", "round_number", "bids",
     "passes", "tricks", "tricks_won", "result", "scores_after", "bags_after",
     "round_types", "nil_positions"],
)  # fmt: skip
def test_missing_keys(doc, key):
    del doc[key]
    rejected(doc, f"the record has no '{key}'")


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.__setitem__("rules", []), "'rules' has the wrong type"),
        (lambda d: d.__setitem__("hands", "N"), "'hands' has the wrong type"),
        (lambda d: d["hands"].__setitem__("E", 5), "'E' has the wrong type"),
        (lambda d: d["hands"].pop("S"), "the record has no 'S'"),
        (lambda d: d.__setitem__("dealer", 3), "'dealer' has the wrong type"),
        (lambda d: d.__setitem__("round_number", "1"), "'round_number' has the wrong type"),
        (lambda d: d.__setitem__("round_number", True), "'round_number' has the wrong type"),
        (lambda d: d.__setitem__("scores_before", [0]), "'scores_before' must be two whole"),
        (lambda d: d.__setitem__("scores_before", [0, 1.5]), "'scores_before' must be two whole"),
        (lambda d: d.__setitem__("bags_before", [True, 0]), "'bags_before' must be two whole"),
        (lambda d: d.__setitem__("bags_before", "0,0"), "'bags_before' has the wrong type"),
        (lambda d: d.__setitem__("bids", {}), "'bids' has the wrong type"),
        (lambda d: d["bids"].__setitem__(1, "E:3"), "bid 2 is not an object"),
        (lambda d: d["bids"][0].__setitem__("bid", "3"), "'bid' has the wrong type"),
        (lambda d: d["bids"][0].__setitem__("blind", 0), "'blind' has the wrong type"),
        (lambda d: d["bids"][0].pop("seat"), "the record has no 'seat'"),
        (lambda d: d.__setitem__("passes", None), "'passes' has the wrong type"),
        (lambda d: d.__setitem__("passes", ["N>2C3C"]), "a pass is not an object"),
        (lambda d: d.__setitem__("tricks", "..."), "'tricks' has the wrong type"),
        (lambda d: d["tricks"].__setitem__(2, []), "trick 3 is not an object"),
        (lambda d: d["tricks"][0].__setitem__("cards", "2C 3C"), "'cards' has the wrong type"),
        (lambda d: d["tricks"][0]["cards"].pop(), "trick 1 must have four cards"),
        (lambda d: d["tricks"][0]["cards"].__setitem__(1, 3), "trick 1: a card must be text"),
        (lambda d: d["tricks"][0].__setitem__("winner", None), "'winner' has the wrong type"),
        (lambda d: d["rules"].__setitem__("bogus", 1), "unknown rule option"),
        (lambda d: d["rules"].__setitem__("bag_limit", "10"), "bag_limit must be a whole"),
        (lambda d: d.__setitem__("dealer", "Q"), "is not a seat"),
        (lambda d: d["hands"].__setitem__("N", "AS XX"), "is not a card"),
        (lambda d: d.__setitem__("bags_before", [10, 0]), "bags carried"),
    ],
)
def test_bad_types_and_values(doc, mutate, message):
    mutate(doc)
    rejected(doc, message)


# ----- tampering at random: always a RecordError, never a crash ------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-20, 60)
    | st.text(max_size=6)
    | st.sampled_from(["N", "E", "S", "W", "AS", "2C", "bnil", "spades-round/1"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, prefix + (i,))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_random_tampering_is_rejected_cleanly(finished, exchanged, data):
    doc = copy.deepcopy(record_of(data.draw(st.sampled_from([finished, exchanged]))))
    all_paths = [p for p in paths(doc) if p]
    path = data.draw(st.sampled_from(all_paths))
    value = data.draw(JSON_VALUES)
    target = doc
    for p in path[:-1]:
        target = target[p]
    if data.draw(st.booleans()) and isinstance(target, dict):
        del target[path[-1]]
    else:
        target[path[-1]] = value
    text = json.dumps(doc)
    try:
        r = from_json(text)
    except RecordError as e:
        assert str(e)
    else:
        # Accepted only if it still describes the same consistent round (a rule
        # option left out takes its default).
        again = record_of(r)
        assert r.rules == Rules.from_dict(doc["rules"])
        assert {k: v for k, v in again.items() if k != "rules"} == {
            k: doc[k] for k in again if k != "rules"
        }


# ----- text form ---------------------------------------------------------------------------


def test_text_round_trip_of_a_finished_round(finished, exchanged):
    for done in (finished, exchanged):
        line = to_text(done)
        assert "\n" not in line
        r = from_text(line)
        assert record_of(r) == record_of(done)
        assert to_text(r) == line


def test_exchange_record_round_trips(exchanged):
    doc = record_of(exchanged)
    assert [p["seat"] for p in doc["passes"]] == ["S", "N", "N", "S"]
    assert record_of(from_json(to_json(exchanged))) == doc
    assert "pass:S>" in to_text(exchanged)


def test_tampered_pass_is_rejected(exchanged):
    doc = copy.deepcopy(record_of(exchanged))
    doc["passes"][0]["seat"], doc["passes"][1]["seat"] = "N", "S"
    rejected(doc, "illegal action in the record: it is South's turn")
    doc = copy.deepcopy(record_of(exchanged))
    doc["passes"].pop()
    rejected(doc, "trick 1: the leader should be")


def test_text_shape_matches_the_documented_example():
    # Dealer North, East/West 160 behind, so West may bid blind nil.
    r = RoundState(Rules(), N, ROTATING, scores_before=(120, -40), bags_before=(3, 5),
                   round_number=3)  # fmt: skip
    r.apply(Bid(E, 3))
    r.apply(Bid(S, 0))
    r.apply(Bid(W, 0, blind=True))
    r.apply(Bid(N, 2))
    line = to_text(r)
    parts = line.split(" ")
    assert parts[:6] == ["spades/1", "r3", "d:N", "s:120,-40", "b:3,5", "rules:default"]
    assert parts[6].startswith("h:") and len(parts[6][2:].split("/")) == 4
    assert parts[7:] == ["bids:E3,Sn,Wb,N2", "pass:-", "play:-"]
    r.apply(Play(E, parse_card("3C")))
    r.apply(Play(S, parse_card("4C")))
    assert to_text(r).endswith("play:3C4C")


def test_hand_text_is_bridge_style_spades_first():
    hand = parse_hand("AS KS JS 6S 2S QH 9H AD KC 9C 5C 4C 3C")
    assert _hand_text(hand) == "AKJ62.Q9.A.K9543"
    assert _parse_hand_text("AKJ62.Q9.A.K9543") == hand
    clubs_void = parse_hand("AS KS QS JS TS 9S 8S AH KH QH AD KD QD")
    assert _hand_text(clubs_void) == "AKQJT98.AKQ.AKQ.-"
    assert _parse_hand_text("AKQJT98.AKQ.AKQ.-") == clubs_void
    with pytest.raises(RecordError, match="four suits"):
        _parse_hand_text("AKQ.-.-")


def test_rules_in_text_form():
    rules = Rules(first_lead="two_of_clubs", blind_nil_pass=2, winning_goal=200,
                  losing_goal=-100, nil_tricks_count_for_team=False)  # fmt: skip
    r = random_round(rules, seed=5, dealer=E, scores_before=(0, 120))
    line = to_text(r)
    assert "rules:winning_goal=200,losing_goal=-100,blind_nil_pass=2," in line
    assert from_text(line).rules == rules
    assert record_of(from_text(line)) == record_of(r)


def unfinished_states():
    """(label, round) pairs stopped in each phase."""
    out = []
    r = RoundState(Rules(), E, deal_hands(3))
    out.append(("fresh", r.copy()))
    r.apply(Bid(S, 3))
    r.apply(Bid(W, 4))
    out.append(("mid-bidding", r.copy()))
    r.apply(Bid(N, 2))
    r.apply(Bid(E, 3))
    out.append(("bidding done", r.copy()))
    rng = random.Random(1)
    for _ in range(7):
        random_step(r, rng)
    out.append(("mid-trick", r.copy()))
    p = RoundState(Rules(blind_nil_pass=2), W, ROTATING, scores_before=(0, 150))
    p.apply(Bid(N, 0, blind=True))
    for n in (3, 4, 3):
        p.apply(Bid(p.to_act, n))
    out.append(("passing", p.copy()))
    p.apply(PassCards(N, parse_hand("AC JS")))
    out.append(("half passed", p.copy()))
    return out


UNFINISHED = ["fresh", "mid-bidding", "bidding done", "mid-trick", "passing", "half passed"]


def test_unfinished_states_cover_each_phase():
    assert [label for label, _ in unfinished_states()] == UNFINISHED
    phases = {r.phase for _, r in unfinished_states()}
    assert phases == {Phase.BIDDING, Phase.PLAYING, Phase.PASSING}


@pytest.mark.parametrize("label", UNFINISHED)
def test_text_form_of_an_unfinished_round_replays(label):
    r = dict(unfinished_states())[label]
    again = from_text(to_text(r))
    assert snapshot(again) == snapshot(r), label
    assert to_text(again) == to_text(r)


def test_text_form_keeps_a_look_at_the_cards():
    """South (North/South are 150 behind) looked at its cards before its turn to
    bid: replaying the line must not let South bid blind nil after all."""
    r = RoundState(Rules(), W, ROTATING, scores_before=(0, 150))
    r.apply(Bid(N, 3))
    r.apply(SeeCards(S))
    line = to_text(r)
    assert "bids:N3,Ss " in line
    again = from_text(line)
    assert again.cards_seen == r.cards_seen == [True, True, True, True]
    assert again.legal_actions(S) == r.legal_actions(S) == []
    assert again.actions == r.actions
    with pytest.raises(RecordError, match="blind nil must be bid before you look"):
        from_text(line.replace("bids:N3,Ss", "bids:N3,Ss,E3,Sb"))
    # Without the look, the same bids are fine.
    assert from_text(line.replace("bids:N3,Ss", "bids:N3,E3,Sb")).blind == [
        False, False, True, False,
    ]  # fmt: skip


@pytest.mark.parametrize(
    "line, match",
    [
        ("", "not a spades/1 line"),
        ("spades/2 r1 d:N s:0,0 b:0,0 rules:default h:-/-/-/- bids:- pass:- play:-",
         "not a spades/1"),
        ("spades/1 r1 d:N", "expected 10 fields"),
        ("spades/1 x1 d:N s:0,0 b:0,0 rules:default h:-.-.-.-/x/x/x bids:- pass:- play:-",
         "round number"),
    ],
)  # fmt: skip
def test_bad_text_lines(line, match):
    with pytest.raises(RecordError, match=match):
        from_text(line)


def test_tampered_text_lines(finished):
    line = to_text(finished)
    parts = line.split(" ")
    plays = parts[9].removeprefix("play:")
    # A card played twice.
    bad = " ".join(parts[:9] + ["play:" + plays[:2] + plays[:2] + plays[4:]])
    with pytest.raises(RecordError, match="illegal action in the line"):
        from_text(bad)
    # Too many plays.
    with pytest.raises(RecordError, match="the round is over"):
        from_text(line + "AS")
    # An unknown rule option.
    with pytest.raises(RecordError, match="unknown rule option"):
        from_text(line.replace("rules:default", "rules:bogus=1"))
    with pytest.raises(RecordError, match="must be True or False"):
        from_text(line.replace("rules:default", "rules:nil=yes"))
    with pytest.raises(RecordError, match="whole number"):
        from_text(line.replace("rules:default", "rules:bag_limit=ten"))
    with pytest.raises(RecordError):
        from_text(line.replace("d:W", "d:X"))
    with pytest.raises(RecordError):
        from_text(line.replace("s:0,0", "s:0"))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_random_text_tampering_is_rejected_cleanly(finished, exchanged, data):
    line = to_text(data.draw(st.sampled_from([finished, exchanged])))
    i = data.draw(st.integers(0, len(line) - 1))
    j = data.draw(st.integers(i, min(len(line), i + 4)))
    junk = data.draw(st.text(alphabet="NESWnb0123456789TJQKACDHS.,:/->_= r", max_size=4))
    tampered = line[:i] + junk + line[j:]
    try:
        from_text(tampered)
    except RecordError as e:
        assert str(e)


# ----- the engine's own examples --------------------------------------------------------------

MODULES = ["actions", "cards", "deal", "fast", "match", "record", "round_types", "rules",
           "scoring", "state", "tricks", "view"]  # fmt: skip
WITH_EXAMPLES = {"actions", "cards", "deal", "match", "round_types", "rules", "scoring", "state",
                 "tricks"}  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_engine_doctests(name):
    module = importlib.import_module(f"game.engine.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0
    if name in WITH_EXAMPLES:
        assert result.attempted > 0

"""Properties of whole seeded rounds played by random legal actions, under
random rule options (blind nil with and without the exchange, two of clubs
leads, bid caps and minimums, nil off)."""

from __future__ import annotations

import json
import random
import re
from itertools import combinations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from game.engine.actions import Bid, PassCards, Play, SeeCards
from game.engine.cards import FULL_DECK, cards_of, parse_card, partner_of
from game.engine.deal import deal_hands
from game.engine.fast import play_random, random_card
from game.engine.record import from_json, from_text, record_of, replay, to_json, to_text
from game.engine.rules import Rules
from game.engine.scoring import score_round
from game.engine.state import IllegalAction, Phase, RoundState
from game.engine.tricks import trick_winner
from game.engine.view import view_for
from tests.support.engine_steps import random_step, snapshot

CARD_TEXT = re.compile(r"^[2-9TJQKA][CDHS]$")


@st.composite
def rules_st(draw):
    nil = draw(st.booleans()) or draw(st.booleans())  # nil on 3 times out of 4
    blind_nil = nil and draw(st.sampled_from([True, True, False]))
    return Rules(
        nil=nil,
        blind_nil=blind_nil,
        blind_nil_pass=draw(st.sampled_from([0, 2])),
        blind_nil_min_deficit=draw(st.sampled_from([0, 100, 100, 200])),
        team_bid_cap_13=draw(st.booleans()),
        min_team_bid=draw(st.sampled_from([0, 0, 4, 8, 13])),
        first_lead=draw(st.sampled_from(["left_of_dealer", "two_of_clubs"])),
        nil_tricks_count_for_team=draw(st.booleans()),
        bag_penalty_removes_bag_points=draw(st.booleans()),
        bag_limit=draw(st.sampled_from([3, 10])),
    )


@st.composite
def round_st(draw):
    rules = draw(rules_st())
    scores = draw(
        st.sampled_from([(0, 0), (0, 150), (150, 0), (-120, 0), (320, 200), (40, -60)])
        | st.tuples(st.integers(-400, 600), st.integers(-400, 600))
    )
    bags = (draw(st.integers(0, rules.bag_limit - 1)), draw(st.integers(0, rules.bag_limit - 1)))
    return dict(
        rules=rules,
        dealer=draw(st.integers(0, 3)),
        hands=deal_hands(draw(st.integers(0, 10**9))),
        scores_before=scores,
        bags_before=bags,
        round_number=draw(st.integers(1, 30)),
    ), draw(st.integers(0, 2**32))


# ----- what each seat may see ----------------------------------------------------------------


def json_cards(node) -> int:
    """Every card named anywhere in a JSON-ready value (as a mask)."""
    if isinstance(node, str):
        return 1 << parse_card(node) if CARD_TEXT.match(node) else 0
    if isinstance(node, dict):
        return sum_or(json_cards(v) for v in node.values())
    if isinstance(node, list | tuple):
        return sum_or(json_cards(v) for v in node)
    return 0


def sum_or(masks) -> int:
    m = 0
    for x in masks:
        m |= x
    return m


def view_cards(v) -> int:
    """Cards in the SeatView's own fields, other than ``passed``."""
    m = (v.hand or 0) | v.received
    m |= sum_or(1 << c for c in v.trick)
    m |= sum_or(1 << c for t in v.tricks for c in t.cards)
    for a in v.legal_actions:
        if isinstance(a, Play):
            m |= 1 << a.card
        elif isinstance(a, PassCards):
            m |= a.cards
    return m


def check_views(r: RoundState) -> None:
    held = r.hands
    for seat in range(4):
        v = view_for(r, seat)
        d = v.to_dict()
        json.dumps(d)
        others = sum_or(held[o] for o in range(4) if o != seat)
        own_passes = sum_or(p.cards for p in r.passes if p.seat == seat)
        # A seat knows the cards it passed to partner, and nothing else of theirs.
        assert v.passed == own_passes
        assert view_cards(v) & others & ~own_passes == 0
        dd = dict(d, passed=[])
        assert json_cards(dd) & others & ~own_passes == 0
        assert json_cards(d["passed"]) == own_passes
        if r.cards_seen[seat]:
            assert v.hand == held[seat]
        else:
            assert r.blind_nil_eligible[seat] and r.phase is Phase.BIDDING
            assert v.hand is None and d["hand"] is None
        assert v.hand_counts == tuple(h.bit_count() for h in held)
        assert v.legal_actions == tuple(r.legal_actions(seat))
    spectator = view_for(r, None)
    d = spectator.to_dict()
    everything_held = sum_or(held)
    assert spectator.hand is None and d["hand"] is None
    assert spectator.passed == spectator.received == 0
    assert spectator.legal_actions == ()
    assert view_cards(spectator) & everything_held == 0
    assert json_cards(d) & everything_held == 0


# ----- legal actions are exactly the actions ``check`` accepts -------------------------------


def candidates(r: RoundState, rng: random.Random):
    for seat in range(4):
        yield SeeCards(seat)
        for n in range(14):
            yield Bid(seat, n)
        yield Bid(seat, 0, blind=True)
        yield Bid(seat, 2, blind=True)
        for c in range(52):
            yield Play(seat, c)
    seat = r.to_act
    hand = cards_of(r.hands[seat])
    for combo in combinations(hand, 2):
        yield PassCards(seat, (1 << combo[0]) | (1 << combo[1]))
    for _ in range(5):
        yield PassCards(seat, sum_or(1 << c for c in rng.sample(range(52), rng.choice([1, 2, 3]))))
        if len(hand) >= 2:
            yield PassCards(partner_of(seat), sum_or(1 << c for c in rng.sample(hand, 2)))


def check_legal_actions_complete(r: RoundState, rng: random.Random) -> None:
    legal = set()
    for seat in range(4):
        legal.update(r.legal_actions(seat))
    before = snapshot(r)
    accepted = set()
    for a in candidates(r, rng):
        try:
            r.check(a)
        except IllegalAction as e:
            assert str(e)
        else:
            accepted.add(a)
    assert snapshot(r) == before
    assert accepted == legal


def strip_looks(actions):
    return [a for a in actions if not isinstance(a, SeeCards)]


def same_state_except_looks(a: RoundState, b: RoundState) -> None:
    """Equal states, except that records do not keep SeeCards (a look before bidding)."""
    sa, sb = snapshot(a), snapshot(b)
    for s in (sa, sb):
        s["actions"] = strip_looks(s["actions"])
        del s["cards_seen"]
    assert sa == sb


# ----- whole rounds -------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(round_st())
def test_random_rounds(case):
    kwargs, policy_seed = case
    rules = kwargs["rules"]
    rng = random.Random(policy_seed)
    r = RoundState(**kwargs)
    assert r.cards_seen == [not e for e in r.blind_nil_eligible]
    steps = 0
    while not r.is_over:
        legal = r.legal_actions()
        assert legal, f"no legal action in {r.phase}"
        assert all(a.seat == r.to_act for a in legal if not isinstance(a, SeeCards))
        # Every legal action applies without error (on a copy).
        for a in legal:
            c = r.copy()
            c.apply(a)
        if steps % 3 == 0 or r.phase is not Phase.PLAYING:
            check_legal_actions_complete(r, rng)
            check_views(r)
            assert snapshot(from_text(to_text(r))) == snapshot(r)
        random_step(r, rng)
        steps += 1
        assert steps < 200
    check_views(r)
    assert r.legal_actions() == [] and all(r.legal_actions(s) == [] for s in range(4))

    # Thirteen tricks; each card played exactly once, by a seat that held it.
    assert len(r.tricks) == 13 and r.trick == []
    played = [c for t in r.tricks for c in t.cards]
    assert sorted(played) == list(range(52))
    assert r.hands == [0, 0, 0, 0]
    after_passes = list(r.hands_dealt)
    for p in r.passes:
        assert after_passes[p.seat] & p.cards == p.cards
        after_passes[p.seat] &= ~p.cards
        after_passes[partner_of(p.seat)] |= p.cards
    plays = [a for a in r.actions if isinstance(a, Play)]
    assert [a.card for a in plays] == played
    for a in plays:
        assert after_passes[a.seat] >> a.card & 1

    # Tricks won add up, and every trick went to its winner.
    assert sum(r.tricks_won) == 13
    assert r.tricks_won == [sum(t.winner == s for t in r.tricks) for s in range(4)]
    leader = r.tricks[0].leader
    for t in r.tricks:
        assert t.leader == leader
        assert t.winner == trick_winner(t.leader, t.cards)
        leader = t.winner
    for i, a in enumerate(plays):
        assert a.seat == (r.tricks[i // 4].leader + i % 4) % 4
    if rules.first_lead == "two_of_clubs":
        assert r.tricks[0].cards[0] == 0
        assert after_passes[r.tricks[0].leader] & 1
    else:
        assert r.tricks[0].leader == (r.dealer + 1) % 4

    event(f"blind nils: {sum(r.blind)}, passes: {len(r.passes)}")
    event(f"first lead: {rules.first_lead}, nil: {rules.nil}")
    # Blind nil only where allowed; the exchange only after blind nil.
    for s in range(4):
        assert not r.blind[s] or (r.blind_nil_eligible[s] and r.bids[s] == 0)
    expected_passers = []
    if rules.blind_nil_pass:
        for s in r.bid_order:
            if r.blind[s]:
                expected_passers += [s, partner_of(s)]
    assert [p.seat for p in r.passes] == expected_passers
    assert all(p.cards.bit_count() == rules.blind_nil_pass for p in r.passes)

    # The score is the scoring of the bids and tricks.
    assert r.result == score_round(
        rules, r.bids, r.blind, r.tricks_won, r.scores_before, r.bags_before
    )

    # Records round-trip and replay to the same state.
    doc = record_of(r)
    assert record_of(from_json(to_json(r))) == doc
    assert json.loads(to_json(r)) == doc
    assert record_of(from_text(to_text(r))) == doc
    assert to_text(from_text(to_text(r))) == to_text(r)
    same_state_except_looks(replay(doc), r)  # the JSON record keeps no looks
    assert snapshot(from_text(to_text(r))) == snapshot(r)
    assert doc["round_types"] == [r.round_type(s).label for s in range(4)]


# ----- the fast path agrees with RoundState ------------------------------------------------------


def test_random_card_picks_by_rank_within_the_mask():
    mask = sum_or(1 << c for c in (3, 17, 40, 51))
    n = 4
    assert [random_card(mask, (k + 0.5) / n) for k in range(n)] == [3, 17, 40, 51]
    assert random_card(mask, 0.0) == 3
    assert random_card(mask, 0.999999) == 51
    assert random_card(1 << 22, 0.7) == 22


@settings(max_examples=80, deadline=None)
@given(
    deal_seed=st.integers(0, 10**9),
    dealer=st.integers(0, 3),
    two_of_clubs=st.booleans(),
    warmup=st.integers(0, 30),
    stream_seed=st.integers(0, 2**32),
)
def test_fast_path_matches_round_state(deal_seed, dealer, two_of_clubs, warmup, stream_seed):
    rules = Rules(first_lead="two_of_clubs" if two_of_clubs else "left_of_dealer")
    r = RoundState(rules, dealer, deal_hands(deal_seed))
    for _ in range(4):
        r.apply(Bid(r.to_act, 3))
    # Play some whole tricks first (any play), so the fast path starts mid-round.
    warm = random.Random(deal_seed)
    while len(r.tricks) * 4 + len(r.trick) < warmup or r.trick:
        r.apply(warm.choice(r.legal_actions()))
    won_before = list(r.tricks_won)

    hands = list(r.hands)
    won_fast = play_random(
        hands, r.to_act, random.Random(stream_seed).random, r.spades_broken, r.two_of_clubs_lead()
    )
    assert hands == [0, 0, 0, 0]

    stream = random.Random(stream_seed)
    while not r.is_over:
        # A forced two of clubs lead draws no number on the fast path.
        card = 0 if r.two_of_clubs_lead() else random_card(r.legal_play_mask(), stream.random())
        assert Play(r.to_act, card) in r.legal_actions()
        r.play_card(card)
    assert [a - b for a, b in zip(r.tricks_won, won_before, strict=True)] == won_fast
    assert sum(won_fast) == 13 - sum(won_before)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**9), st.integers(0, 2**32))
def test_checked_and_unchecked_paths_agree(deal_seed, stream_seed):
    """``apply(Play)`` and ``play_card`` build the same state."""
    a = RoundState(Rules(), 0, deal_hands(deal_seed))
    for _ in range(4):
        a.apply(Bid(a.to_act, 3))
    b = a.copy()
    rng = random.Random(stream_seed)
    while not a.is_over:
        card = random_card(a.legal_play_mask(), rng.random())
        a.apply(Play(a.to_act, card))
        b.play_card(card)
        assert snapshot(a) == snapshot(b)
    assert a.legal_play_mask() == 0 or a.is_over
    assert sum_or(1 << c for t in a.tricks for c in t.cards) == FULL_DECK

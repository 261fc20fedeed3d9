"""The double-dummy analysis of a round's play (game/replays/analysis.py) against a
brute-force reference on small endings, and on a round worked out by hand."""

from __future__ import annotations

import random
from functools import cache

import pytest

from game.engine.cards import format_card
from game.engine.scoring import score_round
from game.engine.tricks import legal_play_mask_for, trick_winner
from game.replays import analysis
from game.replays.analysis import (
    LARGE_FROM,
    AnalysisError,
    OverBudget,
    Values,
    alternatives,
    analyse_play,
    mark_of,
    spots_of,
)
from game.replays.rounds import analyse_round
from tests.support.replay_rounds import ENDING, FILLER, played_record, written_record


def reference(doc: dict, start: int):
    """Plain minimax over every card (no pruning, no solver): a function of a
    position giving North/South's points gap and, separately, their tricks in
    the round under best play by all four seats for each figure."""
    r, _ = spots_of(doc)
    rules, scores, bags = r.rules, r.scores_before, r.bags_before
    bids = tuple(b or 0 for b in r.bids)
    blind = tuple(r.blind)

    @cache
    def solve(hands: tuple, leader: int, trick: tuple, broken: bool, won: tuple, points: bool):
        if not trick and not any(hands):
            if points:
                ns, ew = score_round(rules, bids, blind, won, scores, bags)
                return ns.points - ew.points
            return won[0] + won[2]
        seat = (leader + len(trick)) & 3
        legal = legal_play_mask_for(hands[seat], trick, broken, False)
        values = []
        for c in range(52):
            if not legal >> c & 1:
                continue
            h = list(hands)
            h[seat] &= ~(1 << c)
            t, lead, w = (*trick, c), leader, list(won)
            if len(t) == 4:
                lead = trick_winner(leader, t)
                w[lead] += 1
                t = ()
            values.append(solve(tuple(h), lead, t, broken or c >= 39, tuple(w), points))
        return max(values) if seat % 2 == 0 else min(values)

    return solve


ROUNDS = 16


@pytest.mark.parametrize("bot", ["BIS+SRP", "BIS+Random", "BIS0+WRP"])
def test_losses_equal_a_brute_force_reference_on_small_endings(bot: str) -> None:
    """Every card of the last k <= 4 tricks of random rounds: the points and the
    tricks it gives away are the reference's, with 0 disagreements."""
    rng = random.Random(44)
    checked = nils = nonzero = 0
    disagreements = []
    for i in range(ROUNDS):
        seed = rng.randrange(10**6)
        doc = played_record(seed, bot)
        k = 1 + i % 4
        first = 14 - k
        a = analyse_play(doc, first_trick=first)
        solve = reference(doc, first)
        _, spots = spots_of(doc)
        nils += any(b["bid"] == 0 for b in doc["bids"])
        for spot, card in zip(spots[4 * (first - 1) :], a["cards"], strict=True):
            sign = 1 if spot.seat % 2 == 0 else -1
            losses = []
            for points in (True, False):
                before = solve(spot.hands, spot.leader, spot.trick, spot.spades_broken,
                               spot.tricks_won, points)  # fmt: skip
                h = list(spot.hands)
                h[spot.seat] &= ~(1 << spot.card)
                t, lead, w = (*spot.trick, spot.card), spot.leader, list(spot.tricks_won)
                if len(t) == 4:
                    lead = trick_winner(spot.leader, t)
                    w[lead] += 1
                    t = ()
                after = solve(tuple(h), lead, t, spot.spades_broken or spot.card >= 39,
                              tuple(w), points)  # fmt: skip
                losses.append(sign * (before - after))
            got = (card["points_lost"], card["tricks_lost"])
            checked += 1
            nonzero += got != (0, 0)
            if got != tuple(losses) or card["card"] != format_card(spot.card):
                disagreements.append((seed, spot.index, got, losses))
            assert card["mark"] == mark_of(card["points_lost"])
    assert disagreements == []
    assert checked == sum(4 * (1 + i % 4) for i in range(ROUNDS))
    assert nonzero > 0, "some cards should give something away"
    assert nils > 0, "some rounds should have a nil (the points objective's hardest part)"


def test_a_round_worked_by_hand() -> None:
    """The ending of a round worked out by hand (North/South's points gap as
    N/S points minus E/W's; E/W 4 tricks of 6 bid, S 5 of 4, N nil untouched):

    Trick 10, after East's JH. South's AH keeps the nil (North's KH falls under
    it), but then E/W take two of the last three tricks (KD, AC or a heart) and
    make 6: N/S 40 + 3 bags + 100 = 143, E/W 60, gap 83. South's 5H forces
    North's KH over the jack (a forced overtake: the nil is set), and then
    N/S take three of the four tricks and set E/W: N/S 40 + 4 bags - 100 =
    -56, E/W -60, gap 4. The 5H gives away 79 points and no trick (N/S take 8
    either way under the trick count): large.

    Trick 12, South leads AH (a 9D lead instead lets West's KD and AC make
    E/W's contract: 121 points and a trick). West, already set, discards the
    KD instead of a club: South's 9D takes the last trick, a fifth bag for
    N/S: -55 instead of -56, 1 point and 1 trick: small.

    East's JH lead at trick 10 loses a trick under the trick count (N/S could
    take 8 by giving up the nil rather than 7 after the KC lead) but nothing
    in points: its mark is none. Every other card is forced or as good as
    the best.
    """
    doc = written_record([0, 3, 4, 3], f"{FILLER}  {ENDING}")
    assert doc["tricks_won"] == [1, 3, 8, 1]
    a = analyse_play(doc, first_trick=10)
    got = [
        (c["seat"], c["card"], c["points_lost"], c["tricks_lost"], c["mark"]) for c in a["cards"]
    ]
    assert got == [
        ("E", "JH", 0, 1, "none"), ("S", "5H", 79, 0, "large"),
        ("W", "2H", 0, 0, "none"), ("N", "KH", 0, 0, "none"),
        ("N", "2C", 0, 0, "none"), ("E", "KC", 0, 0, "none"),
        ("S", "2S", 0, 0, "none"), ("W", "QC", 0, 0, "none"),
        ("S", "AH", 0, 0, "none"), ("W", "KD", 1, 1, "small"),
        ("N", "3C", 0, 0, "none"), ("E", "7H", 0, 0, "none"),
        ("S", "9D", 0, 0, "none"), ("W", "AC", 0, 0, "none"),
        ("N", "4C", 0, 0, "none"), ("E", "8H", 0, 0, "none"),
    ]  # fmt: skip
    assert a["values"][37] == 83 and a["values"][38] == 4
    assert a["values"][52] == -55 - -60  # the round as played
    assert a["values"][:36] == [None] * 36  # not asked for
    by_card = {x["card"]: x for x in alternatives(doc, 37)}
    assert (by_card["AH"]["points_lost"], by_card["AH"]["value"]) == (0, 83)
    assert by_card["5H"]["played"] and by_card["5H"]["points_lost"] == 79
    lead = {x["card"]: (x["points_lost"], x["tricks_lost"]) for x in alternatives(doc, 44)}
    assert lead == {"AH": (0, 0), "9D": (121, 1)}
    assert 121 >= LARGE_FROM > 1


def test_the_whole_round_bids_and_makeable_tricks() -> None:
    doc = written_record([0, 3, 4, 3], f"{FILLER}  {ENDING}")
    a = analyse_round(doc)
    assert len(a["cards"]) == 52 and None not in a["values"] and None not in a["tricks"]
    # the ending's figures do not depend on where the analysis starts
    assert a["cards"][36:] == analyse_play(doc, first_trick=10)["cards"]
    assert a["makeable"] == [a["tricks"][0], 13 - a["tricks"][0]]
    assert [b["seat"] for b in a["bids"]] == ["E", "S", "W", "N"]
    assert [b["bid"] for b in a["bids"]] == [3, 4, 3, 0]
    for b in a["bids"]:
        assert 0 <= b["nil_probability"] <= 1 and b["takes"] >= 0
        assert 0 <= b["bis_bid"] <= 13


def test_a_round_is_analysed_with_the_solver_table_the_settings_give(settings) -> None:
    from bots import solver_compiled

    doc = written_record([0, 3, 4, 3], f"{FILLER}  {ENDING}")
    want = analyse_round(doc)  # the default table, 2**22 entries
    rows = solver_compiled._shared_table()[0].shape[0]
    assert rows == (1 << 22) // solver_compiled.BUCKET
    settings.SPADES_ANALYSIS_TABLE_BITS = 17
    try:
        got = analyse_round(doc)
        rows = solver_compiled._shared_table()[0].shape[0]
        assert rows == (1 << 17) // solver_compiled.BUCKET
    finally:
        solver_compiled.use_table_bits(solver_compiled.TT_BITS)
    assert got["cards"] == want["cards"] and got["values"] == want["values"]


def test_a_round_that_is_not_finished_is_refused() -> None:
    doc = played_record(3)
    doc["tricks"] = doc["tricks"][:12]
    with pytest.raises(AnalysisError):
        analyse_play(doc)
    with pytest.raises(AnalysisError):
        alternatives(played_record(3), 52)


def test_the_per_card_figures_are_those_of_the_points_search_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The points searched with the trick count's bounds first (bots/points_steps.py)
    change no figure: twelve whole rounds, five with a nil, analysed as now and
    with the points solver alone (as before it)."""
    docs = [played_record(seed) for seed in range(12)]
    now = [analyse_play(d) for d in docs]
    monkeypatch.setattr(analysis, "SteppedPoints", lambda points, tricks: points)
    for doc, a in zip(docs, now, strict=True):
        before = analyse_play(doc)
        assert (a["cards"], a["values"], a["tricks"]) == (
            before["cards"], before["values"], before["tricks"]
        )  # fmt: skip
    assert sum(any(b["bid"] == 0 for b in d["bids"]) for d in docs) >= 5


def test_a_round_past_its_budget_is_marked_not_analysed(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = played_record(4)  # a nil round, about 2 s
    with pytest.raises(OverBudget, match="not analysed within the budget"):
        analyse_play(doc, budget=0.0)
    assert issubclass(OverBudget, AnalysisError)  # what the stored analysis keeps as its error
    want = analyse_play(doc, budget=None)
    # Searches stopped at their node limit and asked again change nothing: the
    # first limits here are 100,000 nodes (until the speed is measured).
    made: list[Values] = []

    def kept(*args: object) -> Values:
        made.append(Values(*args))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr(analysis, "NODES_A_SECOND", 1)
    monkeypatch.setattr(analysis, "Values", kept)
    got = analyse_play(doc, budget=600.0)
    assert made[0].stops > 0
    assert (got["cards"], got["values"]) == (want["cards"], want["values"])

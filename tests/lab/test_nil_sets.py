"""The nil-set audit (lab/training/nil_sets.py): who led the trick that set a nil, and the
replayed games are the tournament's."""

from __future__ import annotations

from bots.registry import make_bot
from game.engine.record import from_text
from lab.tournaments.tournament import TournamentConfig, play_game
from lab.training.nil_sets import NilSetCounts, count_round, replay_game, set_nil_leader
from tests.support.positions import ISSUE_ROUND


def test_set_nil_leader_names_partners_lead() -> None:
    r = from_text(ISSUE_ROUND)
    assert set_nil_leader(r, 1) == "partner"  # East's nil, set by the ace on West's 9D
    counts = NilSetCounts()
    count_round(r, (1, 3), counts)
    assert (counts.nils, counts.set, counts.led_by["partner"]) == (1, 1, 1)


def test_replayed_games_are_the_tournaments_games() -> None:
    config = TournamentConfig("BIS+SRP", "RB+SRP", 4, duplicate=True, seed=3)
    a, b = make_bot(config.ns), make_bot(config.ew)
    total = NilSetCounts()
    nils = 0
    for g in range(config.games):
        rec = play_game(config, g, a, b)
        ca, _ = replay_game(config, g, a, b)
        total.add(ca)
        side_a = (1, 3) if rec["swapped"] else (0, 2)
        nils += sum(
            1 for rd in rec["rounds"] for s in side_a if rd["bids"][s] == 0 and not rd["blind"][s]
        )
    assert total.nils == nils > 0
    # Every BIS nil carries the probability BIS bid it with, within 0..1.
    assert sum(cell[0] for cell in total.bins) == nils
    assert 0.0 < sum(cell[2] for cell in total.bins) / nils <= 1.0

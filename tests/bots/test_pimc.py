"""Perfect-information Monte Carlo play: sampled deals, each solved exactly."""

from __future__ import annotations

import random

import pytest

from bots import pimc
from bots.pimc import PIMC, PIMCSearch
from bots.registry import make_bot
from bots.solver import PointsObjective, Position, Solver
from bots.srp import SRP
from game.engine.actions import Play
from game.engine.cards import parse_card
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.tricks import winning_card
from game.engine.view import view_for
from tests.support.deals import played_round
from tests.support.positions import endgame


def reference_gap(view, hands, card) -> int:  # noqa: ANN001
    """The same points gap by hand: the pure-Python solver after ``card``."""
    after = list(hands)
    after[view.seat] ^= 1 << card
    trick, leader, won = [*view.trick, card], view.leader, list(view.tricks_won)
    if len(trick) == 4:
        _, leader = winning_card(leader, trick)
        won[leader] += 1
        trick = []
    bids = [b or 0 for b in view.bids]
    objective = PointsObjective(view.rules, bids, view.blind, won, view.scores, view.bags)
    p = Position(tuple(after), leader, tuple(trick), view.spades_broken or card >= 39)
    gap = Solver(objective).value(p)
    return gap if view.seat % 2 == 0 else -gap


@pytest.mark.parametrize(("seed", "stop_at_play"), [(3, 33), (5, 30), (9, 28), (21, 32)])
def test_means_are_the_reference_solvers_on_the_same_deals(seed: int, stop_at_play: int) -> None:
    r = played_round(seed, stop_at_play=stop_at_play)
    view = view_for(r, r.to_act)
    search = PIMCSearch(view, sampling="uniform")
    if len(search.groups) < 2:
        pytest.skip("one choice: nothing to search")
    result = search.run(random.Random(seed), budget=None, samples=6)
    # The same deals again (the sampler draws them from the same seed).
    again = PIMCSearch(view, sampling="uniform")
    rng = random.Random(seed)
    totals = dict.fromkeys(search.groups, 0)
    for _ in range(6):
        hands = again.sampler.sample(rng)
        for card in search.groups:
            totals[card] += reference_gap(view, hands, card)
    assert result.samples == 6 and result.solver_calls == 6 * len(search.groups)
    assert result.means == {c: t / 6 for c, t in totals.items()}
    assert result.means[result.card] == max(result.means.values())


def test_pimc_cashes_the_ace_it_needs_for_the_contract() -> None:
    view = view_for(endgame(), 0)
    result = PIMCSearch(view).run(random.Random(3), budget=None, samples=20)
    assert result.card == parse_card("AH")
    assert result.means[parse_card("2C")] < result.means[parse_card("AH")] - 30


def test_out_of_time_it_plays_srp_and_with_a_sample_count_it_searches() -> None:
    r = played_round(5, stop_at_play=30)
    view = view_for(r, r.to_act)
    player = PIMC(samples=4)
    assert player.needs_search(view)
    srp_card = SRP().play(view, random.Random(4))
    assert player.play_within(view, random.Random(4), 0.0) == srp_card
    assert player.last_pimc is not None and player.last_pimc.samples == 0
    card = player.play_within(view, random.Random(4), None)
    assert player.last_pimc.samples == 4 and card == player.last_pimc.card


def test_under_a_budget_a_solve_stops_at_the_node_limit_of_the_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A minute's budget at 10 nodes a second: 600 nodes, too few for any deal
    # here, so the solve stops on its node count, not the clock, and SRP plays.
    r = played_round(5, stop_at_play=30)
    view = view_for(r, r.to_act)
    monkeypatch.setattr(pimc, "NODES_PER_SECOND", 10)
    result = PIMCSearch(view).run(random.Random(4), budget=60.0)
    assert result.samples == 0 and result.solver_calls == 1 and result.elapsed < 30
    srp_card = SRP().play(view, random.Random(4))
    assert PIMC().play_within(view, random.Random(4), 60.0) == srp_card
    # With nodes enough for the time left the same budget searches.
    monkeypatch.setattr(pimc, "NODES_PER_SECOND", 10**9)
    player = PIMC(samples=2)
    player.play_within(view, random.Random(4), 60.0)
    assert player.last_pimc is not None and player.last_pimc.samples == 2


def test_bis_pimc_is_registered_and_plays_legal_cards() -> None:
    bot = make_bot("BIS+PIMC")
    assert bot.player.name == "PIMC" and isinstance(bot.player, PIMC)
    bot.player.budget = 0.05  # early tricks fall back to SRP, later ones search
    srp = make_bot("BIS+SRP")
    rng = random.Random(1)
    r = RoundState(Rules(), dealer=1, hands=deal_hands("pimc-legal/1"))
    searched = 0
    while r.phase is not Phase.DONE:
        seat = r.to_act
        view = view_for(r, seat)
        bot.player.last_pimc = None
        action = (bot if seat % 2 == 0 else srp).act(view, rng)
        if r.phase is Phase.PLAYING and seat % 2 == 0:
            assert isinstance(action, Play)
            searched += bot.player.last_pimc is not None and bot.player.last_pimc.samples > 0
        r.apply(action)  # raises on an illegal card
    assert r.result is not None and searched > 0

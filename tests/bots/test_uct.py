"""Determinized UCT and the sampler of hidden hands."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace
from typing import Any

import pytest

from bots.knowledge import Knowledge
from bots.pimc import PIMC, PIMCSearch
from bots.registry import make_bot
from bots.sampling import ImpossibleDeal, Sampler
from bots.srp import SRP
from bots.uct import UCT, UCTSearch, uct_search
from game.engine.actions import Play
from game.engine.cards import parse_card, parse_hand
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for
from tests.support.deals import check_deal, played_round
from tests.support.positions import endgame


def legal_cards(view: SeatView) -> set[int]:
    return {a.card for a in view.legal_actions if isinstance(a, Play)}


# ----- the sampler -----------------------------------------------------------------


def test_samples_respect_voids_counts_and_unseen_cards() -> None:
    rng = random.Random(5)
    checked_voids = 0
    for seed in range(12):
        r = played_round(seed, stop_at_play=rng.randrange(8, 48))
        view = view_for(r, r.to_act)
        k = Knowledge(view)
        sampler = Sampler.from_view(view, k)
        for _ in range(40):
            checked_voids += check_deal(sampler.sample(rng), view, k)
    assert checked_voids > 0


def test_sampler_keeps_known_cards_and_is_uniform() -> None:
    unseen = parse_hand("2H 3H 4H 5H")
    s = Sampler(0, parse_hand("AS AH"), unseen, (2, 2, 1, 1), (0, 0, 0, 0))
    rng = random.Random(1)
    where = Counter()
    for _ in range(3000):
        hands = s.sample(rng)
        for seat in (1, 2, 3):
            if hands[seat] >> parse_card("2H") & 1:
                where[seat] += 1
    # East holds two of the four cards: the two of hearts is there half the time.
    assert abs(where[1] / 3000 - 0.5) < 0.04
    assert abs(where[2] / 3000 - 0.25) < 0.04
    fixed = Sampler(0, 0, unseen, (0, 2, 1, 1), (0, 0, 0, 0), fixed={2: parse_hand("5H")})
    assert all(fixed.sample(random.Random(i))[2] == parse_hand("5H") for i in range(20))
    with pytest.raises(ImpossibleDeal):
        Sampler(0, 0, unseen, (0, 2, 1, 1), (0, 0b0100, 0b0100, 0))  # only West may hold hearts


# ----- UCT ----------------------------------------------------------------------------


def test_uct_cashes_the_ace_it_needs_for_the_contract() -> None:
    view = view_for(endgame(), 0)
    result = uct_search(view, random.Random(3), budget=None, iterations=60)
    assert result.card == parse_card("AH")
    # With the ace, North/South make 6 whoever holds the high club: +60 or +61
    # against +61 or +60. Leading the two of clubs is set (-60 against +62)
    # unless South holds both high clubs.
    assert -1 <= result.means[parse_card("AH")] <= 1
    assert result.means[parse_card("2C")] < result.means[parse_card("AH")] - 40


def choice_position(stop_at_play: int = 33) -> SeatView:
    """The first seeded round (from seed 7) where the seat to act mid-trick with five
    tricks left has more than one real choice: found, not fixed, so that a change of
    the bots' bids or play cannot leave these tests a forced card."""
    for seed in range(7, 60):
        r = played_round(seed, stop_at_play=stop_at_play)
        view = view_for(r, r.to_act)
        if len(UCTSearch(view).groups) > 1:
            return view
    raise AssertionError("no round with a choice")


def test_statistics_and_iteration_budget() -> None:
    view = choice_position()
    result = uct_search(view, random.Random(7), budget=None, iterations=37)
    assert result.iterations == 37 and result.samples == 37
    assert sum(result.visits.values()) == 37
    assert result.card in legal_cards(view)
    assert set(result.means) <= set(result.visits)
    assert all(n > 0 for n in result.visits.values()) or len(result.visits) > 37
    # Equivalent cards are one choice; every legal card is in some group.
    grouped = {c for cards in result.equivalents.values() for c in cards}
    assert grouped == legal_cards(view)


@pytest.mark.parametrize("seed", [3, 9, 16])
def test_remembered_deals_change_nothing_but_the_work(seed: int) -> None:
    # Three tricks left: every hand fits the solver, so a deal's value is remembered.
    r = played_round(seed, stop_at_play=40 + seed % 4)
    view = view_for(r, r.to_act)
    remembered = UCTSearch(view)
    solved = UCTSearch(view)
    assert remembered.memo is not None and len(remembered.groups) > 1
    solved.memo = None  # solve every iteration afresh
    a = remembered.run(random.Random(seed), budget=None, iterations=1500)
    b = solved.run(random.Random(seed), budget=None, iterations=1500)
    assert (a.card, a.visits, a.means) == (b.card, b.visits, b.means)
    assert b.solver_calls == 1500
    assert a.solver_calls == remembered.remembered_count < 1500
    # With more cards than the solver takes, iterations play out first: no memo.
    early = view_for(played_round(seed, stop_at_play=20), 0)
    if early.to_act == early.seat:
        assert UCTSearch(early).memo is None


def test_paired_root_plays_every_card_on_the_same_deals() -> None:
    view = choice_position()
    search = UCTSearch(view, root="paired")
    k = len(search.groups)
    assert k > 1
    dealt: list[tuple[int, ...]] = []
    played: list[tuple[int, tuple[int, ...]]] = []
    sample, simulate = search.sampler.sample, search._simulate

    def sample_and_note(rng: random.Random) -> list[int]:
        hands = sample(rng)
        dealt.append(tuple(hands))
        return hands

    def simulate_and_note(hands: list[int], card: int, rng: random.Random) -> float:
        played.append((card, tuple(hands)))
        return simulate(hands, card, rng)

    search.sampler.sample = sample_and_note  # type: ignore[method-assign]
    search._simulate = simulate_and_note  # type: ignore[method-assign]
    result = search.run(random.Random(7), budget=None, iterations=5 * k + k - 1)
    # The iteration budget counts playouts and is spent in whole deals.
    assert (result.iterations, result.samples) == (5 * k, 5)
    assert set(result.visits.values()) == {5}
    assert [cards for _, cards in played] == [d for d in dealt for _ in range(k)]
    assert all({c for c, d in played if d == deal} == set(search.groups) for deal in dealt)
    assert result.card == max(result.means, key=lambda c: (result.means[c], -c))
    # Fewer iterations than choices: still one whole deal.
    small = UCTSearch(view, root="paired").run(random.Random(7), budget=None, iterations=1)
    assert (small.iterations, small.samples) == (k, 1)


def test_paired_root_finds_the_contract_and_stops_on_time(monkeypatch: pytest.MonkeyPatch) -> None:
    view = view_for(endgame(), 0)
    result = uct_search(view, random.Random(3), budget=None, iterations=60, root="paired")
    assert result.card == parse_card("AH") and result.samples == 30
    # The two of clubs is set unless South holds both high clubs (1 deal in 6).
    assert result.means[parse_card("2C")] < result.means[parse_card("AH")] - 30
    # A time budget: the deal the deadline cuts short is left out, so the means
    # stand on the same deals. The clock is a counter: one tick a reading.
    clock = iter(range(1_000_000))
    monkeypatch.setattr("bots.uct.time", SimpleNamespace(perf_counter=lambda: next(clock)))
    r = played_round(5, stop_at_play=8)  # the third trick: SRP playouts, then solves
    search = UCTSearch(view_for(r, r.to_act), root="paired")
    k = len(search.groups)
    timed = search.run(random.Random(1), budget=2.5 * k)
    assert timed.samples == 2 and timed.iterations == 2 * k
    assert set(timed.visits.values()) == {2}


@pytest.mark.parametrize("root", ["ucb", "paired"])
def test_a_search_out_of_time_plays_srp(root: str) -> None:
    r = played_round(5, stop_at_play=8)  # the third trick: several choices
    view = view_for(r, r.to_act)
    player = UCT(13, root=root, iterations=26)
    assert player.needs_search(view)
    srp_card = SRP().play(view, random.Random(4))
    assert player.play_within(view, random.Random(4), 0.0) == srp_card
    assert player.last is not None and player.last.iterations == 0
    # With its iteration budget alone, it searches and plays the best card found.
    card = player.play_within(view, random.Random(4), None)
    assert player.last.samples > 0 and card == player.last.card


@pytest.mark.parametrize("make_player", [lambda: UCT(13, iterations=26), lambda: PIMC(samples=4)])
def test_the_budget_counts_from_the_call_setting_up_included(
    make_player: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A live table's budget is the time to its deadline: building the search
    # (sampler tables, the deal's setup) spends it too, so the search gets
    # what is left. The clock moves only when the search is built.
    now = [100.0]
    fake_time = SimpleNamespace(perf_counter=lambda: now[0])
    monkeypatch.setattr("bots.uct.time", fake_time)
    monkeypatch.setattr("bots.pimc.time", fake_time)
    budgets: list[float | None] = []
    for search_class in (UCTSearch, PIMCSearch):
        built, run = search_class.__init__, search_class.run

        def slow_build(self: Any, *args: Any, _built: Any = built, **kwargs: Any) -> None:
            _built(self, *args, **kwargs)
            now[0] += 0.3

        def spy(self: Any, rng: Any, budget: Any, count: Any, _run: Any = run) -> Any:
            budgets.append(budget)
            return _run(self, rng, None, count)  # the count alone: the fake clock stands still

        monkeypatch.setattr(search_class, "__init__", slow_build)
        monkeypatch.setattr(search_class, "run", spy)
    r = played_round(5, stop_at_play=8)
    view = view_for(r, r.to_act)
    player = make_player()
    player.play_within(view, random.Random(4), 1.0)
    assert budgets == [pytest.approx(0.7)]
    budgets.clear()
    player.play_within(view, random.Random(4), 0.2)  # set-up outlasted the budget
    assert budgets == [0.0]


def test_search_needs_a_budget_and_the_seat_to_play() -> None:
    r = played_round(2, stop_at_play=40)
    view = view_for(r, r.to_act)
    with pytest.raises(ValueError):
        UCTSearch(view).run(random.Random(0), budget=None, iterations=None)
    with pytest.raises(ValueError):
        UCTSearch(view_for(r, (r.to_act + 1) & 3))
    with pytest.raises(ValueError):
        UCTSearch(view, root="all")


@pytest.mark.parametrize("policy", ["srp", "fast"])
def test_uct_bots_play_only_legal_cards(policy: str) -> None:
    rules = Rules()
    for seed in range(2):
        rng = random.Random(seed)
        r = RoundState(rules, dealer=seed, hands=deal_hands(f"uct-legal/{seed}"))
        uct = make_bot("BIS+UCT7")
        uct.player = UCT(7, iterations=6, policy=policy)
        srp = make_bot("BIS+SRP")
        while r.phase is not Phase.DONE:
            seat = r.to_act
            view = view_for(r, seat)
            action = (uct if seat % 2 == 0 else srp).act(view, rng)
            if r.phase is Phase.PLAYING:
                assert isinstance(action, Play) and action.card in legal_cards(view)
            r.apply(action)  # raises IllegalAction on an illegal card
        assert r.result is not None


def test_uct_plays_srp_before_its_last_tricks_and_is_registered() -> None:
    r = played_round(4, stop_at_play=5)
    view = view_for(r, r.to_act)
    assert UCT(3, iterations=5).play(view, random.Random(0)) == SRP().play(view, random.Random(0))
    for x in (3, 5, 7, 9, 11, 13):
        bot = make_bot(f"BIS+UCT{x}")
        assert bot.player.name == f"UCT{x}" and bot.player.tricks == x
        assert make_bot(f"BIS+UCT{x}b").player.tricks == x
        paired = make_bot(f"BIS+UCT{x}p").player
        assert (paired.name, paired.tricks, paired.root) == (f"UCT{x}p", x, "paired")
    # UCT13 searches from the round's first trick.
    assert make_bot("BIS+UCT13").player.in_search_phase(view)
    assert not make_bot("BIS+UCT11").player.in_search_phase(view)

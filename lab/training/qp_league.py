"""QP's self-play against a league (issue 62): SRP and earlier networks as opponents.

Self-play alone (``lab.training.qp_self``) teaches QP to beat its own copies;
the issue's measure is QP beside BIS against SRP, where QP still loses points
in contracts. Here a share of an iteration's rounds is played by the learning
network at one partnership (the side drawn per round) against an opponent at
the other: the compiled SRP, or an earlier network of the league (the weights
the run started from, and snapshots of the run every few iterations, as SPB's
pool of earlier versions). Only the learner's two seats give rows, labelled by
the same λ-return as in self-play, so the values learned are those of the
positions QP meets against that opponent. The rest of the rounds stay
self-play, so that QP still sees itself at every seat.

Branched (``branch``): a share of the learner's decisions with a choice also
has every legal card played on the true deal and the round played out from
there, the learner greedy at its seats and the opponent at the others; each
card's label is that ending's score. The cards of a decision share the deal,
so their differences are the worth of each card against this opponent with
little of the deal's luck in them: one step of policy improvement against the
opponent, as ``lab.training.qp_diagnose`` measures where SRP's card is better.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from bots.bits import low_bit
from bots.learned.features import PLAY_FEATURES
from bots.learned.mlp import MLP, read_mlp
from bots.srp_compiled import BIDS, DONE, LEADER, POS, WON, legal_mask, play_card, srp_play
from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.fast_compiled import _uniform, score_points
from lab.training.qp_self import (
    BRANCH_ROWS,
    ROWS_PER_ROUND,
    RULES_ARRAY,
    _decide,
    branch_card,
    net_arrays,
    selfplay_round,
)

SELF, SRP_OPPONENT = -2, -1  # a round's opponent; 0.. are the league's networks


@njit(cache=True)
def _opponent_card(st, seat, order_card, order_seat, n, bags, opp, use_srp, sure_t, rng, row):
    """The opponent's card at ``seat``: SRP's if ``use_srp``, else network ``opp``'s
    (greedy)."""
    if use_srp:
        return srp_play(st, sure_t)
    card, _ = _decide(st, seat, order_card, order_seat, n, bags, opp, 0.0, rng, row)
    return card


@njit(cache=True)
def _play_out(
    st, side, order_card, order_seat, n, blind, bags, net, opp, use_srp, sure_t, rules, out, row
):  # fmt: skip
    """The round in ``st`` (``n`` cards played) played to its end greedily, the
    learner ``net`` at partnership ``side``, the opponent at the other: the points
    the learner's side takes more, / 100."""
    bids = st[BIDS : BIDS + 4].copy()
    rng = np.zeros(1, dtype=np.uint64)  # unused: no exploration here
    while st[DONE] < 13:
        seat = (st[LEADER] + st[POS]) & 3
        if (seat & 1) == side:
            card, _ = _decide(st, seat, order_card, order_seat, n, bags, net, 0.0, rng, row)
        else:
            card = _opponent_card(
                st, seat, order_card, order_seat, n, bags, opp, use_srp, sure_t, rng, row
            )
        order_card[n] = card
        order_seat[n] = seat
        n += 1
        play_card(st, card)
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    return (out[side] - out[1 - side]) / 100.0


@njit(cache=True)
def versus_round(
    st, blind, bags, rules, net, opp, use_srp, side, explore, lam, rng, x, y, sure_t,
    branch, bx, by, bg, d0,
):  # fmt: skip
    """Play the round in ``st`` with the learning ``net`` at the seats of partnership
    ``side`` (exploring) and the opponent at the others: SRP if ``use_srp``, else
    the network ``opp``, greedily. The learner's 26 after-states into ``x`` and
    their λ-returns (of the learner's side's score) into ``y``. With probability
    ``branch`` a learner's decision with a choice is branched (every legal card
    played out by :func:`_play_out`; rows into ``bx``, ``by``, the decision's
    number from ``d0`` into ``bg``). Returns the rows (26), the branch rows and
    the decisions branched."""
    bids = st[BIDS : BIDS + 4].copy()
    out = np.empty(4, dtype=np.int64)
    order_card = np.empty(52, dtype=np.int64)
    order_seat = np.empty(52, dtype=np.int64)
    best = np.empty(26, dtype=np.float64)
    rows_of = np.empty((4, 13), dtype=np.int64)
    count = np.zeros(4, dtype=np.int64)
    row = np.empty(PLAY_FEATURES, dtype=np.uint8)
    tmp = np.empty_like(st)
    tmp_card = np.empty(52, dtype=np.int64)
    tmp_seat = np.empty(52, dtype=np.int64)
    n = 0
    r = 0
    rb = 0
    d = d0
    while st[DONE] < 13:
        seat = (st[LEADER] + st[POS]) & 3
        if (seat & 1) == side:
            card, v = _decide(st, seat, order_card, order_seat, n, bags, net, explore, rng, x[r])
            best[r] = v
            rows_of[seat, count[seat]] = r
            count[seat] += 1
            r += 1
            legal = legal_mask(st)
            if branch > 0 and legal & (legal - 1) and _uniform(rng) < branch:
                m = legal
                while m:
                    c = low_bit(m)
                    m &= m - 1
                    branch_card(st, seat, c, order_card, order_seat, n, bags, tmp, tmp_card,
                                tmp_seat, bx[rb])  # fmt: skip
                    by[rb] = _play_out(
                        tmp, side, tmp_card, tmp_seat, n + 1, blind, bags, net, opp, use_srp,
                        sure_t, rules, out, row,
                    )  # fmt: skip
                    bg[rb] = d
                    rb += 1
                d += 1
        else:
            card = _opponent_card(
                st, seat, order_card, order_seat, n, bags, opp, use_srp, sure_t, rng, row
            )
        order_card[n] = card
        order_seat[n] = seat
        n += 1
        play_card(st, card)
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    g0 = (out[side] - out[1 - side]) / 100.0
    for s in (side, side + 2):
        g = g0
        for t in range(count[s] - 1, -1, -1):
            k = rows_of[s, t]
            y[k] = g
            g = (1.0 - lam) * best[k] + lam * g
    return r, rb, d - d0


def opponents_of(
    n: int, srp_share: float, league_share: float, league: int, seed: list[int]
) -> np.ndarray:
    """Each of ``n`` rounds' opponent, drawn with the seeded generator: SRP with
    probability ``srp_share``, one of the ``league`` networks (uniformly) with
    ``league_share`` (none if the league is empty), else the network itself."""
    draw = np.random.default_rng(seed)
    u = draw.random(n)
    pick = draw.integers(max(league, 1), size=n)
    who = np.full(n, SELF, dtype=np.int64)
    who[u < srp_share] = SRP_OPPONENT
    if league:
        inside = (u >= srp_share) & (u < srp_share + league_share)
        who[inside] = pick[inside]
    return who


def league_play(
    rounds: dict[str, np.ndarray],
    net: tuple,
    league: list[tuple],
    who: np.ndarray,
    explore: float,
    lam: float,
    seed: list[int],
    branch: float = 0.0,
) -> dict[str, np.ndarray]:
    """The bid ``rounds`` played with each round's opponent ``who`` (:func:`opponents_of`):
    self-play rounds give 52 rows, the others the learner's 26 (its side alternates
    with the round's number). The rows ``x`` and labels ``y``; with ``branch``, the
    branched decisions' rows ``bx``, ``by`` and numbers ``bg`` (self-play rounds
    branched as :func:`lab.training.qp_self.selfplay_round` does)."""
    from bots.srp_compiled import sure_table

    sure_t = sure_table()
    n = len(rounds["states"])
    x = np.zeros((n * ROWS_PER_ROUND, PLAY_FEATURES), dtype=np.uint8)
    y = np.zeros(n * ROWS_PER_ROUND, dtype=np.float32)
    bx = np.zeros((BRANCH_ROWS, PLAY_FEATURES), dtype=np.uint8)
    by = np.zeros(BRANCH_ROWS, dtype=np.float32)
    bg = np.zeros(BRANCH_ROWS, dtype=np.int64)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rng = np.array([np.random.default_rng(seed).integers(2**63)], dtype=np.uint64)
    at = 0
    d = 0
    for i in range(n):
        st = rounds["states"][i].copy()
        blind, bags = rounds["blind"][i], rounds["bags"][i]
        xs, ys = x[at : at + ROWS_PER_ROUND], y[at : at + ROWS_PER_ROUND]
        if who[i] == SELF:
            rb, k = selfplay_round(
                st, blind, bags, RULES_ARRAY, net, explore, lam, rng, xs, ys,
                branch, bx, by, bg, d,
            )  # fmt: skip
            at += ROWS_PER_ROUND
        else:
            use_srp = who[i] == SRP_OPPONENT
            opp = net if use_srp else league[who[i]]
            r, rb, k = versus_round(
                st, blind, bags, RULES_ARRAY, net, opp, use_srp, i & 1, explore, lam, rng,
                xs, ys, sure_t, branch, bx, by, bg, d,
            )  # fmt: skip
            at += r
        if rb:
            parts.append((bx[:rb].copy(), by[:rb].copy(), bg[:rb].copy()))
        d += k
    if parts:
        bxs, bys, bgs = (np.concatenate(c) for c in zip(*parts, strict=True))
    else:
        bxs, bys, bgs = bx[:0], by[:0], bg[:0]
    return {"x": x[:at].copy(), "y": y[:at].copy(), "bx": bxs, "by": bys, "bg": bgs}


class League:
    """The opponents of a league run (``lab.training.qp_self.train``'s ``opponents``):
    a share ``srp_share`` of each iteration's rounds against SRP, ``league_share``
    against an earlier network (those ``given``, then a snapshot of the run every
    ``every`` iterations, kept in the run's folder), the rest self-play."""

    def __init__(
        self, srp_share: float, league_share: float, every: int, given: tuple[MLP, ...] = ()
    ) -> None:
        from lab.training.train import TrainError

        if min(srp_share, league_share) < 0 or srp_share + league_share > 1:
            raise TrainError("the league's shares are 0..1 together")
        if every < 1:
            raise TrainError("the league's snapshots are every 1 iteration or more")
        self.srp_share, self.league_share, self.every = srp_share, league_share, every
        self.given = given
        self.members: list[tuple] = []
        self.config = {
            "srp_share": srp_share,
            "league_share": league_share,
            "league_every": every,
            "league": [m.checksum for m in given],
        }

    def start(self, folder: Path, start: int) -> None:
        self.members = [net_arrays(m) for m in self.given]
        if self.league_share:
            for i in range(self.every, start + 1, self.every):
                self.members.append(net_arrays(read_mlp(folder / f"snap_{i}.npz")))

    def rows(
        self, rounds: dict[str, np.ndarray], net: tuple, explore: float, lam: float,
        seed: int, iteration: int, branch: float = 0.0,
    ) -> dict[str, np.ndarray]:  # fmt: skip
        who = opponents_of(
            len(rounds["states"]), self.srp_share, self.league_share, len(self.members),
            [seed, iteration, 2],
        )  # fmt: skip
        return league_play(rounds, net, self.members, who, explore, lam, [seed, iteration], branch)

    def after(self, folder: Path, iteration: int, net: MLP) -> None:
        if self.league_share and iteration % self.every == 0:
            net.save(folder / f"snap_{iteration}.npz")
            self.members.append(net_arrays(net))

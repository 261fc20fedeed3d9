"""Where QP loses its own contract where SRP makes it (issue 62): decisions counted by kind.

On the gauge's deals (bid by BIS, played twice with the partnerships swapped,
``lab.training.qp_self.gauge``) take the rounds without a nil: how often each
side is set when QP holds its cards and when SRP does. At each of QP's
decisions where SRP's card for the same position differs, SRP's card is
played instead and the round played on by the same players (QP at its side,
SRP at the other, on the true deal): the points that one change gains, and
whether it makes a contract QP lost (*saves*) or sets one QP made (*loses*).
The decisions are grouped by what is known when they are made (the card's
place in the trick, which card puts the side ahead in the trick, trumps), with
how much the network preferred its own card, so that a systematic misjudgement
shows apart from noise. With ``selfplay`` QP plays every seat: the opponents
it learned against.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bots.srp_compiled import BIDS, DONE, LEADER, POS, WIN_SEAT, WON, play_card, srp_play
from game.engine.fast_compiled import score_points
from lab.training.qp_compiled import candidates, card_values
from lab.training.qp_self import RULES_ARRAY

SPADE = 39  # engine cards 39..51 are the spades


@dataclass
class Decision:
    """One of QP's decisions: the position before it and both players' cards."""

    n: int  # cards played before it in the round
    st: np.ndarray
    order_card: np.ndarray
    order_seat: np.ndarray
    qp_card: int
    srp_card: int
    qp_value: float  # the network's value of its card's after-state
    srp_value: float  # ... and of SRP's card's


@dataclass
class Played:
    """A round played out: the tricks won by seat, the trick winners in order and
    QP's decisions (with ``record``)."""

    won: np.ndarray
    winners: list[int]
    decisions: list[Decision] = field(default_factory=list)


def qp_values(st, n, order_card, order_seat, bags, net) -> tuple[np.ndarray, np.ndarray]:
    """The legal cards of the seat to act (lowest first) and the network's values of
    their after-states."""
    scale, ws, bs, scratch, codes, h_a, h_b, perms = net
    seat = (st[LEADER] + st[POS]) & 3
    cards = np.empty(13, dtype=np.int64)
    k = candidates(st, seat, order_card, order_seat, n, bags, scratch, codes, cards)
    v = card_values(codes, k, perms, scale, ws, bs, h_a, h_b)
    return cards[:k].copy(), v[:k].astype(np.float64)


def play_on(
    st: np.ndarray,
    n: int,
    order_card: np.ndarray,
    order_seat: np.ndarray,
    bags: np.ndarray,
    net: tuple,
    qp_side: int,
    sure_t: np.ndarray,
    force: int = -1,
    record: bool = False,
    selfplay: bool = False,
) -> Played:
    """Play the round on from ``st`` (``n`` cards played; the arrays are changed):
    QP at partnership ``qp_side``, SRP at the other (QP too with ``selfplay``);
    ``force``, if given, is the next card. With ``record``, QP's decisions (at
    ``qp_side``) with SRP's card beside."""
    winners: list[int] = []
    decisions: list[Decision] = []
    while st[DONE] < 13:
        seat = (st[LEADER] + st[POS]) & 3
        if force >= 0:
            card, force = force, -1
        elif (seat & 1) == qp_side or selfplay:
            cards, vals = qp_values(st, n, order_card, order_seat, bags, net)
            card = int(cards[int(np.argmax(vals))])
            if record and len(cards) > 1 and (seat & 1) == qp_side:
                srp = int(srp_play(st.copy(), sure_t))
                decisions.append(
                    Decision(
                        n, st.copy(), order_card.copy(), order_seat.copy(), card, srp,
                        float(vals.max()), float(vals[list(cards).index(srp)]),
                    )
                )  # fmt: skip
        else:
            card = int(srp_play(st, sure_t))
        pos = st[POS]
        order_card[n] = card
        order_seat[n] = seat
        n += 1
        play_card(st, card)
        if pos == 3:
            winners.append(int(st[LEADER]))
    return Played(st[WON : WON + 4].copy(), winners, decisions)


def made(bids: np.ndarray, won: np.ndarray, side: int) -> bool:
    """Whether partnership ``side`` (no nil bid) made its contract."""
    return int(won[side] + won[side + 2]) >= int(bids[side] + bids[side + 2])


def side_points(bids, blind, won, bags, side: int) -> int:
    out = np.empty(4, dtype=np.int64)
    score_points(bids, blind, won, RULES_ARRAY, bags, out)
    return int(out[side] - out[1 - side])


def ahead(st: np.ndarray, card: int, side: int) -> bool:
    """Whether partnership ``side`` wins the trick so far once ``card`` is played."""
    after = st.copy()
    play_card(after, card)
    winner = after[WIN_SEAT] if after[POS] > 0 else after[LEADER]
    return (int(winner) & 1) == side


def kind(d: Decision, qp: Played, srp: Played, side: int) -> dict[str, Any]:
    """What a decision was: the card's place in the trick, which side each card puts
    ahead in the trick (known at the decision), which branch's side took the trick
    (known only after it: a biased split, the hidden cards decide it together with
    the gain), trumps, the tricks still needed. ``qp`` is the round as QP played
    it, ``srp`` the branch with SRP's card at ``d``."""
    st = d.st
    pos = int(st[POS])
    trick = int(st[DONE])
    bids = st[BIDS : BIDS + 4]
    need = int(bids[side] + bids[side + 2] - st[WON + side] - st[WON + side + 2])
    ours_qp = (qp.winners[trick] & 1) == side
    ours_srp = (srp.winners[0] & 1) == side  # the branch starts at this trick
    if ours_srp and not ours_qp:
        effect = "QP lost the trick SRP's card took"
    elif ours_qp and not ours_srp:
        effect = "QP took the trick SRP's card gave up"
    elif ours_qp:
        effect = "both took the trick"
    else:
        effect = "both lost the trick"
    same = d.qp_card // 13 == d.srp_card // 13
    now_qp, now_srp = ahead(st, d.qp_card, side), ahead(st, d.srp_card, side)
    if now_srp and not now_qp:
        now = "SRP's card puts the side ahead, QP's not"
    elif now_qp and not now_srp:
        now = "QP's card puts the side ahead, SRP's not"
    else:
        now = "both ahead" if now_qp else "both behind"
    return {
        "now": now,
        "place": ("lead", "second", "third", "fourth")[pos],
        "effect": effect,
        "partner_winning": pos > 0 and (int(st[WIN_SEAT]) & 1) == side,
        "cards": ("spade" if d.qp_card >= SPADE else "side")
        + " vs "
        + ("spade" if d.srp_card >= SPADE else "side"),
        "rank": ("QP higher" if d.qp_card > d.srp_card else "QP lower") if same else "other suit",
        "trick": trick + 1,
        "need": need,
        "slack": 13 - trick - need,  # tricks left that the side can lose
        "value_gap": d.qp_value - d.srp_value,  # the network's preference, / 100 points
    }


def diagnose(
    rounds: dict[str, np.ndarray], net: tuple, sure_t: np.ndarray, selfplay: bool = False
) -> dict[str, Any]:
    """The rounds without a nil, each played both ways (QP's side and SRP's side
    holding the same cards): how often each side was set, and every decision of
    QP's at which SRP's card differs, played on with SRP's card (:func:`kind`,
    the points it gains, whether it makes a contract QP lost or loses one QP made).
    With ``selfplay`` QP plays at every seat (the opponents it learned against), so
    that the network's judgement can be told apart from its opponent's."""
    counts: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    for i in range(len(rounds["states"])):
        st0 = rounds["states"][i]
        bids = st0[BIDS : BIDS + 4]
        if (bids <= 0).any():
            continue
        blind, bags = rounds["blind"][i], rounds["bags"][i]
        plays = {}
        for qp_side in (0, 1):
            plays[qp_side] = play_on(
                st0.copy(), 0, np.empty(52, np.int64), np.empty(52, np.int64), bags, net,
                qp_side, sure_t, record=True, selfplay=selfplay,
            )  # fmt: skip
        total = int(bids.sum())
        table = "under 13" if total < 13 else "13" if total == 13 else "14 or more"
        gap = (side_points(bids, blind, plays[0].won, bags, 0)
               + side_points(bids, blind, plays[1].won, bags, 1)) / 2  # fmt: skip
        counts["gap sum"] += gap
        counts[f"gap sum, {table}"] += gap
        counts[f"deals, {table}"] += 1
        for side in (0, 1):
            qp = plays[side]
            qp_made = made(bids, qp.won, side)
            srp_made = made(bids, plays[1 - side].won, side)
            counts["contracts"] += 1
            counts["QP set"] += not qp_made
            counts["SRP set"] += not srp_made
            counts[f"QP set, {table}"] += not qp_made
            counts[f"SRP set, {table}"] += not srp_made
            counts["QP set, SRP made"] += srp_made and not qp_made
            counts["SRP set, QP made"] += qp_made and not srp_made
            base = side_points(bids, blind, qp.won, bags, side)
            if selfplay and side == 1:
                break  # both sides are QP: the twin is the same round
            for d in qp.decisions:
                counts["QP decisions"] += 1
                if d.qp_card == d.srp_card:
                    continue
                branch = play_on(
                    d.st.copy(), d.n, d.order_card.copy(), d.order_seat.copy(), bags, net,
                    side, sure_t, force=d.srp_card, selfplay=selfplay,
                )  # fmt: skip
                k = kind(d, qp, branch, side)
                b_made = made(bids, branch.won, side)
                k.update(
                    deal=i,
                    side=side,
                    round="QP set, SRP made" if srp_made and not qp_made else "other",
                    gain=side_points(bids, blind, branch.won, bags, side) - base,
                    saves=b_made and not qp_made,  # SRP's card makes the contract QP lost
                    loses=qp_made and not b_made,  # ... or loses the one QP made
                )
                rows.append(k)
    return {"counts": dict(counts), "decisions": rows}


def tally(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, float]]:
    """By ``key``: decisions, SRP's card's mean points gain, contracts it saves and loses."""
    out: dict[str, dict[str, float]] = {}
    for value in sorted({str(r[key]) for r in rows}):
        part = [r for r in rows if str(r[key]) == value]
        out[value] = {
            "n": len(part),
            "gain": round(float(np.mean([r["gain"] for r in part])), 2),
            "saves": sum(r["saves"] for r in part),
            "loses": sum(r["loses"] for r in part),
        }
    return out


def _stat(rows: list[dict[str, Any]]) -> dict[str, float]:
    g = np.array([r["gain"] for r in rows], dtype=float)
    return {
        "n": len(rows),
        "gain": round(float(g.mean()), 2),
        "se": round(float(g.std() / np.sqrt(len(rows))), 2),
        "net_prefers_own_by": round(100 * float(np.mean([r["value_gap"] for r in rows])), 2),
        "saves": int(sum(r["saves"] for r in rows)),
        "loses": int(sum(r["loses"] for r in rows)),
    }


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """:func:`diagnose`'s counts and its decisions grouped by what is known at the
    decision (``now``, ``place``, ``cards``, ``partner_winning``, place by now): for
    each group the decisions, SRP's card's mean points gain with its standard
    error, how much the network preferred its own card (points), the contracts
    SRP's card saves and loses. (The split by ``effect``, known only after the
    trick, is left out: the hidden cards decide it and the gain together.)"""
    rows = result["decisions"]
    out: dict[str, Any] = {"counts": result["counts"], "all differing": _stat(rows)}
    for key in ("now", "place", "cards", "partner_winning"):
        out[key] = {v: _stat([r for r in rows if str(r[key]) == v]) for v in tally(rows, key)}
    out["place by now"] = {}
    for place in ("lead", "second", "third", "fourth"):
        for now in sorted({r["now"] for r in rows}):
            part = [r for r in rows if r["place"] == place and r["now"] == now]
            if part:
                out["place by now"][f"{place} / {now}"] = _stat(part)
    return out

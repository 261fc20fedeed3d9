"""The frames the server sends a bot (``spades-bot/1``), built from committed states.

What a bot is told of a table is what its seat's page is told: the decision
carries ``view_for(match, seat)`` exactly as the page's state frame does
(``game.sockets.frames``: the seat's view, the version and the table's public
info), and the trick, round and match ends are public facts (cards once
played, bids, tricks, scores). Nothing is copied from a move's group message
but its seat and its version: a ``pass_cards`` action there names cards the
other seats may not see. ``docs/bot-protocol/`` has a JSON schema per frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from game import external_bots
from game.engine import format_card, view_for
from game.engine.match import Match
from game.engine.state import RoundState

PROTOCOL = external_bots.PROTOCOL


@dataclass
class Watch:
    """One table a bot's socket plays at: its seats there and what it was told."""

    pk: int
    public_id: str
    seats: list[int]
    version: int = -1  # the newest version handled
    started: bool = False
    over: bool = False
    told_round: int = 0  # the round whose ends were last told, and how far
    told_tricks: int = 0
    told_round_end: bool = False
    asked: dict[int, int] = field(default_factory=dict)  # seat -> version of its decision
    mine: dict[int, int] = field(default_factory=dict)  # seat -> version the bot acted on
    late: dict[int, int] = field(default_factory=dict)  # seat -> version the stand-in took


def seat_view(match: Match, seat: int, info: dict[str, Any]) -> dict[str, Any]:
    """The seat's view as its page gets it (``frames``' state frame's ``view``)."""
    return {**view_for(match, seat).to_dict(), "version": match.version, "table": info}


def time_left_ms(info: dict[str, Any], now: datetime) -> int:
    """The turn timer's rest (the stand-in moves at its end): from the table's
    deadline, else (a table without stand-ins for people) its whole length."""
    deadline = info.get("turn_deadline")
    if not deadline:
        return int(info.get("turn_seconds", 30)) * 1000
    left = (datetime.fromisoformat(deadline) - now).total_seconds()
    return max(0, int(left * 1000))


def started_frame(w: Watch, info: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "table_started",
        "table": w.public_id,
        "seats": list(w.seats),
        "rules": info.get("rules", {}),
        "turn_seconds": info.get("turn_seconds"),
        "players": [_player(s) for s in info.get("seats", [])],
    }


def _player(seat: dict[str, Any] | None) -> dict[str, Any] | None:
    if seat is None:
        return None
    return {"position": seat["position"], "kind": seat["kind"], "name": seat["name"],
            "bot_name": seat["bot_name"]}  # fmt: skip


def decision_frame(w: Watch, seat: int, view: dict[str, Any], left_ms: int) -> dict[str, Any]:
    return {
        "type": "decision",
        "table": w.public_id,
        "seat": seat,
        "version": view["version"],
        "legal_actions": view["legal_actions"],
        "time_left_ms": left_ms,
        "view": view,
    }


def _trick(w: Watch, r: RoundState, n: int) -> dict[str, Any]:
    t = r.tricks[n]
    return {"type": "trick", "table": w.public_id, "round_number": r.round_number,
            "number": n + 1, "leader": t.leader, "cards": [format_card(c) for c in t.cards],
            "winner": t.winner}  # fmt: skip


def _round_end(w: Watch, r: RoundState) -> dict[str, Any]:
    assert r.result is not None
    ns, ew = r.result
    return {
        "type": "round_end",
        "table": w.public_id,
        "round_number": r.round_number,
        "bids": list(r.bids),
        "tricks_won": list(r.tricks_won),
        "result": [ns.to_dict(), ew.to_dict()],
        "scores": [ns.score_after, ew.score_after],
    }


def ends_since(w: Watch, match: Match) -> list[dict[str, Any]]:
    """The trick and round ends of ``match`` the bot was not told yet (each
    once, in order), and the match's end; advances ``w``'s marks."""
    out: list[dict[str, Any]] = []
    if w.told_round == 0:  # first sight: tell what follows, not what went before
        r = match.round
        w.told_round, w.told_tricks, w.told_round_end = r.round_number, len(r.tricks), False
    for r in match.rounds[w.told_round - 1 :]:
        if r.round_number > w.told_round:
            w.told_round, w.told_tricks, w.told_round_end = r.round_number, 0, False
        for n in range(w.told_tricks, len(r.tricks)):
            out.append(_trick(w, r, n))
        w.told_tricks = len(r.tricks)
        if r.result is not None and not w.told_round_end:
            out.append(_round_end(w, r))
            w.told_round_end = True
    if match.is_over and not w.over:
        w.over = True
        out.append({"type": "match_end", "table": w.public_id, "winner": match.winner,
                    "scores": list(match.scores), "rounds": len(match.rounds)})  # fmt: skip
    return out


def error_frame(code: str, message: str, **about: Any) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, **about}

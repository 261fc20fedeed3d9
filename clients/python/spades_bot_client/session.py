"""The protocol's side of a bot, without I/O: frames in, frames to send out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spades_bot_client.policies import Policy

PROTOCOL = "spades-bot/1"


class IllegalChoice(ValueError):
    """The policy chose an action that is not one of the decision's legal actions."""


@dataclass(frozen=True)
class Decision:
    """A ``decision`` frame: one of your seats is to act."""

    table: str
    seat: int
    version: int
    legal_actions: list[dict[str, Any]]
    time_left_ms: int
    view: dict[str, Any]

    @classmethod
    def of(cls, frame: dict[str, Any]) -> Decision:
        return cls(frame["table"], frame["seat"], frame["version"], frame["legal_actions"],
                   frame["time_left_ms"], frame["view"])  # fmt: skip


@dataclass
class Table:
    """What the session knows of one table where the bot sits."""

    seats: list[int]
    started: dict[str, Any] | None = None  # the table_started frame
    tricks: int = 0
    rounds: int = 0


@dataclass
class BotSession:
    """Answers the server's frames with ``policy``; keeps what a bot may want
    to know afterwards (the matches it finished, the errors it was sent).

    ``matches``: the session is :attr:`done` once that many matches ended (0:
    never). One session lives across reconnections: the server says ``hello``
    on each connection and the session answers ``ready`` every time."""

    policy: Policy
    matches: int = 0
    keep_log: bool = False
    bot: str = ""
    tables: dict[str, Table] = field(default_factory=dict)
    finished: list[str] = field(default_factory=list)  # tables whose match ended
    errors: list[dict[str, Any]] = field(default_factory=list)
    stood_in: list[dict[str, Any]] = field(default_factory=list)  # decisions we were late for
    log: list[dict[str, Any]] = field(default_factory=list)  # every frame, with keep_log

    @property
    def done(self) -> bool:
        return self.matches > 0 and len(self.finished) >= self.matches

    def handle(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        """What to answer ``frame`` with (often nothing). Frame types this
        session does not know are ignored, as the protocol asks."""
        if self.keep_log:
            self.log.append(frame)
        kind = frame.get("type")
        if kind == "hello":
            self.bot = frame.get("bot", "")
            return [{"type": "ready", "protocol": PROTOCOL}]
        if kind == "decision":
            return [self.answer(Decision.of(frame))]
        if kind == "seated":
            self.tables[frame["table"]] = Table(list(frame["seats"]))
        elif kind == "table_started":
            self.tables.setdefault(frame["table"], Table(list(frame["seats"]))).started = frame
        elif kind == "trick" and frame["table"] in self.tables:
            self.tables[frame["table"]].tricks += 1
        elif kind == "round_end" and frame["table"] in self.tables:
            self.tables[frame["table"]].rounds += 1
        elif kind in ("match_end", "unseated"):
            self.tables.pop(frame["table"], None)
            if kind == "match_end":
                self.finished.append(frame["table"])
        elif kind == "stood_in":
            self.stood_in.append(frame)
        elif kind == "error":
            self.errors.append(frame)
        return []

    def answer(self, decision: Decision) -> dict[str, Any]:
        action = self.policy(decision)
        if action not in decision.legal_actions:
            raise IllegalChoice(f"the policy chose {action!r}, not one of the legal actions")
        return {"type": "action", "table": decision.table, "seat": decision.seat,
                "version": decision.version, "action": action}  # fmt: skip

"""The client's session: the protocol's answers, without a network."""

from __future__ import annotations

import random
from typing import Any

import pytest
from spades_bot_client import PROTOCOL, BotSession, Decision, random_policy
from spades_bot_client.session import IllegalChoice

CARDS = [r + s for s in "CDHS" for r in "23456789TJQKA"]


def _decision(rng: random.Random, version: int = 4) -> dict[str, Any]:
    """A decision frame of the protocol's shape, with a random set of legal plays."""
    hand = rng.sample(CARDS, rng.randint(1, 13))
    plays = rng.sample(hand, rng.randint(1, len(hand)))
    legal = [{"type": "play", "seat": 2, "card": c} for c in plays]
    return {"type": "decision", "table": "oqyXXyRj", "seat": 2, "version": version,
            "legal_actions": legal, "time_left_ms": 29000,
            "view": {"seat": 2, "hand": hand, "phase": "playing", "to_act": 2}}  # fmt: skip


def test_hello_is_answered_with_ready_every_time() -> None:
    session = BotSession(random_policy(random.Random(1)))
    for _ in range(2):  # a second connection says hello again
        hello = {"type": "hello", "protocol": PROTOCOL, "bot": "randy", "max_frame_bytes": 4096}
        assert session.handle(hello) == [{"type": "ready", "protocol": PROTOCOL}]
    assert session.bot == "randy"


def test_the_random_policy_answers_every_decision_with_a_legal_action() -> None:
    rng = random.Random(3)
    session = BotSession(random_policy(random.Random(4)))
    chosen: set[str] = set()
    for version in range(500):
        frame = _decision(rng, version)
        [reply] = session.handle(frame)
        assert reply["type"] == "action"
        assert (reply["table"], reply["seat"], reply["version"]) == ("oqyXXyRj", 2, version)
        assert reply["action"] in frame["legal_actions"]
        chosen.add(reply["action"]["card"])
    assert len(chosen) > 40  # random, not always the first


def test_the_same_seed_plays_the_same_actions() -> None:
    frames = [_decision(random.Random(9), v) for v in range(50)]
    one, two = (BotSession(random_policy(random.Random(5))) for _ in range(2))
    assert [one.handle(f) for f in frames] == [two.handle(f) for f in frames]


def test_a_policy_choosing_outside_the_legal_actions_is_stopped_here() -> None:
    session = BotSession(lambda d: {"type": "play", "seat": 2, "card": "ZZ"})
    with pytest.raises(IllegalChoice):
        session.handle(_decision(random.Random(1)))


def test_the_policy_gets_the_decision() -> None:
    seen: list[Decision] = []

    def first(decision: Decision) -> dict[str, Any]:
        seen.append(decision)
        return decision.legal_actions[0]

    frame = _decision(random.Random(2))
    BotSession(first).handle(frame)
    assert seen[0].view == frame["view"] and seen[0].time_left_ms == 29000


def test_tables_matches_and_errors_are_kept() -> None:
    session = BotSession(random_policy(), matches=2)
    session.handle({"type": "seated", "table": "a", "seats": [1]})
    session.handle({"type": "seated", "table": "b", "seats": [0, 2]})
    session.handle({"type": "table_started", "table": "a", "seats": [1], "rules": {},
                    "turn_seconds": 30, "players": []})  # fmt: skip
    session.handle({"type": "trick", "table": "a", "round_number": 1, "number": 1, "leader": 0,
                    "cards": ["2C", "3C", "4C", "5C"], "winner": 3})  # fmt: skip
    assert session.tables["a"].tricks == 1 and session.tables["a"].started is not None
    assert session.handle({"type": "error", "code": "stale", "message": "m"}) == []
    assert session.handle({"type": "something_new", "x": 1}) == []  # ignored, as asked
    session.handle({"type": "match_end", "table": "a", "winner": 0, "scores": [0, 0], "rounds": 1})
    assert not session.done
    session.handle({"type": "unseated", "table": "b", "reason": "closed"})
    assert session.tables == {} and session.finished == ["a"] and not session.done
    session.handle({"type": "match_end", "table": "c", "winner": 1, "scores": [0, 0], "rounds": 1})
    assert session.done and [e["code"] for e in session.errors] == ["stale"]

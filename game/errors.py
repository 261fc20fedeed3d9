"""What the server refuses, as exceptions with a stable ``code`` for the client.

A :class:`ServiceError` means nothing changed: the move or seat change was
rolled back, and its ``message`` is written for the player. ``CorruptLog``
is a bug, never a user error.
"""

from __future__ import annotations

from game.engine import IllegalAction


class ServiceError(Exception):
    """Something a user (or a late bot) asked for that cannot be done; nothing changed."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TableNotFound(ServiceError):
    code = "not_found"


class NotPlaying(ServiceError):
    """The table is not in play (still open, or finished)."""

    code = "not_playing"


class StaleVersion(ServiceError):
    """The action was meant for another version of the table than the current one."""

    code = "stale"

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(
            f"the table has moved on (you acted on version {expected}, it is at {current}): "
            "refresh and try again"
        )
        self.expected = expected
        self.current = current


class BadAction(ServiceError):
    """Data that does not describe an action, or an action for another seat."""

    code = "bad_action"


class IllegalMove(ServiceError, IllegalAction):
    """The engine refused the action; ``message`` is its reason."""

    code = "illegal"


class SeatError(ServiceError):
    code = "seat"


class TooManyTables(SeatError):
    """An external bot already sits at its cap of live tables."""

    code = "too_many_tables"


class TryAgain(ServiceError):
    """The database failed under the request (a restart, a dropped connection):
    nothing was half-written; the same request may be sent again."""

    code = "try_again"


class CorruptLog(RuntimeError):
    """The stored log does not replay to the stored version (a bug, never a user error)."""

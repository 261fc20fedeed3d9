"""Table talk: chat lines, kept so that the last ones come back on reload.
Quick reactions (``game.sockets.client_frames.REACTIONS``) are of the moment and
go to the table's sockets without being kept.

Who may talk: a seated player, or anyone watching under a name (an account
or a guest who chose one); the consumer checks that and the rate limits.
"""

from __future__ import annotations

from typing import Any

from game.models import ChatLine

HISTORY_LINES = 50


def say(table_pk: int, seat: int | None, name: str, text: str) -> dict[str, Any]:
    """Store one chat line; the line as every socket gets it."""
    line = ChatLine.objects.create(table_id=table_pk, seat=seat, name=name[:40], text=text[:200])
    return line_of(line)


def line_of(line: ChatLine) -> dict[str, Any]:
    return {
        "seat": line.seat,
        "name": line.name,
        "text": line.text,
        "at": line.created_at.isoformat(timespec="seconds"),
    }


def history(table_pk: int) -> list[dict[str, Any]]:
    """The table's last :data:`HISTORY_LINES` chat lines, oldest first."""
    lines = ChatLine.objects.filter(table_id=table_pk).order_by("-id")[:HISTORY_LINES]
    return [line_of(line) for line in reversed(lines)]

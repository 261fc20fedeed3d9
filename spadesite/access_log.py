"""Daphne's access log without query strings.

A recruitment site sends participants to ``/study/<slug>/?PROLIFIC_PID=...``:
the raw recruitment ID is in the URL of their first request, and Daphne's
access log (stdout under ``make run``) writes each request's path with its
query. Recruitment IDs are kept in one place only (docs/studies.md), so the
log gets the path alone. ``spadesite/asgi.py`` installs this in every Daphne
process; nginx in front (``lab/stack/proxy.py``) keeps no access log.
"""

from __future__ import annotations

from typing import Any

from daphne.access import AccessLogGenerator

_installed = False


def without_query(request: str) -> str:
    """``"GET /path?a=b"`` as ``"GET /path"``."""
    head, _, _ = request.partition("?")
    return head


def install() -> None:
    """Drop the query from every entry Daphne's access log writes (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    write_entry = AccessLogGenerator.write_entry

    def write_entry_without_query(self: AccessLogGenerator, host: Any, date: Any,
                                  request: str, *args: Any, **kwargs: Any) -> None:  # fmt: skip
        write_entry(self, host, date, without_query(request), *args, **kwargs)

    AccessLogGenerator.write_entry = write_entry_without_query  # type: ignore[method-assign]

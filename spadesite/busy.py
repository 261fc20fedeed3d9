"""The answer when the database cannot be had in time: a 503 with a retry, never a 500.

A crowd arriving at once (a study published on a recruitment site) can use
every connection of a process's pool (``spadesite.config.PoolSize``); a
request that waited the pool's time-out, or met a database that is
restarting, a deadlock retried to its limit or a lock it waited too long for,
gets this page: it says the site is busy and tries again by itself after a
few seconds (a script: a meta refresh is barred for people who need more
time), with a "Try again now" link, and ``Retry-After`` tells scripts (the
waiting room's poll retries any answer that is not OK). The database rolled
back whatever the request had begun, so nothing is half-written and the
retry is safe.

Two hooks, since an error can surface in two places: :class:`BusyMiddleware`
catches one raised by a view (where nearly all database work happens: the
session and the user are read lazily inside it), and :func:`server_error`,
the site's ``handler500``, one raised by a middleware (a session saved after
the view).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views import defaults

log = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5
TITLE = "The site is very busy"
MESSAGE = (
    "Many people arrived at the same moment and this page could not be prepared in "
    "time. Nothing you did was lost. The page tries again by itself in a few seconds; "
    "please keep it open."
)


def is_busy(error: BaseException | None) -> bool:
    """Whether ``error`` is the database being out of reach for now (pool
    exhausted, connection refused or lost, deadlock or lock time-out)."""
    return isinstance(error, OperationalError | InterfaceError)


def busy_response(request: HttpRequest) -> HttpResponse:
    """The 503: JSON for a script's request, else a page that reloads itself.

    Rendered without the request's context, so it reads neither the session
    nor the user: both need the database it could not have."""
    if _wants_json(request):
        response: HttpResponse = JsonResponse(
            {"error": "busy", "message": MESSAGE, "retry_after": RETRY_AFTER_SECONDS},
            status=503,
        )
    else:
        page = loader.render_to_string(
            "busy.html", {"title": TITLE, "message": MESSAGE, "retry": RETRY_AFTER_SECONDS}
        )
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def _wants_json(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return "application/json" in accept or request.path.endswith("/state/")


def _log(request: HttpRequest, error: BaseException) -> None:
    from studies import clock  # the waiting rooms must not count this as absence

    clock.database_failed()
    # The path only: a study link's query holds a recruitment ID.
    log.warning("503 for %s %s: %s", request.method, request.path, type(error).__name__)


class BusyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, error: Exception) -> HttpResponse | None:
        if not is_busy(error):
            return None
        _log(request, error)
        return busy_response(request)


def server_error(request: HttpRequest, template_name: str = "500.html") -> HttpResponse:
    """``handler500``: the busy page for a database error raised outside a view,
    Django's own 500 page for anything else."""
    error = sys.exc_info()[1]
    if is_busy(error):
        assert error is not None
        _log(request, error)
        return busy_response(request)
    return defaults.server_error(request, template_name)

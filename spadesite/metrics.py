"""``/metrics``: Prometheus's text format, from this process's registry.

The process's own counters (moves, move latency, open sockets, refused
frames: ``game/observe.py``; HTTP 5xx: :func:`ErrorCounter`) and, read when
scraped, the site's backlogs: each Celery queue's length in Redis, the age of
the oldest bot move a playing table waits for, and the recent finished rounds
still without their double-dummy analysis. Those three are cached for
:data:`SITE_FIGURES_SECONDS`, so that several processes scraped every 15 s
cost the database a few cheap queries a scrape at most.

Readable from ``SPADES_METRICS_ALLOW`` (addresses or networks, default the
loopback: Prometheus on the machine scrapes each Daphne port directly) or
with ``Authorization: Bearer <SPADES_METRICS_TOKEN>``; anyone else gets 404,
which says nothing about the endpoint. nginx's site refuses ``/metrics`` from
outside too (``lab/stack/deploy.py``).
"""

from __future__ import annotations

import hmac
import ipaddress
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta

import redis
from django.conf import settings
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from game import redis_clients

HTTP_ERRORS = Counter("spades_http_errors", "HTTP responses of status 500 and above", ["status"])
SITE_FIGURES_SECONDS = 10.0
# Rounds finished this long ago at most count in the analysis backlog: the
# anti-join then reads the finished_at index's tail, never the whole table.
BACKLOG_WINDOW = timedelta(days=7)
# Playing tables looked at, oldest turn first, for the oldest waiting bot move:
# a bot due now has waited a second or two, so younger turns are skipped, and
# only this many older ones are read (a match each, cached or replayed). A
# stalled bot table behind more humans' turns older than its own (humans
# with no turn timer, say) shows once those move on; beat's sweep
# (game/driver/sweeper.py) is what recovers it, this is what sees it.
OLDEST_MOVE_CANDIDATES = 50
BOT_DUE_SECONDS = 2.0
CELERY_QUEUES = ("bots", "search", "replays")


# ----- who may read ---------------------------------------------------------------


def allowed(request: HttpRequest) -> bool:
    token = getattr(settings, "SPADES_METRICS_TOKEN", "")
    header = request.headers.get("Authorization", "")
    if (
        token
        and header.startswith("Bearer ")
        and hmac.compare_digest(header.removeprefix("Bearer ").encode(), token.encode())
    ):
        return True
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    networks = getattr(settings, "SPADES_METRICS_ALLOW", ["127.0.0.1", "::1"])
    return any(address in ipaddress.ip_network(n, strict=False) for n in networks)


# ----- the site's backlogs ------------------------------------------------------------


def queue_depths(url: str) -> dict[str, int]:
    """LLEN of each Celery queue (kombu's Redis transport keeps a queue as a list)."""
    client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
    try:
        pipe = client.pipeline(transaction=False)
        for queue in CELERY_QUEUES:
            pipe.llen(queue)
        return dict(zip(CELERY_QUEUES, (int(n) for n in pipe.execute()), strict=True))
    finally:
        client.close()


def oldest_bot_move_seconds() -> float:
    """How long the playing table waiting longest for a bot (or, at a table
    with bots, an away human's stand-in) has waited since its turn began; 0 if none has waited
    :data:`BOT_DUE_SECONDS`. Whose turn it is comes from the match, as the
    sweep finds it (game/driver/sweeper.py)."""
    from game.models import Seat, Table
    from game.moves.matches import load_match

    now = timezone.now()
    since = now - timedelta(seconds=BOT_DUE_SECONDS)
    oldest = (
        Table.objects.filter(status=Table.Status.PLAYING, turn_started_at__lt=since)
        .filter(Exists(Seat.objects.filter(table=OuterRef("pk"), kind=Seat.Kind.BOT)))
        .order_by("turn_started_at")
        .prefetch_related("seats")[:OLDEST_MOVE_CANDIDATES]
    )
    for table in oldest:
        match = load_match(table)
        if match.is_over:
            continue
        seat = next((s for s in table.seats.all() if s.position == match.round.to_act), None)
        if seat is not None and (seat.kind == Seat.Kind.BOT or seat.away):
            assert table.turn_started_at is not None
            return max(0.0, (now - table.turn_started_at).total_seconds())
    return 0.0


def analysis_backlog() -> int:
    """Rounds finished within :data:`BACKLOG_WINDOW` with no RoundAnalysis yet."""
    from game.models import RoundRecordRow

    since = timezone.now() - BACKLOG_WINDOW
    return RoundRecordRow.objects.filter(finished_at__gte=since, analysis__isnull=True).count()


class SiteCollector(Collector):
    """The backlogs, read at most every :data:`SITE_FIGURES_SECONDS`; a
    figure whose source fails is left out of that scrape (never an error page)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at = float("-inf")
        self._figures: list[GaugeMetricFamily] = []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            if time.monotonic() - self._at >= SITE_FIGURES_SECONDS:
                self._figures = list(self._read())
                self._at = time.monotonic()
            yield from self._figures

    def _read(self) -> Iterable[GaugeMetricFamily]:
        def attempt(read: Callable[[], GaugeMetricFamily]) -> list[GaugeMetricFamily]:
            try:
                return [read()]
            except Exception:  # a figure missing from a scrape is the signal
                return []

        def depths() -> GaugeMetricFamily:
            family = GaugeMetricFamily(
                "spades_queue_depth", "Messages waiting in a Celery queue", labels=["queue"]
            )
            for queue, depth in queue_depths(shared).items():
                family.add_metric([queue], depth)
            return family

        if (shared := redis_clients.shared()) is not None:
            yield from attempt(depths)
        yield from attempt(lambda: GaugeMetricFamily(
            "spades_oldest_bot_move_seconds",
            "Seconds the playing table waiting longest for a bot move has waited",
            value=oldest_bot_move_seconds(),
        ))  # fmt: skip
        yield from attempt(lambda: GaugeMetricFamily(
            "spades_analysis_backlog",
            "Rounds finished in the last 7 days without their double-dummy analysis",
            value=analysis_backlog(),
        ))  # fmt: skip

    def describe(self) -> list[GaugeMetricFamily]:
        return []  # registered without a scrape at start-up (no database then)

    def forget(self) -> None:
        """Read the figures again at the next scrape (tests)."""
        with self._lock:
            self._at = float("-inf")


SITE = SiteCollector()
REGISTRY.register(SITE)


@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        raise Http404
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


class ErrorCounter:
    """Middleware (first in MIDDLEWARE, so that it sees the 500 and 503 pages
    the others make of an exception): counts responses of status 500 and above."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code >= 500:
            HTTP_ERRORS.labels(str(response.status_code)).inc()
        return response

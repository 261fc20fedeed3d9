"""What every analysis shares: the :class:`Filters` of the rows it covers, the
vocabulary (seats, sides, seat kinds, make-ups) and GROUP BY helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import F, Q, QuerySet
from django.db.models.functions import Substr
from django.utils import timezone

from game.models import MatchResult, RoundRecordRow

SIDES = (("ns", 0, 2), ("ew", 1, 3))
KIND_LABELS = {"H": "human", "B": "bot"}
MAKEUP_LABELS = {"BB": "bot+bot", "HB": "human+bot", "HH": "human+human"}
# Aggregate queries run side by side on PostgreSQL (all_analyses): a few more than
# the database's cores, so that one waiting on its result does not idle a core.
PARALLEL_QUERIES = 4
HISTOGRAM_BIN = 10  # points per bar of Figure 2
# The sum of the four bids (the same as the bid_total column: a stored round is finished and
# nil is 0), spelled out so that PostgreSQL answers from the covering index alone.
BID_SUM = F("bid_n") + F("bid_e") + F("bid_s") + F("bid_w")


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


@dataclass(frozen=True)
class Filters:
    """Which rounds and matches an analysis or export covers (empty: no restriction).

    ``date_from``/``date_to`` are inclusive days in the site's time zone;
    ``bots``: rounds with at least one of these bots at the table;
    ``makeups``: rounds where at least one partnership has one of these make-ups.
    """

    date_from: date | None = None
    date_to: date | None = None
    rules_key: str = ""
    bots: tuple[str, ...] = field(default_factory=tuple)
    makeups: tuple[str, ...] = field(default_factory=tuple)

    def q(self) -> Q:
        q = Q()
        tz = timezone.get_current_timezone()
        if self.date_from is not None:
            q &= Q(finished_at__gte=datetime.combine(self.date_from, time.min, tzinfo=tz))
        if self.date_to is not None:
            end = datetime.combine(self.date_to + timedelta(days=1), time.min, tzinfo=tz)
            q &= Q(finished_at__lt=end)
        if self.rules_key:
            q &= Q(rules_key=self.rules_key)
        if self.bots:
            bots = list(self.bots)
            q &= Q(bot_n__in=bots) | Q(bot_e__in=bots) | Q(bot_s__in=bots) | Q(bot_w__in=bots)
        if self.makeups:
            m = list(self.makeups)
            q &= Q(makeup_ns__in=m) | Q(makeup_ew__in=m)
        return q

    def rounds(self) -> QuerySet[RoundRecordRow]:
        return RoundRecordRow.objects.filter(self.q())

    def matches(self) -> QuerySet[MatchResult]:
        return MatchResult.objects.filter(self.q())


def seat_kind(seat: int) -> Substr:
    return Substr("seat_kinds", seat + 1, 1)


def grouped(qs: QuerySet[Any], *values: Any, **aggregates: Any) -> list[dict[str, Any]]:
    """``qs`` grouped by ``values`` (names or name=expression) with ``aggregates``."""
    names: list[str] = []
    exprs: dict[str, Any] = {}
    for v in values:
        if isinstance(v, tuple):
            exprs[v[0]] = v[1]
            names.append(v[0])
        else:
            names.append(v)
    if exprs:
        qs = qs.annotate(**exprs)
    return list(qs.order_by().values(*names).annotate(**aggregates))

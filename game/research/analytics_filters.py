"""What every analysis shares: the :class:`Filters` of the partnerships it measures, the
vocabulary (make-ups, partnership labels) and the tally queries.

A figure is computed for partnerships, so the filters select partnerships: the
*measured* partnership has the bot key ``bot`` (both its bot seats are that
bot), its make-up is one of ``makeups`` and its opponents' one of ``against``.
A round in which both partnerships are measured counts once where a figure
counts rounds, twice where it counts partnership-rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Case, F, IntegerField, Q, QuerySet, Sum, When
from django.utils import timezone

from game.models import RoundRecordRow, RoundTally
from game.research.tally_keys import ALL_TIME, SUMS

KIND_LABELS = {"H": "human", "B": "bot"}
MAKEUP_LABELS = {"BB": "bot+bot", "HB": "human+bot", "HH": "human+human"}
# Aggregate queries run side by side on PostgreSQL (all_analyses): a few more than
# the database's cores, so that one waiting on its result does not idle a core.
PARALLEL_QUERIES = 4


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def side_label(makeup: str, bot: str) -> str:
    """'human+human', 'human+BIS+SRP', 'BIS+SRP x2', 'RB+SRP & BIS+SRP' for a partnership."""
    names = [b for b in bot.split("/") if b]
    if makeup == "HH" or not names:
        return "human+human" if makeup == "HH" else MAKEUP_LABELS.get(makeup, makeup)
    if makeup == "HB":
        return f"human & {names[0]}"
    return f"{names[0]} x2" if len(names) == 1 else " & ".join(names)


def _month_after(d: date) -> date:
    return (d.replace(day=28) + timedelta(days=4)).replace(day=1)


def _weeks_and_days(first: date, end: date) -> Q:
    """The tallies of the days ``first`` .. ``end`` (exclusive), a month or less: whole
    weeks (Monday to Sunday), then the days before and after them."""
    weeks_from = first + timedelta(days=-first.weekday() % 7)
    weeks_to = end - timedelta(days=end.weekday())
    if weeks_to <= weeks_from:
        return Q(span="d", start__gte=first, start__lt=end)
    q = Q(span="w", start__gte=weeks_from, start__lt=weeks_to)
    if first < weeks_from:
        q |= Q(span="d", start__gte=first, start__lt=weeks_from)
    if weeks_to < end:
        q |= Q(span="d", start__gte=weeks_to, start__lt=end)
    return q


def span_q(first: date | None, last: date | None) -> Q:
    """The tallies that add up to exactly the days ``first``..``last`` (inclusive, open
    ends allowed): all time, or whole months, then whole weeks and days at either end."""
    if first is None and last is None:
        return Q(span="a", start=ALL_TIME)
    lo = first if first is not None else ALL_TIME
    end = last + timedelta(days=1) if last is not None else None  # exclusive
    months_from = lo if lo.day == 1 else _month_after(lo)
    months_to = end.replace(day=1) if end is not None else None
    if end is not None and months_to is not None and months_to <= months_from:
        return _weeks_and_days(lo, end)  # no whole month inside
    q = Q(span="m", start__gte=months_from)
    if months_to is not None:
        q &= Q(start__lt=months_to)
    if lo < months_from:
        q |= _weeks_and_days(lo, months_from)
    if end is not None and months_to is not None and months_to < end:
        q |= _weeks_and_days(months_to, end)
    return q


@dataclass(frozen=True)
class Filters:
    """Which partnerships an analysis measures, and which rounds an export holds.

    ``date_from``/``date_to``: inclusive days in the site's time zone; ``rules_key``: a
    rule set; ``bot``: the measured partnership's bot key; ``makeups``: its make-up;
    ``against``: its opponents' make-up; ``stand_ins``: count stand-in rounds too
    (left out by default); ``conditions``: the study conditions of the tables
    (``Table.study_condition``: ``(0,)`` for no study; empty for any); ``pilot``:
    count pilot data too (a pilot study's or a pilot participant's tables, left
    out by default); ``bands``: the measured partnership's rating band as its match
    started (``game.ratings.bands``; 0: no rated human; empty for any). An export
    holds the rounds with a measured partnership.
    """

    date_from: date | None = None
    date_to: date | None = None
    rules_key: str = ""
    bot: str = ""
    makeups: tuple[str, ...] = field(default_factory=tuple)
    against: tuple[str, ...] = field(default_factory=tuple)
    stand_ins: bool = False
    conditions: tuple[int, ...] = field(default_factory=tuple)
    pilot: bool = False
    bands: tuple[int, ...] = field(default_factory=tuple)

    def _study_q(self) -> Q:
        """The rows and tallies of the chosen study conditions, pilot data left out
        unless asked (the same column names on both)."""
        q = Q() if self.pilot else Q(pilot=False)
        if self.conditions:
            q &= Q(study_condition__in=list(self.conditions))
        return q

    # ----- rounds (exports) -----

    def _side_q(self, side: str, opp: str) -> Q:
        q = Q()
        if self.bot:
            q &= Q(**{f"bot_{side}": self.bot})
        if self.makeups:
            q &= Q(**{f"makeup_{side}__in": list(self.makeups)})
        if self.against:
            q &= Q(**{f"makeup_{opp}__in": list(self.against)})
        if self.bands:
            q &= Q(**{f"band_{side}__in": list(self.bands)})
        return q

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
        if self.bot or self.makeups or self.against or self.bands:
            q &= self._side_q("ns", "ew") | self._side_q("ew", "ns")
        if not self.stand_ins:
            q &= Q(stand_in_round=False)
        return q & self._study_q()

    def rounds(self) -> QuerySet[RoundRecordRow]:
        return RoundRecordRow.objects.filter(self.q())

    # ----- tallies (analyses) -----

    def tally_q(self, *, any_stand_in: bool = False, any_pilot: bool = False) -> Q:
        """The tallies of the measured partnerships (``any_stand_in``: both kinds of
        round; ``any_pilot``: pilot data or not)."""
        q = span_q(self.date_from, self.date_to)
        q &= replace(self, pilot=self.pilot or any_pilot)._study_q()
        if self.rules_key:
            q &= Q(rules_key=self.rules_key)
        if self.bot:
            q &= Q(bot=self.bot)
        if self.makeups:
            q &= Q(makeup__in=list(self.makeups))
        if self.against:
            q &= Q(opp_makeup__in=list(self.against))
        if self.bands:
            q &= Q(band__in=list(self.bands))
        if not (self.stand_ins or any_stand_in):
            q &= Q(stand_in=False)
        return q

    def opponents_measured_q(self) -> Q:
        """The tallies whose opponents are measured partnerships too (so that a round
        counted from both sides counts once)."""
        q = Q()
        if self.bot:
            q &= Q(same_bot=True)
        if self.makeups:
            q &= Q(opp_makeup__in=list(self.makeups))
        if self.against:
            q &= Q(makeup__in=list(self.against))
        if self.bands:
            q &= Q(opp_band__in=list(self.bands))
        return q


def tallied(
    filters: Filters,
    figure: str,
    *values: str,
    any_stand_in: bool = False,
    any_pilot: bool = False,
) -> list[dict[str, Any]]:
    """The measured partnerships' tallies of ``figure`` summed by ``values``; each group
    has the sums and ``both``: the part of ``n`` whose opponents are measured too."""
    where = filters.tally_q(any_stand_in=any_stand_in, any_pilot=any_pilot)
    qs = RoundTally.objects.filter(where, figure=figure)
    mirror = filters.opponents_measured_q()
    both: Any = F("n")  # no partnership filter: every opponent is measured too
    if mirror:
        both = Case(When(mirror, then=F("n")), default=0, output_field=IntegerField())
    # (Aggregates may not take a field's own name: summed as total_n etc., renamed back.)
    sums = {f"total_{s}": Sum(s) for s in SUMS}
    groups = qs.order_by().values(*values).annotate(**sums, total_both=Sum(both))
    return [{k.removeprefix("total_"): v for k, v in g.items()} for g in groups]


def once(groups: list[dict[str, Any]]) -> int:
    """The rounds (or matches) of tally groups that together hold both sides of each of
    their rounds: a round measured from both sides counts once."""
    return int(sum(g["n"] for g in groups) - sum(g["both"] for g in groups) // 2)

"""Human-vs-bot analyses over the stored rounds and matches (the BIS paper's section 5.2).

Every analysis takes a :class:`Filters` (date range, rule set, bot names,
partnership make-up) and returns plain dicts and lists (for the dashboard's
tables, its charts and JSON), each with its sample size. The work is done
in the database: GROUP BY aggregates over the query columns of
``RoundRecordRow`` and ``MatchResult`` (``game.round_columns``); Python only
merges a few dozen grouped rows. Per-seat analyses run one aggregate per
seat (N, E, S, W) and add them up; per-partnership ones one per side.

Vocabulary: a seat kind is ``H`` (human) or ``B`` (bot); a partnership's
*make-up* is ``BB`` (bot+bot), ``HB`` (human+bot) or ``HH`` (human+human).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db import connection, connections
from django.db.models import Case, Count, F, IntegerField, Q, QuerySet, Sum, Value, When
from django.db.models.functions import Substr
from django.utils import timezone

from bots.tournament import wilson_interval
from game.engine.round_types import RoundType
from game.models import MatchResult, RoundRecordRow
from game.round_columns import MAKEUPS, NIL_CATEGORIES, NO_NIL

SEATS = "nesw"
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


def _ratio(a: float | None, b: float | None) -> float | None:
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


def _kind(seat: int) -> Substr:
    return Substr("seat_kinds", seat + 1, 1)


def _grouped(qs: QuerySet[Any], *values: Any, **aggregates: Any) -> list[dict[str, Any]]:
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


# ----- match win rates ----------------------------------------------------------------


def win_rates(filters: Filters) -> dict[str, Any]:
    """Match win rates per partnership make-up and per pairing, with Wilson 95% intervals."""
    groups = _grouped(filters.matches(), "makeup_ns", "makeup_ew", "winner", n=Count("*"))
    played: dict[str, int] = defaultdict(int)
    won: dict[str, int] = defaultdict(int)
    pair_played: dict[tuple[str, str], int] = defaultdict(int)
    pair_won: dict[tuple[str, str], int] = defaultdict(int)  # wins of the first of the pair
    matches = 0
    for g in groups:
        ns, ew, winner, n = g["makeup_ns"], g["makeup_ew"], g["winner"], g["n"]
        matches += n
        for side, mk in ((0, ns), (1, ew)):
            played[mk] += n
            if winner == side:
                won[mk] += n
        # Pairings in a fixed order (BB before HB before HH), the first side's wins.
        first, second = sorted((ns, ew), key=MAKEUPS.index)
        first_side = 0 if ns == first else 1
        pair_played[first, second] += n
        if ns == ew:
            pair_won[first, second] += n if winner == 0 else 0  # N/S's wins when alike
        elif winner == first_side:
            pair_won[first, second] += n
    by_makeup = []
    for mk in MAKEUPS:
        if played[mk]:
            lo, hi = wilson_interval(won[mk], played[mk])
            by_makeup.append(
                {
                    "makeup": mk,
                    "label": MAKEUP_LABELS[mk],
                    "partnership_matches": played[mk],
                    "wins": won[mk],
                    "win_rate": won[mk] / played[mk],
                    "ci95": [lo, hi],
                }
            )
    pairings = []
    for (a, b), n in sorted(
        pair_played.items(), key=lambda x: (MAKEUPS.index(x[0][0]), MAKEUPS.index(x[0][1]))
    ):
        lo, hi = wilson_interval(pair_won[a, b], n)
        pairings.append(
            {
                "first": a,
                "second": b,
                "label": f"{MAKEUP_LABELS[a]} vs {MAKEUP_LABELS[b]}",
                "first_is": "North/South" if a == b else MAKEUP_LABELS[a],
                "matches": n,
                "first_wins": pair_won[a, b],
                "win_rate": pair_won[a, b] / n,
                "ci95": [lo, hi],
            }
        )
    return {"matches": matches, "by_makeup": by_makeup, "pairings": pairings}


# ----- Table 3: nil positions -----------------------------------------------------------


def nil_positions(filters: Filters) -> dict[str, Any]:
    """The paper's Table 3: per nil position, rounds, points per round and nil success
    of each partnership make-up (see ``game.round_columns`` for the positions)."""
    qs = filters.rounds()
    counts: dict[str, int] = defaultdict(int)
    cells: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: {"rounds": 0, "points": 0, "nil_bids": 0, "nil_made": 0}
    )
    # One scan: grouped by both partnerships' make-ups, each group counted for both sides.
    for g in _grouped(
        qs,
        "nil_category",
        "makeup_ns",
        "makeup_ew",
        n=Count("*"),
        **{
            f"{name}_{side}": Sum(f"{column}_{side}")
            for side, _, _ in SIDES
            for name, column in (
                ("points", "points"),
                ("nil_bids", "nil_bids"),
                ("nil_made", "nil_made"),
            )
        },  # fmt: skip
    ):
        counts[g["nil_category"]] += g["n"]
        for side, _, _ in SIDES:
            c = cells[g["nil_category"], g[f"makeup_{side}"]]
            c["rounds"] += g["n"]
            c["points"] += g[f"points_{side}"] or 0
            c["nil_bids"] += g[f"nil_bids_{side}"] or 0
            c["nil_made"] += g[f"nil_made_{side}"] or 0
    rows = []
    for cat in NIL_CATEGORIES:
        by_makeup = {}
        for mk in MAKEUPS:
            c = cells.get((cat, mk))
            if not c or not c["rounds"]:
                continue
            by_makeup[mk] = {
                "partnership_rounds": c["rounds"],
                "points_per_round": c["points"] / c["rounds"],
                "nil_bids": c["nil_bids"],
                "nil_made": c["nil_made"],
                "nil_success": _ratio(c["nil_made"], c["nil_bids"]),
            }
        rows.append({"position": cat, "rounds": counts.get(cat, 0), "by_makeup": by_makeup})
    return {"rounds": sum(counts.values()), "rows": rows}


# ----- Figures 4 and 5: the sum of the bids ----------------------------------------------


def points_by_bid_sum(filters: Filters) -> dict[str, Any]:
    """Figure 4: average points per round in no-nil rounds by the sum of the four bids,
    per partnership make-up."""
    qs = filters.rounds().filter(nil_category=NO_NIL)
    cells: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    rounds: dict[int, int] = defaultdict(int)
    # One scan: grouped by both partnerships' make-ups, each group counted for both sides.
    for g in _grouped(qs, ("bid_sum", BID_SUM), "makeup_ns", "makeup_ew", n=Count("*"),
                      points_ns=Sum("points_ns"), points_ew=Sum("points_ew")):  # fmt: skip
        rounds[g["bid_sum"]] += g["n"]
        for side, _, _ in SIDES:
            c = cells[g["bid_sum"], g[f"makeup_{side}"]]
            c[0] += g["n"]
            c[1] += g[f"points_{side}"] or 0
    rows = []
    for total in sorted(rounds):
        rows.append(
            {
                "bid_sum": total,
                "rounds": rounds[total],
                "by_makeup": {
                    mk: {
                        "partnership_rounds": cells[total, mk][0],
                        "points_per_round": cells[total, mk][1] / cells[total, mk][0],
                    }
                    for mk in MAKEUPS
                    if cells.get((total, mk), [0])[0]
                },
            }
        )
    return {"rounds": sum(rounds.values()), "rows": rows}


def bid_sum_distribution(filters: Filters) -> dict[str, Any]:
    """Figure 5: how often each sum of the four bids occurs (nil counts 0), and the mean."""
    qs = filters.rounds()
    counts = {g["bid_sum"]: g["n"] for g in _grouped(qs, ("bid_sum", BID_SUM), n=Count("*"))}
    n = sum(counts.values())
    return {
        "rounds": n,
        "mean": sum(k * v for k, v in counts.items()) / n if n else None,
        "rows": [
            {"bid_sum": k, "rounds": counts[k], "share": counts[k] / n} for k in sorted(counts)
        ],
    }


# ----- Figure 2: points per round, nil or not ---------------------------------------------


def points_histogram(filters: Filters, bin_size: int = HISTOGRAM_BIN) -> dict[str, Any]:
    """Figure 2: per seat-round, the seat's partnership's points, for seats that bid nil
    and seats that did not (bins of ``bin_size`` points, labelled by their lower edge)."""
    qs = filters.rounds()
    hist: dict[str, dict[int, int]] = {"nil": defaultdict(int), "not_nil": defaultdict(int)}
    sums = {"nil": 0, "not_nil": 0}
    for side, a, b in SIDES:
        # One query per side: the side's points and how many of its two seats bid nil.
        nils = Case(When(**{f"bid_{SEATS[a]}": 0}, then=Value(1)), default=Value(0),
                    output_field=IntegerField()) + Case(
            When(**{f"bid_{SEATS[b]}": 0}, then=Value(1)), default=Value(0),
            output_field=IntegerField())  # fmt: skip
        for g in _grouped(qs, ("nils", nils), f"points_{side}", n=Count("*")):
            points = g[f"points_{side}"]
            edge = (points // bin_size) * bin_size
            for key, seats in (("nil", g["nils"]), ("not_nil", 2 - g["nils"])):
                if seats:
                    hist[key][edge] += seats * g["n"]
                    sums[key] += points * seats * g["n"]
    out: dict[str, Any] = {"bin_size": bin_size}
    for key, h in hist.items():
        n = sum(h.values())
        out[key] = {
            "seat_rounds": n,
            "mean": sums[key] / n if n else None,
            "bins": [{"from": k, "to": k + bin_size - 1, "count": h[k]} for k in sorted(h)],
        }
    seen = set(hist["nil"]) | set(hist["not_nil"])
    out["edges"] = list(range(min(seen), max(seen) + 1, bin_size)) if seen else []
    return out


# ----- the ten SRP round types ---------------------------------------------------------------


def round_types(filters: Filters) -> dict[str, Any]:
    """Per SRP round type (seen from each seat) and seat kind: seat-rounds, the seat's
    partnership's average points, and how often that partnership made or was set."""
    qs = filters.rounds()
    cells: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for side, a, b in SIDES:
        made = Case(When(**{f"made_{side}": True}, then=Value(1)), default=Value(0),
                    output_field=IntegerField())  # fmt: skip
        # One query per side, grouped by both seats' types and kinds.
        la, lb = SEATS[a], SEATS[b]
        for g in _grouped(qs, f"round_type_{la}", ("kind_a", _kind(a)), f"round_type_{lb}",
                          ("kind_b", _kind(b)), n=Count("*"), points=Sum(f"points_{side}"),
                          made=Sum(made)):  # fmt: skip
            for letter, kind in ((la, "kind_a"), (lb, "kind_b")):
                c = cells[g[f"round_type_{letter}"], g[kind]]
                c[0] += g["n"]
                c[1] += g["points"] or 0
                c[2] += g["made"] or 0
    rows = []
    for t in RoundType:
        by_kind = {}
        total = [0, 0, 0]
        for kind in ("H", "B"):
            c = cells.get((int(t), kind))
            if c and c[0]:
                by_kind[kind] = _type_cell(c)
                total = [x + y for x, y in zip(total, c, strict=True)]
        rows.append({"type": int(t), "label": t.label, "all": _type_cell(total),
                     "by_kind": by_kind})  # fmt: skip
    return {"seat_rounds": sum(r["all"]["seat_rounds"] for r in rows), "rows": rows}


def _type_cell(c: list[int]) -> dict[str, Any]:
    n, points, made = c
    return {
        "seat_rounds": n,
        "points_per_round": _ratio(points, n),
        "make_rate": _ratio(made, n),
        "set_rate": _ratio(n - made, n),
    }


# ----- bidding accuracy --------------------------------------------------------------------


def _player_label(kind: str, bot: str) -> str:
    return "human" if kind == "H" else (bot or "bot")


SeatGroup = tuple[int, str, str, int, bool, int, int, int]


def seat_bids(filters: Filters, seats: tuple[int, ...] = (0, 1, 2, 3)) -> list[SeatGroup]:
    """Seat-rounds grouped by (seat, kind, bot, dealer, blind, bid, tricks), with counts.

    One query per seat; the bidding accuracy and the nil bid analyses both read it.
    """
    qs = filters.rounds()
    out: list[SeatGroup] = []
    for seat in seats:
        letter = SEATS[seat]
        for g in _grouped(
            qs,
            ("kind", _kind(seat)),
            f"bot_{letter}",
            "dealer",
            ("blind", Substr("blind_nils", seat + 1, 1)),
            f"bid_{letter}",
            f"tricks_{letter}",
            n=Count("*"),
        ):
            out.append(
                (seat, g["kind"], g[f"bot_{letter}"] or "bot", g["dealer"], g["blind"] == "1",
                 g[f"bid_{letter}"], g[f"tricks_{letter}"], g["n"])
            )  # fmt: skip
    return out


def _whos(kind: str, bot: str) -> list[str]:
    return [KIND_LABELS[kind], bot] if kind == "B" else [KIND_LABELS[kind]]


def bidding_accuracy(filters: Filters, groups: list[SeatGroup] | None = None) -> dict[str, Any]:
    """Tricks taken minus bid, for non-nil bids, per seat kind and per bot name."""
    if groups is None:
        groups = seat_bids(filters)
    dist: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for _seat, kind, bot, _dealer, _blind, bid, tricks, n in groups:
        if bid <= 0:
            continue
        for who in _whos(kind, bot):
            dist[who][tricks - bid] += n
    rows = []
    for who in sorted(dist, key=lambda w: (w not in KIND_LABELS.values(), w)):
        d = dist[who]
        n = sum(d.values())
        rows.append(
            {
                "player": who,
                "is_kind": who in KIND_LABELS.values(),
                "bids": n,
                "mean": sum(k * v for k, v in d.items()) / n,
                "exact": sum(v for k, v in d.items() if k == 0) / n,
                "over": sum(v for k, v in d.items() if k > 0) / n,
                "under": sum(v for k, v in d.items() if k < 0) / n,
                "distribution": {str(k): d[k] for k in sorted(d)},
            }
        )
    return {"rows": rows}


def _sub(a: str, b: str) -> Any:
    return F(a) - F(b)


# ----- nil bids -----------------------------------------------------------------------------


def nil_bids(filters: Filters, groups: list[SeatGroup] | None = None) -> dict[str, Any]:
    """Nil bid frequency and success (blind nil apart) by seat kind, bot and bidding position.

    The bidding position is 1 for the seat left of the dealer (who bids first) to 4 (dealer).
    """
    if groups is None:
        groups = seat_bids(filters)
    # (who, position) -> [seat-rounds, nil bids, nil made, blind bids, blind made]
    cells: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for seat, kind, bot, dealer, blind, bid, tricks, n in groups:
        position = (seat - dealer - 1) % 4 + 1
        nil = bid == 0
        made = nil and tricks == 0
        for who in _whos(kind, bot):
            for pos in (position, 0):  # 0: every position
                c = cells[who, pos]
                c[0] += n
                if nil and blind:
                    c[3] += n
                    c[4] += n if made else 0
                elif nil:
                    c[1] += n
                    c[2] += n if made else 0
    players = sorted({w for w, _ in cells}, key=lambda w: (w not in KIND_LABELS.values(), w))
    rows = []
    for who in players:
        by_position = []
        for pos in range(5):
            c = cells.get((who, pos))
            if not c:
                continue
            by_position.append(
                {
                    "position": pos or "all",
                    "seat_rounds": c[0],
                    "nil_bids": c[1],
                    "nil_frequency": _ratio(c[1], c[0]),
                    "nil_made": c[2],
                    "nil_success": _ratio(c[2], c[1]),
                    "blind_nil_bids": c[3],
                    "blind_nil_made": c[4],
                    "blind_nil_success": _ratio(c[4], c[3]),
                }
            )
        rows.append({"player": who, "is_kind": who in KIND_LABELS.values(),
                     "positions": by_position})  # fmt: skip
    return {"rows": rows}


# ----- everything, for the dashboard -----------------------------------------------------------


def summary(filters: Filters) -> dict[str, Any]:
    qs = filters.rounds()
    return {
        "rounds": qs.count(),
        "matches": filters.matches().count(),
    }


def _in_own_connection(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    finally:
        connections.close_all()  # this thread's connection, opened for this query


def _side_by_side() -> bool:
    return connection.vendor == "postgresql" and not connection.in_atomic_block


def _run_all(jobs: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run independent queries, at once on PostgreSQL (one connection each), else in turn.

    Inside a transaction (tests) other connections would not see its rows: in turn then.
    """
    if not _side_by_side():
        return {name: fn() for name, fn in jobs.items()}
    with ThreadPoolExecutor(max_workers=PARALLEL_QUERIES) as pool:
        futures = {name: pool.submit(_in_own_connection, fn) for name, fn in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def all_analyses(filters: Filters) -> dict[str, Any]:
    """Every analysis for one set of filters (what the dashboard shows).

    The analyses are a dozen aggregate queries over the same rows, independent
    of each other: PostgreSQL answers them side by side on its cores.
    """
    jobs: dict[str, Callable[[], Any]] = {
        "win_rates": lambda: win_rates(filters),
        "bid_sums": lambda: bid_sum_distribution(filters),
        "nil_positions": lambda: nil_positions(filters),
        "points_by_bid_sum": lambda: points_by_bid_sum(filters),
        "points_histogram": lambda: points_histogram(filters),
        "round_types": lambda: round_types(filters),
    }
    for seat in range(4):
        jobs[f"seat_bids_{seat}"] = lambda seat=seat: seat_bids(filters, (seat,))
    done = _run_all(jobs)
    groups = [g for seat in range(4) for g in done[f"seat_bids_{seat}"]]
    wins, bid_sums = done["win_rates"], done["bid_sums"]
    return {
        "summary": {"rounds": bid_sums["rounds"], "matches": wins["matches"]},
        "win_rates": wins,
        "nil_positions": done["nil_positions"],
        "points_by_bid_sum": done["points_by_bid_sum"],
        "bid_sums": bid_sums,
        "points_histogram": done["points_histogram"],
        "round_types": done["round_types"],
        "bidding_accuracy": bidding_accuracy(filters, groups),
        "nil_bids": nil_bids(filters, groups),
    }


def rule_sets() -> list[dict[str, Any]]:
    """The rule sets of the stored rounds: key, a short label, and the number of rounds."""
    from game.engine.rules import Rules

    out = []
    groups = _grouped(RoundRecordRow.objects.all(), "rules_key", n=Count("*"))
    default = Rules().to_dict()
    for g in sorted(groups, key=lambda g: -g["n"]):
        rules = (
            RoundRecordRow.objects.filter(rules_key=g["rules_key"])
            .values_list("rules", flat=True)
            .first()
        ) or {}
        changed = [f"{k}={v}" for k, v in sorted(rules.items()) if default.get(k) != v]
        label = f"goal {rules.get('winning_goal')}/{rules.get('losing_goal')}"
        other = [c for c in changed if not c.startswith(("winning_goal", "losing_goal"))]
        if other:
            label += ", " + ", ".join(other)
        out.append({"key": g["rules_key"], "label": label, "rounds": g["n"]})
    return out


def bot_names_in_use() -> list[str]:
    """The bots that sat at any table (the seats table is small: no scan of the rounds)."""
    from game.models import Seat

    return sorted(
        Seat.objects.filter(kind=Seat.Kind.BOT)
        .exclude(bot_name="")
        .order_by()
        .values_list("bot_name", flat=True)
        .distinct()
    )

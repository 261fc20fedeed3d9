"""Round-log exports (CSV, JSON Lines); reading one back in is ``game.research.imports``.

Both exports stream: rows are read in primary-key order in batches
(keyset pagination, ``BATCH`` rows per query, plus one query for the
batch's seats and one for its match results), and each line is yielded as
it is made, so memory stays flat however many rounds there are. Players
appear only as pseudonymous ids (:func:`pseudonym`); the deal seed is never
exported. The columns and the line format are documented in
``docs/exports.md``.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db.models import IntegerField, TextField
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from game.engine.cards import SEAT_LETTERS
from game.engine.round_types import RoundType
from game.external_bots import protocol_of
from game.models import MatchResult, RoundRecordRow, Seat
from game.ratings.models import RatingChange
from game.replays.models import RoundAnalysis
from game.research import round_rows
from game.research.analytics import Filters
from game.research.round_columns import NIL_CATEGORIES, SEATS, actor
from game.research.tally_keys import seat_sums

BATCH = 2000
EXPORT_FORMAT = "spades-export/1"
IMPORTED_PREFIX = "import:"
SEAT_NAMES = SEATS  # the column suffixes n, e, s, w
ROUND_TYPE_LABELS = {int(t): t.label for t in RoundType}


def pseudonym(kind: str, ident: Any) -> str:
    """A stable pseudonymous id for a user (``kind`` 'user') or a guest ('guest').

    An HMAC-SHA256 of the id keyed with the SECRET_KEY, truncated: the same
    player gets the same id in every export of this site, and it cannot be
    turned back into the account without the key.
    """
    key = settings.SECRET_KEY.encode()
    digest = hmac.new(key, f"spades-player/{kind}/{ident}".encode(), hashlib.sha256)
    return "p_" + digest.hexdigest()[:16]


def _player_of(seat: dict[str, Any]) -> str | None:
    if seat["kind"] == Seat.Kind.BOT:
        return None
    if seat["user_id"] is not None:
        return pseudonym("user", seat["user_id"])
    if seat["guest_id"].startswith(IMPORTED_PREFIX):
        return seat["guest_id"][len(IMPORTED_PREFIX) :]  # already a pseudonym
    if seat["guest_id"]:
        return pseudonym("guest", seat["guest_id"])
    return None


Start = tuple[float | None, float | None]


def _ratings_at_start(tables: set[int]) -> dict[tuple[int, str, Any], Start]:
    """Each rated human's (mu, sigma) as the match began, by (table, 'u'/'g', id):
    the rating's history row of that match (docs/ratings.md); unrated matches have none."""
    out: dict[tuple[int, str, Any], Start] = {}
    for c in (
        RatingChange.objects.filter(table_id__in=tables)
        .exclude(rating__kind="bot")
        .values("table_id", "rating__user_id", "rating__guest_id", "mu_before", "sigma_before")
    ):
        start = (c["mu_before"], c["sigma_before"])
        if c["rating__user_id"] is not None:
            out[(c["table_id"], "u", c["rating__user_id"])] = start
        if c["rating__guest_id"]:
            out[(c["table_id"], "g", c["rating__guest_id"])] = start
    return out


def _rating_of(seat: dict[str, Any], starts: dict[tuple[int, str, Any], Start]) -> Start:
    if seat["user_id"] is not None:
        return starts.get((seat["table_id"], "u", seat["user_id"]), (None, None))
    return starts.get((seat["table_id"], "g", seat["guest_id"]), (None, None))


ROW_FIELDS = (
    "id", "table_id", "table__public_id", "round_number", "finished_at", "rules_key",
    "dealer", "seat_kinds", "stand_in_moves", "bid_n", "bid_e", "bid_s", "bid_w",
    "blind_nils", "bid_total", "tricks_n", "tricks_e", "tricks_s", "tricks_w", "points_ns",
    "points_ew", "score_ns", "score_ew", "bags_ns", "bags_ew", "nil_position_ns",
    "nil_position_ew", "makeup_ns", "makeup_ew", "nil_category", "made_ns", "made_ew",
    "round_type_n", "round_type_e", "round_type_s", "round_type_w",
    "stand_in_n", "stand_in_e", "stand_in_s", "stand_in_w", "stand_in_bids", "stand_in_round",
)  # fmt: skip


def iter_rounds(
    filters: Filters, batch: int = BATCH, *, record_text: bool = False
) -> Iterator[dict[str, Any]]:
    """The filtered rounds in id order, as dicts with ``seats`` and ``match_result`` added.

    The CSV needs only the record's ``bags_before`` (read in the database);
    with ``record_text`` each row has the whole record as JSON text
    (``record_text``), spliced into the JSON line without decoding it.
    """
    round_rows.record_pending()  # rounds ended in the last second: exact to this moment
    qs = filters.rounds().order_by("id")
    if record_text:
        qs = qs.annotate(record_text=Cast("record", TextField()))
        fields = (*ROW_FIELDS, "record_text")
    else:
        # Two numbers out of the record, read in the database (no JSON decoding here).
        qs = qs.annotate(
            bags_before_ns=Cast(KT("record__bags_before__0"), IntegerField()),
            bags_before_ew=Cast(KT("record__bags_before__1"), IntegerField()),
        )
        fields = (*ROW_FIELDS, "bags_before_ns", "bags_before_ew")
    last = 0
    while True:
        rows = list(qs.filter(id__gt=last).values(*fields)[:batch])
        if not rows:
            return
        last = rows[-1]["id"]
        tables = {r["table_id"] for r in rows}
        seats: dict[int, dict[int, dict[str, Any]]] = {}
        for s in Seat.objects.filter(table_id__in=tables).values(
            "table_id", "position", "kind", "bot_name", "user_id", "guest_id"
        ):
            seats.setdefault(s["table_id"], {})[s["position"]] = s
        results = {
            m["table_id"]: m
            for m in MatchResult.objects.filter(table_id__in=tables).values(
                "table_id", "finished_at", "winner", "score_ns", "score_ew", "bags_ns",
                "bags_ew", "rounds",
            )
        }  # fmt: skip
        starts = _ratings_at_start(tables)
        # the stored double-dummy analyses (game/replays/), where there is one
        analyses = {
            a["round_id"]: a["result"]
            for a in RoundAnalysis.objects.filter(
                round_id__in=[r["id"] for r in rows], result__isnull=False
            ).values("round_id", "result")
        }
        seat_lists: dict[int, list[dict[str, Any]]] = {}
        for r in rows:
            r["analysis"] = analyses.get(r["id"])
            listed = seat_lists.get(r["table_id"])
            if listed is None:
                table_seats = seats.get(r["table_id"], {})
                listed = []
                for p in range(4):
                    s = table_seats.get(p)
                    is_bot = r["seat_kinds"][p] == "B"
                    mu, sigma = (None, None) if s is None or is_bot else _rating_of(s, starts)
                    listed.append(
                        {
                            "seat": SEAT_LETTERS[p],
                            "kind": "bot" if is_bot else "human",
                            "bot": (s["bot_name"] if s else None) if is_bot else None,
                            # An external bot's protocol (docs/bot-protocol.md), else "".
                            "protocol": protocol_of(s["bot_name"] if s and is_bot else None),
                            "player": None if s is None or is_bot else _player_of(s),
                            "rating_mu": mu,
                            "rating_sigma": sigma,
                        }
                    )
                seat_lists[r["table_id"]] = listed
            # Who really played this round: per seat, on top of who sat there.
            r["seats"] = [
                {**s, "actor": actor(kind, plays, bid == "1"), "stand_in_plays": plays,
                 "stand_in_bid": bid == "1"}
                for s, kind, plays, bid in zip(
                    listed, r["seat_kinds"], (r[f"stand_in_{x}"] for x in SEAT_NAMES),
                    r["stand_in_bids"], strict=True,
                )
            ]  # fmt: skip
            m = results.get(r["table_id"])
            r["match_result"] = m if m is not None and m["rounds"] == r["round_number"] else None
            yield r


# ----- CSV ------------------------------------------------------------------------------

CSV_COLUMNS: list[str] = [
    "round_id", "table", "round_number", "finished_at", "rules_key", "winning_goal",
    "losing_goal", "rules", "dealer",
    *[f"{c}_{s}" for s in SEAT_NAMES for c in ("kind", "bot", "player")],
    *[f"{c}_{s}" for s in SEAT_NAMES for c in ("bid", "blind", "tricks")],
    "bid_total",
    *[f"{c}_{p}" for p in ("ns", "ew") for c in (
        "makeup", "score_before", "bags_before", "contract", "made", "points", "score_after",
        "bags_after")],
    *[f"round_type_{s}" for s in SEAT_NAMES],
    "nil_position_ns", "nil_position_ew", "nil_category",
    *[f"nil_{s}" for s in SEAT_NAMES],
    "stand_in_moves",
    *[f"actor_{s}" for s in SEAT_NAMES],
    *[f"stand_in_plays_{s}" for s in SEAT_NAMES],
    *[f"stand_in_bid_{s}" for s in SEAT_NAMES],
    "stand_in_round", "match_winner",
    *[f"rating_{c}_{s}" for s in SEAT_NAMES for c in ("mu", "sigma")],
    *[f"dd_{c}_lost_{s}" for c in ("points", "tricks") for s in SEAT_NAMES],
    *[f"protocol_{s}" for s in SEAT_NAMES],
]  # fmt: skip


_RULES_TEXT: dict[str, str] = {}


def _rules_text(key: str, rules: dict[str, Any]) -> str:
    text = _RULES_TEXT.get(key)
    if text is None:
        text = _RULES_TEXT[key] = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return text


def _rules_of(key: str) -> dict[str, Any]:
    rules = _RULES.get(key)
    if rules is None:
        rules = RoundRecordRow.objects.filter(rules_key=key).values_list("rules", flat=True)[0]
        _RULES[key] = rules
    return rules


_RULES: dict[str, dict[str, Any]] = {}


def csv_row(r: dict[str, Any]) -> list[Any]:
    rules = _rules_of(r["rules_key"])
    bids = [r[f"bid_{s}"] for s in SEAT_NAMES]
    tricks = [r[f"tricks_{s}"] for s in SEAT_NAMES]
    nil_allowed = rules.get("nil", True)
    out: list[Any] = [
        r["id"],
        r["table__public_id"],
        r["round_number"],
        r["finished_at"].isoformat(),
        r["rules_key"],
        rules.get("winning_goal"),
        rules.get("losing_goal"),
        _rules_text(r["rules_key"], rules),
        SEAT_LETTERS[r["dealer"]],
    ]
    for seat in r["seats"]:
        out += [seat["kind"], seat["bot"] or "", seat["player"] or ""]
    for p in range(4):
        out += [bids[p], int(r["blind_nils"][p] == "1"), tricks[p]]
    out.append(r["bid_total"])
    bags_before = (r["bags_before_ns"], r["bags_before_ew"])
    for p, name in enumerate(("ns", "ew")):
        points, after = r[f"points_{name}"], r[f"score_{name}"]
        contract = sum(b for b in (bids[p], bids[p + 2]) if b > 0 or not nil_allowed)
        out += [
            r[f"makeup_{name}"], after - points, bags_before[p], contract,
            int(r[f"made_{name}"]), points, after, r[f"bags_{name}"],
        ]  # fmt: skip
    out += [ROUND_TYPE_LABELS[r[f"round_type_{s}"]] for s in SEAT_NAMES]
    out += [r["nil_position_ns"], r["nil_position_ew"], r["nil_category"]]
    for p in range(4):
        # 'made' / 'set' for a nil bid, '' for any other bid
        out.append(("made" if tricks[p] == 0 else "set") if nil_allowed and bids[p] == 0 else "")
    out.append(r["stand_in_moves"])
    out += [seat["actor"] for seat in r["seats"]]
    out += [seat["stand_in_plays"] for seat in r["seats"]]
    out += [int(seat["stand_in_bid"]) for seat in r["seats"]]
    out.append(int(r["stand_in_round"]))
    m = r["match_result"]
    out.append("" if m is None else ("NS" if m["winner"] == 0 else "EW"))
    for seat in r["seats"]:
        out += ["" if seat["rating_mu"] is None else seat["rating_mu"],
                "" if seat["rating_sigma"] is None else seat["rating_sigma"]]  # fmt: skip
    a = r["analysis"]
    if a is None:  # not analysed (yet): empty
        out += [""] * 8
    else:
        sums = seat_sums(a)
        out += sums["dd_points_lost"] + sums["dd_tricks_lost"]
    out += [seat["protocol"] for seat in r["seats"]]
    return out


def iter_csv(filters: Filters) -> Iterator[str]:
    """The CSV export, a header line then one line per round (RFC 4180, CRLF ends)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(CSV_COLUMNS)
    for n, r in enumerate(iter_rounds(filters), start=1):
        writer.writerow(csv_row(r))
        if n % 200 == 0:
            yield buf.getvalue()
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue()


# ----- JSON Lines -----------------------------------------------------------------------


def jsonl_item(r: dict[str, Any]) -> dict[str, Any]:
    """The line's object without its ``record`` (which ``jsonl_line`` splices in as text)."""
    m = r["match_result"]
    return {
        "format": EXPORT_FORMAT,
        "round_id": r["id"],
        "table": r["table__public_id"],
        "round_number": r["round_number"],
        "finished_at": r["finished_at"].isoformat(),
        "seats": r["seats"],
        "stand_in_moves": r["stand_in_moves"],
        "stand_in_round": r["stand_in_round"],
        "match_result": None
        if m is None
        else {
            "finished_at": m["finished_at"].isoformat(),
            "winner": "NS" if m["winner"] == 0 else "EW",
            "scores": [m["score_ns"], m["score_ew"]],
            "bags": [m["bags_ns"], m["bags_ew"]],
            "rounds": m["rounds"],
        },
        "analysis": _analysis_item(r["analysis"]),
    }


def _analysis_item(a: dict[str, Any] | None) -> dict[str, Any] | None:
    """The double-dummy analysis per card and its sums per seat (docs/exports.md)."""
    if a is None:
        return None
    cards = [{"seat": c["seat"], "card": c["card"], "dd_points_lost": c["points_lost"],
              "dd_tricks_lost": c["tricks_lost"]} for c in a["cards"]]  # fmt: skip
    return {"cards": cards, **seat_sums(a), "makeable": a["makeable"]}


def jsonl_line(r: dict[str, Any]) -> str:
    head = json.dumps(jsonl_item(r), separators=(",", ":"))
    return head[:-1] + ',"record":' + r["record_text"] + "}\n"


def iter_jsonl(filters: Filters) -> Iterator[str]:
    """The JSON Lines export: one round (with its full record) per line."""
    chunk: list[str] = []
    for r in iter_rounds(filters, record_text=True):
        chunk.append(jsonl_line(r))
        if len(chunk) >= 200:
            yield "".join(chunk)
            chunk = []
    yield "".join(chunk)


__all__ = [
    "CSV_COLUMNS", "NIL_CATEGORIES", "iter_csv", "iter_jsonl", "iter_rounds", "pseudonym",
]  # fmt: skip

"""The replay page of a finished round, ``/rounds/<id>/``, and its analysis as JSON.

Who may see a replay: the match's players (its seats' players), its host,
staff, and a browser that opened the match's share link (the table's invite
link, ``lobby:join``). Others get 403. Only
finished rounds have a stored row, so a round still being played has no
replay at all: the table's live hands never reach these pages.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from game import identity, seating
from game.engine.cards import SEAT_LETTERS, format_card, format_hand
from game.models import RoundRecordRow, Table
from game.research import round_rows

from .analysis import LARGE_FROM, SMALL_FROM, AnalysisError, playing_start
from .models import RoundAnalysis


def _player_ids(request: HttpRequest) -> tuple[Any, str]:
    """(user, guest id) of the browser: the lobby's identity (``game.identity``)."""
    guest_id, _ = identity.guest_of(request.session)
    user = request.user if request.user.is_authenticated else None
    return user, guest_id


def may_replay(request: HttpRequest, table: Table) -> bool:
    """Staff, the match's players and host, or a browser with its share link."""
    if request.user.is_authenticated and request.user.is_staff:
        return True
    if table.pk in request.session.get(identity.INVITES_KEY, []):
        return True
    user, guest_id = _player_ids(request)
    if user is not None and table.host_id == user.pk:
        return True
    return seating.seat_of(table, user=user, guest_id=guest_id or None) is not None


def _row_for(request: HttpRequest, round_id: int) -> RoundRecordRow:
    row = get_object_or_404(RoundRecordRow.objects.select_related("table"), pk=round_id)
    if not may_replay(request, row.table):
        raise PermissionError
    return row


def replay_data(row: RoundRecordRow) -> dict[str, Any]:
    """What the page draws: the hands at the first lead, the bids, the passes
    and every card with its trick, the result."""
    doc = row.record
    try:
        start, plays = playing_start(doc)
    except AnalysisError as e:
        raise Http404(str(e)) from None
    cards = []
    for i, play in enumerate(plays):
        trick = doc["tricks"][i // 4]
        winner = trick["winner"] if i % 4 == 3 else None
        cards.append({"seat": SEAT_LETTERS[play.seat], "card": format_card(play.card),
                      "trick": i // 4 + 1, "winner": winner})  # fmt: skip
    return {
        "round_number": doc["round_number"],
        "dealer": doc["dealer"],
        "hands": {SEAT_LETTERS[s]: format_hand(start.hands[s]).split() for s in range(4)},
        "bids": doc["bids"],
        "passes": doc["passes"],
        "cards": cards,
        "tricks_won": doc["tricks_won"],
        "result": doc["result"],
        "scores_before": doc["scores_before"],
    }


def _analysis_of(row: RoundRecordRow) -> dict[str, Any]:
    stored = RoundAnalysis.objects.filter(round=row).first()
    if stored is None:
        return {"ready": False}
    alternatives = stored.alternatives
    # a second pass past its budget keeps {"error": ...} (tasks.add_alternatives)
    over = alternatives.get("error", "") if isinstance(alternatives, dict) else ""
    return {"ready": True, "error": stored.error, "analysis": stored.result,
            "alternatives": None if over else alternatives,
            "alternatives_error": over}  # fmt: skip


@require_GET
def replay_page(request: HttpRequest, round_id: int) -> HttpResponse:
    try:
        row = _row_for(request, round_id)
    except PermissionError:
        return render(request, "replays/refused.html", status=403)
    config = {
        "replay": replay_data(row),
        "stored": _analysis_of(row),
        "analysisUrl": reverse("replays:analysis", args=[row.pk]),
        "marks": {"small": SMALL_FROM, "large": LARGE_FROM},
    }
    marks = {"small": SMALL_FROM, "large": LARGE_FROM, "large_less": LARGE_FROM - 1}
    rounds = RoundRecordRow.objects.filter(table=row.table).order_by("round_number")
    earlier = rounds.filter(round_number__lt=row.round_number).last()
    later = rounds.filter(round_number__gt=row.round_number).first()
    return render(request, "replays/replay.html", {"row": row, "config": config, **marks,
                  "earlier": earlier, "later": later})  # fmt: skip


@require_GET
def analysis_json(request: HttpRequest, round_id: int) -> JsonResponse:
    try:
        row = _row_for(request, round_id)
    except PermissionError:
        return JsonResponse({"error": "you may not see this round"}, status=403)
    return JsonResponse(_analysis_of(row))


@require_GET
def table_round(request: HttpRequest, public_id: str, number: int) -> HttpResponse:
    """The score sheet's link: a table's finished round by its number."""
    table = get_object_or_404(Table, public_id=public_id)
    row = RoundRecordRow.objects.filter(table=table, round_number=number).first()
    if row is None:
        round_rows.record_pending(tables=[table.pk])  # its row is written a second after
        row = RoundRecordRow.objects.filter(table=table, round_number=number).first()
    if row is None:
        raise Http404("that round is not finished")
    return redirect("replays:replay", row.pk)


@staff_member_required
@require_GET
def recent_rounds(request: HttpRequest) -> HttpResponse:
    """Staff: the latest stored rounds with their analysis's state, for the dashboard."""
    rows = list(
        RoundRecordRow.objects.select_related("table", "analysis").order_by("-pk")[:50]
    )  # fmt: skip
    return render(request, "replays/recent.html", {"rows": rows})

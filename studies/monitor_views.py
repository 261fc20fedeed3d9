"""The staff's study monitor, under /dashboard/studies/ (``studies.urls_monitor``).

Staff only, the dashboard's own check (``staff_required``): the list of
studies, one study as it runs (``studies.monitor``), its JSON for the page's
poll, and the export (``studies.export``) as a zip. The zip "with payments"
(the one file with raw recruitment IDs) needs the permission
``studies.view_payments`` besides: without it the link is absent and the URL
answers 403. ``?pilot=1`` keeps the pilot participants in (the export
leaves them out otherwise).
"""

from __future__ import annotations

import tempfile
import zipfile
from datetime import datetime
from pathlib import Path

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from game.research.views_dashboard import staff_required
from studies import intake, monitor, sweep
from studies.export import export_study
from studies.models import Study

PAYMENTS_PERMISSION = "studies.view_payments"


def may_see_payments(request: HttpRequest) -> bool:
    return bool(request.user.has_perm(PAYMENTS_PERMISSION))


@require_GET
@staff_required
def studies(request: HttpRequest) -> HttpResponse:
    found = Study.objects.order_by("-created_at")
    rows = [
        {"study": s, "participants": s.participants.count(), "tables": s.tables.count()}
        for s in found
    ]
    return render(request, "studies/monitor_list.html", {"rows": rows})


def page_of(request: HttpRequest) -> int:
    """The tables' page asked for (``?page=N``); anything else is the first."""
    page = request.GET.get("page", "")
    return int(page) if page.isdigit() and 0 < len(page) < 6 else 1


@require_GET
@staff_required
def study(request: HttpRequest, slug: str) -> HttpResponse:
    found = get_object_or_404(Study, slug=slug)
    return render(
        request,
        "studies/monitor.html",
        {
            "study": found,
            "data": monitor.snapshot(found, page_of(request)),
            "payments": may_see_payments(request),
        },
    )


# The monitor's forms: what each op does (studies.intake) and what it says when done.
OPS = {
    "open": (lambda s, p, by, why: intake.set_intake(s, Study.Intake.OPEN, by, why), "opened"),
    "pause": (lambda s, p, by, why: intake.set_intake(s, Study.Intake.PAUSED, by, why), "paused"),
    "close": (lambda s, p, by, why: intake.set_intake(s, Study.Intake.CLOSED, by, why), "closed"),
    "advance": (intake.advance, "seated at a table now"),
    "drop": (intake.drop, "dropped"),
    "exclude": (intake.exclude, "excluded from the analyses"),
}


@require_POST
@staff_required
def act(request: HttpRequest, slug: str) -> HttpResponse:
    """One of the researcher's actions (``OPS``) from the monitor, audited with
    the staff member's name and reason; a refusal says why and changes nothing."""
    found = get_object_or_404(Study, slug=slug)
    op = request.POST.get("op", "")
    pseudonym = request.POST.get("pseudonym", "").strip()
    back = reverse("study_monitor:study", args=[found.slug])
    if op not in OPS:
        messages.error(request, "Nothing was done: that is not an action of the monitor.")
        return redirect(back)
    action, done = OPS[op]
    try:
        action(found, pseudonym, request.user.get_username(), request.POST.get("reason", ""))
    except intake.IntakeError as error:
        messages.error(request, f"Nothing was done: {error}.")
    else:
        who = pseudonym if op in ("advance", "drop", "exclude") else "the study"
        messages.success(request, f"Done: {who} {done}.")
    return redirect(back)


@require_GET
@staff_required
def study_json(request: HttpRequest, slug: str) -> JsonResponse:
    found = get_object_or_404(Study, slug=slug)
    sweep.maybe_sweep()  # a researcher watching: the figures are as of now
    response = JsonResponse(monitor.snapshot(found, page_of(request)))
    response["Cache-Control"] = "no-store"
    return response


def zip_of(
    study: Study, *, with_payments: bool, include_pilot: bool
) -> tempfile.SpooledTemporaryFile:
    """The export's files, zipped into a temporary file (rewound)."""
    # Handed to the FileResponse, which closes it.
    spool = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)  # noqa: SIM115
    with tempfile.TemporaryDirectory() as folder:
        paths = export_study(
            study, Path(folder), with_payments=with_payments, include_pilot=include_pilot
        )
        with zipfile.ZipFile(spool, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in paths:
                archive.write(path, arcname=f"{study.slug}/{path.name}")
    spool.seek(0)
    return spool


def _download(request: HttpRequest, slug: str, *, with_payments: bool) -> HttpResponse:
    found = get_object_or_404(Study, slug=slug)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    include_pilot = request.GET.get("pilot") == "1"
    kind = ("-with-payments" if with_payments else "") + ("-with-pilots" if include_pilot else "")
    response = FileResponse(
        zip_of(found, with_payments=with_payments, include_pilot=include_pilot),
        as_attachment=True,
        filename=f"study-{found.slug}{kind}-{stamp}.zip",
        content_type="application/zip",
    )
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@staff_required
def export_zip(request: HttpRequest, slug: str) -> HttpResponse:
    return _download(request, slug, with_payments=False)


@require_GET
@staff_required
def export_zip_with_payments(request: HttpRequest, slug: str) -> HttpResponse:
    if not may_see_payments(request):
        raise PermissionDenied("payments need the permission studies.view_payments")
    return _download(request, slug, with_payments=True)

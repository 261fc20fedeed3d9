"""The way in: the recruitment link, consent or refusal, and the polite
pages of a study that turns newcomers away (paused, closed, full).

Before consent nothing is stored, not even in the session: the consent form
has no ``action``, so it posts back to the link itself and the raw ID
travels in the URL only, never in a page (``studies.views`` has the pages
after it).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from studies import intake, participants
from studies.assignment import StudyFull
from studies.models import Study
from studies.views import (
    no_study,
    page_url,
    paragraphs,
    participant_of,
    problem,
    refused,
    remember,
    study_or_none,
)


@never_cache
@require_http_methods(["GET", "POST"])
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """The recruitment link: the consent form for a newcomer, their page for
    someone who has consented already (found by the ID, or by the session)."""
    study = study_or_none(slug)
    if study is None:
        return no_study(request)
    id_param = study.definition["recruitment"]["id_param"]
    if (
        request.method == "GET"
        and id_param not in request.GET
        and (from_session := participant_of(request, study)) is not None
    ):
        # The study's URL without the link's query: the session knows them.
        return redirect(page_url(from_session))
    try:
        known = participants.enter(study, request.GET)
    except participants.RecruitmentError as error:
        # Its message names the parameter in plain words, never the value.
        message = (
            f"{str(error)[0].upper()}{str(error)[1:]}. Please open the study again from "
            "the link on the recruitment site (for example Prolific), in this browser. If "
            "this keeps happening, write to the researchers through the recruitment site."
        )
        return problem(request, 400, "This study link is not complete", message, study=study)
    if known is None and (why := intake.turned_away(study)) is not None:
        return not_taking_part(request, study, why)  # nothing stored, a newcomer
    if request.method == "GET":
        if known is not None:
            remember(request, known)
            return redirect(page_url(known))
        context = {"study": study, "consent": paragraphs(study.definition["consent"])}
        return render(request, "studies/consent.html", context)
    choice = request.POST.get("choice")
    if choice == "agree":
        # Consent is idempotent: a second tab's "I agree" finds the same participant.
        try:
            participant = participants.consent(study, request.GET)
        except StudyFull:
            return not_taking_part(request, study, "full")
        remember(request, participant)
        return redirect(page_url(participant))
    if known is not None:
        return refused(request, known)  # declining after agreeing: nothing changes
    if choice == "decline":
        participants.decline(study)
        return redirect("studies:declined", slug=study.slug)
    return problem(request, 400, "Please choose an answer", "Nothing was recorded.", study=study)


TURNED_AWAY = {
    "paused": (
        "The study is paused for a moment",
        "The researchers have paused new arrivals for a short while. Nothing was stored "
        "about you. Please try the same link again in a few minutes.",
    ),
    "closed": (
        "This study is closed",
        "The study takes no new participants. Nothing was stored about you. Please return "
        "to the recruitment site; you may want to return the study there.",
    ),
    "full": (
        "This study has all the participants it needs",
        "Every place in the study is taken. Nothing was stored about you. Please return to "
        "the recruitment site; you may want to return the study there.",
    ),
}


def not_taking_part(request: HttpRequest, study: Study, why: str) -> HttpResponse:
    """A newcomer turned away politely (paused: 503 with a retry; else 200)."""
    title, message = TURNED_AWAY[why]
    response = problem(request, 503 if why == "paused" else 200, title, message, study=study)
    if why == "paused":
        response["Retry-After"] = "120"
    return response


@never_cache
@require_GET
def declined(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_none(slug)
    if study is None:
        return no_study(request)
    return_url = study.definition["completion"].get("no_consent_url") or ""
    return render(request, "studies/declined.html", {"study": study, "return_url": return_url})

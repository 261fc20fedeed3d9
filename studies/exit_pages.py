"""A participant's way out: the questionnaire, the debrief and the completion
page (the pages of ``questionnaire``, ``debrief`` and ``completed``).

The questionnaire's answers are checked here, all of them before any is
stored: a Likert choice must be one of its scale's (sent as its number from
1), a text answer no longer than its item's maximum; every item is required
unless the study file says ``required = false`` (an optional item left
empty stores nothing). A form that fails is shown again with what is wrong
and stores nothing. A form that passes stores its answers and moves the participant in one
transaction (``studies.stages.answer_questionnaire``), so a form sent twice
is refused the second time and stores nothing more. The completion page is
the last: every earlier page leads to it and every earlier form is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from game import identity
from studies import stages, stand_in
from studies.models import Participant, Study
from studies.views import page_url, paragraphs, participant_page

Stage = Participant.Stage
REDIRECT_SECONDS = 8  # the completion page's wait before it goes to the platform
FIELD = "item-{}"  # a questionnaire item's form field, by the item's id


def check_answers(
    items: Sequence[Mapping[str, Any]], posted: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """(values, problems), both by item id, of a questionnaire form: a Likert
    item's value is its choice's number from 1, a text item's its text
    (surrounding space removed, line breaks as ``\\n``)."""
    values: dict[str, str] = {}
    problems: dict[str, str] = {}
    for item in items:
        given = (posted.get(FIELD.format(item["id"])) or "").replace("\r\n", "\n").strip()
        if not given:
            if item.get("required", True):
                problems[item["id"]] = "Please answer this question."
        elif "scale" in item:
            if not given.isdigit() or not 1 <= int(given) <= len(item["scale"]):
                problems[item["id"]] = "Please choose one of the answers offered."
            else:
                values[item["id"]] = str(int(given))
        elif len(given) > item["max_length"]:
            problems[item["id"]] = (
                f"Please shorten this answer to {item['max_length']} characters "
                f"(it has {len(given)})."
            )
        else:
            values[item["id"]] = given
    return values, problems


def questionnaire_items(study: Study) -> list[dict[str, Any]]:
    return list((study.definition.get("questionnaire") or {}).get("items") or [])


@participant_page("questionnaire")
@require_http_methods(["GET", "POST"])
def questionnaire(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    items = questionnaire_items(study)
    given: Mapping[str, str] = {}
    problems: dict[str, str] = {}
    if request.method == "POST":
        values, problems = check_answers(items, request.POST)
        if not problems:
            participant = stages.answer_questionnaire(participant, values)
            return redirect(page_url(participant))
        given = {item["id"]: request.POST.get(FIELD.format(item["id"]), "") for item in items}
    shown = []
    for number, item in enumerate(items, 1):
        field = FIELD.format(item["id"])
        entry = {
            "number": number,
            "field": field,
            "text": item["text"],
            "problem": problems.get(item["id"], ""),
            "given": given.get(item["id"], ""),
            "required": item.get("required", True),
        }
        if "scale" in item:
            entry["choices"] = [(str(i), label) for i, label in enumerate(item["scale"], 1)]
        else:
            entry["max_length"] = item["max_length"]
        shown.append(entry)
    context = {"study": study, "items": shown, "problems": len(problems)}
    return render(request, "studies/questionnaire.html", context)


def debrief_text(study: Study, participant: Participant) -> str:
    """The condition's debrief, or the stand-in's where one sat at the
    participant's table under a name (the condition's text may be untrue then)."""
    return stand_in.debrief_of(participant)


@participant_page("debrief")
@require_http_methods(["GET", "POST"])
def debrief(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    if request.method == "POST":
        participant = stages.move(participant, Stage.DEBRIEF, Stage.COMPLETED)
        return redirect(page_url(participant))
    context = {
        "study": study,
        "debrief": paragraphs(debrief_text(study, participant)),
        "reference": participant.pseudonym,
    }
    return render(request, "studies/debrief.html", context)


@participant_page("completion")
@require_GET
def completion(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    completion = study.definition["completion"]
    request.session.pop(identity.BOUND_TABLE_KEY, None)  # done: free to play elsewhere
    context = {
        "study": study,
        "code": completion["code"],
        "redirect_url": completion["redirect_url"],
        "seconds": REDIRECT_SECONDS,
        "reference": participant.pseudonym,  # what a withdrawal request quotes
    }
    return render(request, "studies/completion.html", context)

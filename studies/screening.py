"""The screening questions (``[screening]`` in the study file): asked right
after consent, before anything else. An answer outside a question's
``eligible`` ends the study for the participant (``screened_out``, with its
own code and redirect); the answers are kept either way, as the consent
covers them. A form not fully answered changes nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from studies import stages
from studies.models import Answer, Participant, Study
from studies.views import page_url, participant_page

Stage = Participant.Stage


def read(
    questions: Sequence[Mapping[str, Any]], form: Mapping[str, str]
) -> tuple[list[int], dict[str, str]]:
    """(unanswered question numbers from 1, the chosen option's text by field)."""
    unanswered, chosen = [], {}
    for number, question in enumerate(questions, 1):
        value = form.get(f"s{number}", "")
        if not value.isdigit() or int(value) >= len(question["options"]):
            unanswered.append(number)
        else:
            chosen[f"s{number}"] = question["options"][int(value)]
    return unanswered, chosen


def eligible(questions: Sequence[Mapping[str, Any]], chosen: Mapping[str, str]) -> bool:
    return all(chosen[f"s{n}"] in q["eligible"] for n, q in enumerate(questions, 1))


@participant_page("screening")
@require_http_methods(["GET", "POST"])
def screening(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    questions = study.definition["screening"]["questions"]
    unanswered: list[int] = []
    given: Mapping[str, str] = {}
    if request.method == "POST":
        unanswered, chosen = read(questions, request.POST)
        if not unanswered:
            to = Stage.INSTRUCTIONS if eligible(questions, chosen) else Stage.SCREENED_OUT
            answers = [Answer(kind="screening", item_id=k, value=v) for k, v in chosen.items()]
            participant = stages.move(participant, Stage.SCREENING, to, answers=answers)
            return redirect(page_url(participant))
        given = request.POST
    context = {
        "study": study,
        "unanswered": unanswered,
        "questions": [
            {
                "number": number,
                "text": question["text"],
                "options": [(str(i), text) for i, text in enumerate(question["options"])],
                "chosen": given.get(f"s{number}"),
                "unanswered": number in unanswered,
            }
            for number, question in enumerate(questions, 1)
        ],
    }
    return render(request, "studies/screening.html", context, status=400 if unanswered else 200)

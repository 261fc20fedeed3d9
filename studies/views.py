"""A participant's pages, from the recruitment link to the waiting room.

The link (``/study/<slug>/?PROLIFIC_PID=...``, the names from the study
file) is the only way in. Before consent nothing is stored, not even in the
session: the consent form has no ``action``, so it posts back to the link
itself and the raw ID travels in the URL only, never in a page. After
consent the session holds the study's slug and the participant's pseudonym
(``SESSION_KEY``), never the raw ID, and every later URL is free of it.

Each stage has one page (``PAGE_OF_STAGE``): a GET of another page sends the
participant to theirs, so a reload or a second tab finds them where they
are; a POST to another page, or one ``studies.stages`` finds out of order,
is refused and changes nothing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from studies import playing, stages, stand_in, waiting_room
from studies.models import Participant, Study

log = logging.getLogger(__name__)
SESSION_KEY = "studies"  # {study slug: pseudonym}
Stage = Participant.Stage

# The page that shows each stage. Playing has no page of its own yet: the
# waiting page says so. The way out's pages are in studies.exit_pages.
PAGE_OF_STAGE: dict[str, str] = {
    # The instructions page enters "instructions" (or "screening", first).
    Stage.CONSENTED: "instructions",
    Stage.SCREENING: "screening",
    Stage.INSTRUCTIONS: "instructions",
    Stage.QUIZ: "quiz",
    Stage.WAITING: "waiting",
    Stage.PLAYING: "table",  # sends them on to the table page
    Stage.QUESTIONNAIRE: "questionnaire",
    Stage.DEBRIEF: "debrief",
    Stage.COMPLETED: "completion",
    Stage.FAILED_QUIZ: "end",
    Stage.DROPPED: "end",
    Stage.SCREENED_OUT: "end",
}
DEFAULT_SCREENED_OUT_TEXT = (
    "Thank you for your time. This study is looking for participants with other "
    "answers to those questions, so it ends here for you."
)
DEFAULT_FAILURE_TEXT = (
    "Thank you for your time. The answers to the questions about the game were not "
    "all right within the attempts allowed, so this study ends here."
)

ParticipantView = Callable[[HttpRequest, Study, Participant], HttpResponse]


# ----- helpers ----------------------------------------------------------------------


def paragraphs(text: str) -> list[str]:
    """A study text as plain paragraphs (blank lines apart, its lines joined):
    the template escapes each, so the file can never inject markup."""
    blocks = (" ".join(block.split()) for block in text.strip().split("\n\n"))
    return [block for block in blocks if block]


def page_url(participant: Participant) -> str:
    return reverse(f"studies:{PAGE_OF_STAGE[participant.stage]}", args=[participant.study.slug])


def problem(
    request: HttpRequest,
    status: int,
    title: str,
    message: str,
    link: tuple[str, str] | None = None,
    study: Study | None = None,
) -> HttpResponse:
    """A plain page that says what went wrong and what to do (never the ID)."""
    context = {"title": title, "message": message, "link": link, "study": study}
    return render(request, "studies/problem.html", context, status=status)


def study_or_none(slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()


def no_study(request: HttpRequest) -> HttpResponse:
    return problem(
        request,
        404,
        "There is no such study",
        "This study link does not lead to a study on this site. Check the link you "
        "were given, or contact the researchers through the platform that sent you.",
    )


def remember(request: HttpRequest, participant: Participant) -> None:
    known = dict(request.session.get(SESSION_KEY) or {})
    known[participant.study.slug] = participant.pseudonym
    request.session[SESSION_KEY] = known


def participant_of(request: HttpRequest, study: Study) -> Participant | None:
    pseudonym = (request.session.get(SESSION_KEY) or {}).get(study.slug)
    if not pseudonym:
        return None
    found = Participant.objects.filter(study=study, pseudonym=pseudonym)
    return found.select_related("study", "condition").first()


def refused(request: HttpRequest, participant: Participant) -> HttpResponse:
    log.info(
        "study %s: participant %s at %s: a form to %s refused",
        participant.study.slug,
        participant.pseudonym,
        participant.stage,
        request.path,
    )
    return problem(
        request,
        409,
        "This form was already sent or is out of date",
        "Nothing was changed. This can happen after using the Back button, "
        "reloading a page or answering in a second tab.",
        ("Continue where you are", page_url(participant)),
        participant.study,
    )


def participant_page(name: str) -> Callable[[ParticipantView], Callable[..., HttpResponse]]:
    """A stage's page: the study and the session's participant looked up, and a
    participant at another stage sent to their page (GET) or refused (POST)."""

    def wrap(view: ParticipantView) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        @never_cache
        def page(request: HttpRequest, slug: str) -> HttpResponse:
            study = study_or_none(slug)
            if study is None:
                return no_study(request)
            participant = participant_of(request, study)
            if participant is None:
                return problem(
                    request,
                    403,
                    "Please open the study from its link",
                    "This browser has not joined this study. Open the study from the link "
                    "on the recruitment platform, in this browser.",
                    study=study,
                )
            if PAGE_OF_STAGE[participant.stage] != name:
                if request.method == "POST":
                    return refused(request, participant)
                return redirect(page_url(participant))
            try:
                return view(request, study, participant)
            except stages.OutOfOrder:
                # Another request moved them meanwhile: show where they are now.
                participant.refresh_from_db()
                if request.method == "POST":
                    return refused(request, participant)
                return redirect(page_url(participant))

        return page

    return wrap


# ----- the stages -------------------------------------------------------------------


@participant_page("instructions")
@require_http_methods(["GET", "POST"])
def instructions(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    if request.method == "POST":
        after = Stage.QUIZ if study.definition.get("quiz") else Stage.WAITING
        participant = stages.move(participant, Stage.INSTRUCTIONS, after)
        return redirect(page_url(participant))
    if participant.stage == Stage.CONSENTED:
        if study.definition.get("screening"):  # the screening questions come first
            participant = stages.move(participant, Stage.CONSENTED, Stage.SCREENING)
            return redirect(page_url(participant))
        # Entered when first shown: the stage's time is when reading began.
        participant = stages.move(participant, Stage.CONSENTED, Stage.INSTRUCTIONS)
    # The condition's own instructions where the file gives them (where it seats
    # the participant, say), else the study's.
    own = study.definition["conditions"][participant.condition.position].get("instructions")
    context = {"study": study, "instructions": paragraphs(own or study.definition["instructions"])}
    return render(request, "studies/instructions.html", context)


def wrong_of(request: HttpRequest, count: int) -> list[int]:
    """The question numbers the last attempt got wrong (``?wrong=1,3``): shown
    only, so a hand-edited value changes nothing but the page."""
    numbers = request.GET.get("wrong", "").split(",")
    return sorted({int(n) for n in numbers if n.isdigit() and 1 <= int(n) <= count})


def right_choices(
    participant: Participant, questions: list[dict[str, Any]], wrong: list[int]
) -> dict[str, str]:
    """The option numbers, by field (``q1``...), of the last attempt's answers
    that were right (stored with the attempt; the page's ``wrong`` aside)."""
    last = participant.answers.filter(kind="quiz", attempt=participant.quiz_attempts)
    chosen = dict(last.values_list("item_id", "value"))
    kept = {}
    for number, question in enumerate(questions, 1):
        value = chosen.get(f"q{number}")
        if number not in wrong and value == question["answer"]:
            kept[f"q{number}"] = str(question["options"].index(value))
    return kept


@participant_page("quiz")
@require_http_methods(["GET", "POST"])
def quiz(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    definition = study.definition["quiz"]
    questions, allowed = definition["questions"], definition["attempts"]
    context: dict[str, Any] = {"study": study, "wrong": [], "unanswered": [], "chosen": {}}
    if request.method == "POST":
        attempt = request.POST.get("attempt", "")
        if not attempt.isdigit():
            raise stages.OutOfOrder("a quiz form without its attempt")
        unanswered, wrong = stages.grade(questions, request.POST)
        if not unanswered:
            chosen = {
                f"q{n}": question["options"][int(request.POST[f"q{n}"])]
                for n, question in enumerate(questions, 1)
            }
            participant = stages.answer_quiz(participant, int(attempt), wrong, allowed, chosen)
            if participant.stage != Stage.QUIZ or not wrong:
                return redirect(page_url(participant))
            numbers = ",".join(map(str, wrong))
            return redirect(f"{reverse('studies:quiz', args=[study.slug])}?wrong={numbers}")
        # Not every question answered: no attempt used, the choices kept.
        context["unanswered"] = unanswered
        context["chosen"] = {
            f"q{n}": request.POST.get(f"q{n}") for n in range(1, len(questions) + 1)
        }
    elif participant.quiz_attempts:
        context["wrong"] = wrong_of(request, len(questions))
        # The last attempt's right answers stay chosen: only the wrong ones are asked again.
        context["chosen"] = right_choices(participant, questions, context["wrong"])
    context["questions"] = [
        {
            "number": number,
            "text": question["text"],
            "options": [(str(i), text) for i, text in enumerate(question["options"])],
            "chosen": context["chosen"].get(f"q{number}"),
            "wrong": number in context["wrong"],
            "unanswered": number in context["unanswered"],
        }
        for number, question in enumerate(questions, 1)
    ]
    context["attempt"] = participant.quiz_attempts
    context["attempts_left"] = allowed - participant.quiz_attempts
    return render(request, "studies/quiz.html", context)


@participant_page("waiting")
@require_GET
def waiting(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    participant = waiting_room.advance(participant)  # a table may be ready now
    if PAGE_OF_STAGE[participant.stage] != "waiting":
        return redirect(page_url(participant))
    context = {
        "study": study,
        "stage": participant.stage,
        "waiting": waiting_room.waiting_count(participant),
        "state_url": reverse("studies:state", args=[study.slug]),
        "page_url": page_url(participant),
    }
    return render(request, "studies/waiting.html", context)


@participant_page("table")
@require_GET
def table(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    """A seated participant: their session made their seat's guest, and on to
    the table page (or to their next page if the match is over)."""
    participant = waiting_room.advance(participant)
    url = playing.table_url(participant) if participant.stage == Stage.PLAYING else None
    if url is None:
        return redirect(page_url(participant))
    playing.sit_in_session(request.session, participant)
    return redirect(url)


@participant_page("end")
@require_GET
def end(request: HttpRequest, study: Study, participant: Participant) -> HttpResponse:
    failure = (study.definition.get("quiz") or {}).get("failure_text") or DEFAULT_FAILURE_TEXT
    completion = study.definition["completion"]
    if participant.stage == Stage.SCREENED_OUT:
        failure = study.definition["screening"]["failure_text"] or DEFAULT_SCREENED_OUT_TEXT
    context = {
        "study": study,
        "stage": participant.stage,
        "failure": paragraphs(failure),
        # This ending's own code and way back to the platform, if the file gives them.
        "code": (completion.get("codes") or {}).get(participant.stage, ""),
        "redirect_url": (completion.get("redirects") or {}).get(participant.stage, ""),
        # What a withdrawal request quotes (manage.py withdraw_participant).
        "reference": participant.pseudonym,
        "dropped": playing.dropped_text(participant),
    }
    if stand_in.dropped_after_deception(participant):
        # Shown bots under players' names, then dropped: told here, as nowhere else.
        context["debrief"] = paragraphs(stand_in.debrief_of(participant))
    return render(request, "studies/end.html", context)


@never_cache
@require_GET
def state(request: HttpRequest, slug: str) -> JsonResponse:
    """The waiting page's poll: the stage, the page that shows it and the
    number waiting in the participant's condition (``studies.waiting_room``)."""
    study = study_or_none(slug)
    participant = participant_of(request, study) if study is not None else None
    if participant is None:
        return JsonResponse({"error": "this browser has not joined this study"}, status=403)
    participant = waiting_room.advance(participant)
    if participant.stage == Stage.PLAYING:
        playing.sit_in_session(request.session, participant)
    return JsonResponse({**waiting_room.state(participant), "page": page_url(participant)})

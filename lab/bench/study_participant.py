"""One simulated participant of ``manage.py bench_study``: the whole path of a
study as a browser goes it, over HTTP and the table's websocket.

The participant follows the pages the server sends them to, as the page's
own scripts and a person clicking would: the recruitment link's consent form
(``choice=agree`` with the page's CSRF token), the instructions, the quiz
(the right answers), the waiting room (its page, then the poll of
``/study/<slug>/state/`` every 4 s as ``static/js/study_waiting.js`` does,
until it names another page), the table page and its websocket (a random
legal action from the seat's own view after a think time, the ``act`` frame
as ``static/js/table.js`` sends it), then ``/study/<slug>/table/``, which
leads to the questionnaire once the match is over, the debrief if the
condition has one, and the completion page.

Every request is timed under its page's name; a failure (a 5xx or another
status the page never answers with, an exception, a time-out) is counted by
its kind and the page where it happened, and the participant then does what
a person would: waits a moment and opens the recruitment link again, which
leads someone known to their page (``studies.way_in.entry``). Static files
are not fetched (a browser has them cached after the first page; Daphne
serves none without DEBUG).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from lab.bench.study_http import Browser, ProtocolError, Response

POLL_SECONDS = 4.0  # static/js/study_waiting.js EVERY_MS
RELOAD_SECONDS = 2.0  # a person's pause before opening the link again after an error
PING_SECONDS = 60.0  # table.js keeps a seated page's table from being closed as abandoned
_ATTEMPT = re.compile(r'name="attempt" value="(\d+)"')
_TABLE_PAGE = re.compile(r"^/t/([\w-]+)/$")


class Failed(Exception):
    """A step went wrong: ``kind`` is what (``HTTP 500``, ``timeout``, ...)."""

    def __init__(self, kind: str, stage: str) -> None:
        super().__init__(f"{kind} at {stage}")
        self.kind = kind
        self.stage = stage


@dataclass
class StudyPlan:
    """What the participants know of the study: its slug, the right quiz
    answers' option numbers and the questionnaire's items."""

    slug: str
    quiz_answers: list[int]
    items: list[dict[str, Any]]
    id_param: str = "PROLIFIC_PID"
    study_param: str = "STUDY_ID"
    session_param: str = "SESSION_ID"


@dataclass
class Settings:
    origin: str  # http://127.0.0.1:PORT: Daphne, or nginx in front of several
    think: tuple[float, float] = (0.5, 1.5)  # seconds before each decision at the table
    retries: int = 3  # reloads of the link after failures before giving up
    request_timeout: float = 30.0
    seat_timeout: float = 300.0  # waiting longer than this: stranded
    match_timeout: float = 900.0


@dataclass
class Figures:
    """Everything the participants measured, shared by all of them."""

    pages: dict[str, list[float]] = field(default_factory=dict)  # name -> ms
    act_to_state: list[float] = field(default_factory=list)  # ms
    seat_seconds: list[float] = field(default_factory=list)
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)  # (stage, kind)
    endings: Counter[str] = field(default_factory=Counter)
    reloads: int = 0
    acts: int = 0
    resyncs: int = 0
    outcomes: list[dict[str, Any]] = field(default_factory=list)

    def timed(self, name: str, ms: float) -> None:
        self.pages.setdefault(name, []).append(ms)

    def error(self, stage: str, kind: str) -> None:
        self.errors[(stage, kind)] += 1


def page_name(slug: str, path: str) -> str:
    """The page a path shows: consent, instructions, ..., table page."""
    if _TABLE_PAGE.match(path):
        return "table page"
    prefix = f"/study/{slug}/"
    if path == prefix:
        return "consent"
    if path.startswith(prefix):
        name = path[len(prefix) :].strip("/")
        return {"state": "poll", "table": "to table", "completed": "completion"}.get(name, name)
    return path


class Participant:
    def __init__(
        self, index: int, raw_id: str, plan: StudyPlan, settings: Settings, figures: Figures,
        rng: random.Random,
    ) -> None:  # fmt: skip
        self.index = index
        self.raw_id = raw_id
        self.plan = plan
        self.settings = settings
        self.figures = figures
        self.rng = rng
        self.browser = Browser(settings.origin, timeout=settings.request_timeout)
        query = urlencode({
            plan.id_param: raw_id,
            plan.study_param: "bench-study",
            plan.session_param: f"session-{raw_id}",
        })  # fmt: skip
        self.link = f"/study/{plan.slug}/?{query}"
        self.consented = False
        self.last_page = "arrival"
        self.waiting_since: float | None = None
        self.seated_after: float | None = None
        self.table: str | None = None

    # ----- requests ----------------------------------------------------------------

    async def send(self, method: str, url: str, form: dict[str, str] | None = None) -> Response:
        """One request, timed under its page's name; what failed raises Failed."""
        path = urlsplit(url).path
        name = page_name(self.plan.slug, path) + (" POST" if method == "POST" else "")
        try:
            if method == "POST":
                response = await self.browser.post(url, form or {})
            else:
                response = await self.browser.get(url)
        except TimeoutError as e:
            raise Failed("timeout", name) from e
        except (OSError, ProtocolError, asyncio.IncompleteReadError) as e:
            raise Failed(type(e).__name__, name) from e
        self.figures.timed(name, response.elapsed_ms)
        if response.status >= 400:
            raise Failed(f"HTTP {response.status}", name)
        return response

    async def go(self, url: str) -> Response:
        """GET ``url`` and follow its redirects, each hop timed as its page."""
        for _ in range(10):
            response = await self.send("GET", url)
            if response.status not in (301, 302, 303, 307) or response.location is None:
                return response
            url = response.location
        raise Failed("redirect loop", page_name(self.plan.slug, urlsplit(url).path))

    async def submit(self, page: Response, form: dict[str, str], url: str = "") -> Response:
        """Post a page's form (with its CSRF token) and go where the answer sends."""
        token = page.csrf_token()
        name = page_name(self.plan.slug, urlsplit(page.url).path)
        if token is None:
            raise Failed("no CSRF token in the page", name)
        answer = await self.send("POST", url or page.url, {"csrfmiddlewaretoken": token, **form})
        if answer.status != 302 or answer.location is None:
            raise Failed(f"form not taken (HTTP {answer.status})", f"{name} POST")
        return await self.go(answer.location)

    # ----- the path ----------------------------------------------------------------

    async def run(self, arrive_at: float) -> None:
        """Arrive at ``arrive_at`` (loop time) and go the whole way, or give up."""
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, arrive_at - loop.time()))
        started = time.perf_counter()
        reloads = 0
        ending = ""
        while not ending:
            try:
                try:
                    ending = await self.walk()
                except Failed:
                    raise
                except Exception as e:  # anything else: counted, never the run's end
                    raise Failed(f"client {type(e).__name__}", self.last_page) from e
            except Failed as failure:
                self.figures.error(failure.stage, failure.kind)
                self.last_page = failure.stage
                if reloads >= self.settings.retries:
                    ending = f"stranded at {failure.stage}"
                    break
                reloads += 1
                self.figures.reloads += 1
                await asyncio.sleep(RELOAD_SECONDS)
        self.figures.endings[ending] += 1
        self.figures.outcomes.append({
            "participant": self.index,
            "ending": ending,
            "consented": self.consented,
            "seated_after_s": None if self.seated_after is None else round(self.seated_after, 2),
            "table": self.table,
            "reloads": reloads,
            "seconds": round(time.perf_counter() - started, 1),
        })  # fmt: skip

    async def walk(self) -> str:
        """From the recruitment link to the end (or a failure): how it ended."""
        page = await self.go(self.link)
        while True:
            path = urlsplit(page.url).path
            name = page_name(self.plan.slug, path)
            self.last_page = name
            if name == "consent":
                page = await self.submit(page, {"choice": "agree"})
                self.consented = True
            elif name == "instructions":
                self.consented = True  # a reload after consent lands here
                page = await self.submit(page, {})
            elif name == "quiz":
                # Time to seat runs from sending the right answers.
                self.waiting_since = self.waiting_since or time.perf_counter()
                page = await self.submit(page, self.quiz_form(page))
            elif name == "waiting":
                page = await self.wait_for_seat(page)
            elif name == "table page":
                if self.seated_after is None and self.waiting_since is not None:
                    self.seated_after = time.perf_counter() - self.waiting_since
                    self.figures.seat_seconds.append(self.seated_after)
                self.table = _TABLE_PAGE.match(path).group(1)  # type: ignore[union-attr]
                await self.play(self.table)
                page = await self.go(f"/study/{self.plan.slug}/table/")
                if page_name(self.plan.slug, urlsplit(page.url).path) == "table page":
                    await asyncio.sleep(1.0)  # the match's end not seen by the site yet
            elif name == "questionnaire":
                page = await self.submit(page, self.questionnaire_form())
            elif name == "debrief":
                page = await self.submit(page, {})
            elif name == "completion":
                return "completed"
            elif name in ("end", "declined"):
                return name
            else:
                raise Failed(f"unexpected page {path}", name)

    def quiz_form(self, page: Response) -> dict[str, str]:
        found = _ATTEMPT.search(page.text)
        form = {"attempt": found.group(1) if found else "0"}
        form.update({f"q{n}": str(a) for n, a in enumerate(self.plan.quiz_answers, 1)})
        return form

    def questionnaire_form(self) -> dict[str, str]:
        form = {}
        for item in self.plan.items:
            if "scale" in item:
                form[f"item-{item['id']}"] = str(self.rng.randint(1, len(item["scale"])))
            else:
                form[f"item-{item['id']}"] = f"bench participant {self.index}"
        return form

    async def wait_for_seat(self, page: Response) -> Response:
        """Poll the state every 4 s until it names another page; go there."""
        here = page.url
        state_url = f"/study/{self.plan.slug}/state/"
        deadline = time.perf_counter() + self.settings.seat_timeout
        while time.perf_counter() < deadline:
            await asyncio.sleep(POLL_SECONDS)
            answer = await self.send("GET", state_url)
            try:
                state = json.loads(answer.body)
            except ValueError as e:
                raise Failed("poll answer not JSON", "poll") from e
            target = state.get("page")
            if target and urlsplit(target).path != urlsplit(here).path:
                return await self.go(target)
        raise Failed("no seat within the seat timeout", "waiting")

    # ----- the match ---------------------------------------------------------------

    async def play(self, public_id: str) -> None:
        """The table's websocket until the match is over, as table.js plays it."""
        match = Match(self, public_id)
        try:
            await asyncio.wait_for(match.run(), self.settings.match_timeout)
        except TimeoutError as e:
            raise Failed("match not over within the match timeout", "match") from e


class Match:
    """One seat's socket: each state frame drawn (the view kept), a decision
    made after a think time when the seat has legal actions, ``act`` sent
    with the version it was made at, and the time until the state frame with
    a newer version comes back on this socket."""

    def __init__(self, participant: Participant, public_id: str) -> None:
        self.p = participant
        self.public_id = public_id
        self.version = -1
        self.view: dict[str, Any] | None = None
        self.sent_at: float | None = None  # an act on its way (table.js's `pending`)
        self.sent_version = -1
        self.decision: asyncio.Task[None] | None = None
        self.decided_version = -1
        self.last_resync = 0.0
        self.over = asyncio.Event()

    async def run(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        origin = self.p.settings.origin
        url = origin.replace("http://", "ws://", 1) + f"/ws/table/{self.public_id}/"
        retry = 0
        while not self.over.is_set():
            try:
                async with connect(
                    url,
                    origin=origin,  # type: ignore[arg-type]
                    additional_headers={"Cookie": self.p.browser.cookie_header()},
                    compression=None, proxy=None, ping_interval=None, open_timeout=20,
                    close_timeout=2, max_size=2**22,
                ) as ws:  # fmt: skip
                    retry = 0
                    if self.version >= 0:  # a reconnection: as table.js's onopen
                        await ws.send(json.dumps({"type": "resync", "version": self.version}))
                    pinger = asyncio.create_task(self.ping(ws))
                    try:
                        async for message in ws:
                            await self.on_frame(ws, message)
                            if self.over.is_set():
                                return
                    finally:
                        pinger.cancel()
                        if self.decision is not None:
                            self.decision.cancel()
                            self.decision = None
                    code = ws.close_code
                self.p.figures.error("match", f"socket closed ({code})")
            except ConnectionClosed as e:
                code = e.rcvd.code if e.rcvd is not None else None
                self.p.figures.error("match", f"socket closed ({code})")
            except Failed:
                raise
            except Exception as e:  # refused handshakes (HTTP 403, 5xx), OSError, time-outs
                code = None
                self.p.figures.error("match", f"socket {type(e).__name__}")
            if code in (4403, 4404, 4429):  # table.js: refusals a retry would repeat
                raise Failed(f"socket refused ({code})", "match")
            self.sent_at = None
            retry += 1
            if retry > 5:
                raise Failed("socket lost", "match")
            await asyncio.sleep(min(10.0, 0.4 * 2**retry) + self.p.rng.random() * 0.3)

    async def ping(self, ws: Any) -> None:
        while True:
            await asyncio.sleep(PING_SECONDS)
            await ws.send('{"type": "ping"}')

    async def on_frame(self, ws: Any, message: str) -> None:
        now = time.perf_counter()
        frame = json.loads(message)
        kind = frame.get("type")
        if kind == "error":
            self.p.figures.error("match", f"error frame ({frame.get('code')})")
            self.sent_at = None  # table.js: pending cleared; the person tries again
            self.decided_version = -1
            self.consider(ws)
            return
        if kind != "state" or frame["version"] < self.version:
            return
        version = int(frame["version"])
        if self.version >= 0 and version > self.version + 1 and now - self.last_resync > 2.0:
            self.last_resync = now  # a gap: ask for a fresh view, as table.js does
            self.p.figures.resyncs += 1
            await ws.send(json.dumps({"type": "resync", "version": self.version}))
        self.version = version
        self.view = frame["view"]
        if self.sent_at is not None and version > self.sent_version:
            self.p.figures.act_to_state.append((now - self.sent_at) * 1000.0)
            self.sent_at = None
        table = self.view.get("table") or {}
        if self.view.get("match_winner") is not None or table.get("status") in (
            "finished",
            "abandoned",
        ):
            self.over.set()
            return
        self.consider(ws)

    def consider(self, ws: Any) -> None:
        """A decision after a think time, when the seat has one to make now."""
        view = self.view
        if view is None or self.sent_at is not None or not view.get("legal_actions"):
            return
        if self.decided_version == view["version"]:
            return  # already thinking about this version
        if self.decision is not None:
            self.decision.cancel()
        self.decided_version = view["version"]
        self.decision = asyncio.create_task(self.decide(ws, view))

    async def decide(self, ws: Any, view: dict[str, Any]) -> None:
        think = self.p.rng.uniform(*self.p.settings.think)
        await asyncio.sleep(think)
        now = self.view
        if now is None or now["version"] != view["version"] or self.sent_at is not None:
            return  # a newer state came meanwhile: considered anew there
        action = self.p.rng.choice(now["legal_actions"])
        frame = {
            "type": "act", "action": action, "version": view["version"],
            "think_ms": round(think * 1000),
        }  # fmt: skip
        self.sent_version = view["version"]
        self.sent_at = time.perf_counter()
        self.p.figures.acts += 1
        with contextlib.suppress(Exception):  # a closed socket: its reader reconnects
            await ws.send(json.dumps(frame))

"""Chromium through Playwright's sync API, for the `browser` tests.

We drive Debian's Chromium (/usr/bin/chromium) rather than a browser that
Playwright downloads, so `make test` works where only package registries are
reachable.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.support.services import unavailable

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # we run as root in a container
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"
# Assertions wait up to this long: generous, so a loaded machine does not fail them.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="package")
def chromium() -> Iterator[Browser]:
    """One headless Chromium for all browser tests, closed after the last one."""
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} not found: install Debian's chromium (`make test` does, as root)")
    # Playwright's sync API keeps an asyncio loop running in this thread, so
    # Django takes the test's own database calls (live_server's flush between
    # tests) for calls from async code and refuses them. They are not: allow
    # them while Playwright runs, and only then, so other tests keep the check.
    previous = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = previous


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    """A fresh browser context (no cookies from other tests) and one page in it."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def screenshot_dir(repo_root: Path) -> Path:
    directory = repo_root / "artifacts" / "screenshots"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


# ----- a real ASGI server (Daphne) for the pages that use websockets --------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"daphne did not answer at {url}:\n{log.read_text()[-3000:]}")


class Server(str):
    """The server's URL, and where its database is (for tests that check what it stored)."""

    database: Path


@pytest.fixture(scope="module")
def daphne_server(
    request: pytest.FixtureRequest, repo_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Daphne in a subprocess on a free port, over its own SQLite file (migrated).

    The in-memory channel layer and the in-process bot runner live inside that
    process, exactly as in ``make run``; bots move with no pacing delay. The
    URL (``http://127.0.0.1:PORT``) is what the tests browse; the server is
    stopped after the module. A module's ``DAPHNE_ENV`` dict adds to (or
    overrides) the server's environment: a bot delay, say.
    """
    workdir = tmp_path_factory.mktemp("daphne")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
        "SPADES_BOT_DELAY": "0",
        "DJANGO_SETTINGS_MODULE": "spadesite.settings",
        "DJANGO_DEBUG": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for key in ("REDIS_URL", ASYNC_UNSAFE):
        env.pop(key, None)
    env.update(getattr(request.module, "DAPHNE_ENV", {}))
    python = sys.executable
    subprocess.run(
        [python, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=repo_root,
        env=env,
        check=True,
        timeout=120,
    )
    port = _free_port()
    log = workdir / "daphne.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                python,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "spadesite.asgi:application",
            ],  # fmt: skip
            cwd=repo_root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = Server(f"http://127.0.0.1:{port}")
    url.database = workdir / "db.sqlite3"
    try:
        _wait_for(url + "/", process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def new_page(chromium: Browser) -> Iterator[Callable[..., Page]]:
    """Make pages in fresh browser contexts (separate cookies: separate players)."""
    contexts: list[BrowserContext] = []

    def make(width: int = 1280, height: int = 860, reduced_motion: bool = False) -> Page:
        context = chromium.new_context(
            viewport={"width": width, "height": height},
            reduced_motion="reduce" if reduced_motion else "no-preference",
        )
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()

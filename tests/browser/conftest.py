"""Chromium through Playwright's sync API, for the `browser` tests.

We drive Debian's Chromium (/usr/bin/chromium) rather than a browser that
Playwright downloads, so `make test` works where only package registries are
reachable.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.services import unavailable

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

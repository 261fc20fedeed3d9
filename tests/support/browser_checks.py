"""Checks of a page in Chromium that the browser tests share: axe-core's
serious or critical accessibility violations, and a watch on the console's
errors and uncaught exceptions (a Content-Security-Policy violation is one)."""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import ConsoleMessage, Page

SERIOUS = ("serious", "critical")


def serious_violations(page: Page) -> list[str]:
    results: Any = Axe().run(page)
    found = []
    for v in results.response["violations"]:
        if v.get("impact") in SERIOUS:
            targets = [", ".join(map(str, n["target"])) for n in v["nodes"]][:3]
            found.append(f"{v['id']} ({v['impact']}): {v['help']} at {targets}")
    return found


def watch(page: Page) -> list[str]:
    """The page's console errors and uncaught exceptions (a CSP violation is one)."""
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"{page.url}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda e: problems.append(f"{page.url}: {e}"))
    return problems


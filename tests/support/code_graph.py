"""The project's packages and modules, for the tests of what imports what
(tests/test_layers_of_the_code.py, the bot client's package test)."""

from __future__ import annotations

from pathlib import Path

from tests.support import ROOT

PACKAGES = ("game", "bots", "lobby", "studies", "botapi", "spadesite", "lab")
# What runs when people play: all but the lab.
SITE = ("game", "bots", "lobby", "studies", "botapi", "spadesite")


def modules() -> dict[str, Path]:
    """Every project module (migrations aside) by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found

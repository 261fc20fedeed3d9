"""The study file's endings: ``[completion]`` (the completion code, each other
outcome's code and redirect) and ``[bonus]`` (the pay), read and checked as
the rest of the file (``studies.definition``): each problem ``FILE:LINE``."""

from __future__ import annotations

import re
from decimal import Decimal
from urllib.parse import urlsplit

from studies.file_lines import FileReader
from studies.study_types import OUTCOMES, Bonus, Completion

CODE = re.compile(r"^[A-Za-z0-9]{1,32}$")


class EndingsReader(FileReader):
    """The sections of the way out; ``studies.definition._Reader`` reads the rest."""

    def completion(self, data: dict) -> Completion:
        path = ("completion",)
        self.only(data, path, {"code", "redirect_url", "no_consent_url", "codes", "redirects"})
        code = self.text(data, path, "code", CODE, "a code of 1 to 32 letters and digits")
        url = self.value(data, path, "redirect_url", str)
        no_consent = self.value(data, path, "no_consent_url", str, "")
        for key, value in (("redirect_url", url), ("no_consent_url", no_consent or None)):
            if isinstance(value, str) and not is_web_url(value):
                self.problem((*path, key), f"{key} {value!r} is not an http(s) URL")
        codes = self.outcome_map(data, "codes")
        redirects = self.outcome_map(data, "redirects")
        if codes.get("completed", code) != code:
            self.problem(
                (*path, "codes"),
                f"codes.completed {codes['completed']!r} differs from code {code!r} "
                "(give the completion code once, as code)",
            )
        for outcome, value in codes.items():
            if not CODE.match(value):
                self.problem(
                    (*path, "codes"),
                    f"codes.{outcome} {value!r} is not a code of 1 to 32 letters and digits",
                )
        for outcome, value in redirects.items():
            if not is_web_url(value):
                where = (*path, "redirects")
                self.problem(where, f"redirects.{outcome} {value!r} is not an http(s) URL")
            if outcome == "completed":
                self.problem(
                    (*path, "redirects"), "the completed redirect is redirect_url (remove it)"
                )
            elif outcome not in codes:
                self.problem(
                    (*path, "redirects"),
                    f"redirects.{outcome} has no code: give codes.{outcome} too",
                )
        codes.pop("completed", None)
        return Completion(code, url, no_consent, codes, redirects)

    def outcome_map(self, data: dict, key: str) -> dict[str, str]:
        """``codes`` or ``redirects``: texts by outcome (``OUTCOMES``)."""
        path = ("completion",)
        given = self.value(data, path, key, dict, {}) or {}
        out = {}
        for outcome, value in given.items():
            if outcome not in OUTCOMES:
                self.problem(
                    (*path, key),
                    f"{key}.{outcome}: not an outcome (outcomes: {', '.join(OUTCOMES)})",
                )
            elif not isinstance(value, str) or not value.strip():
                self.problem((*path, key), f"{key}.{outcome} must be a non-empty text")
            else:
                out[outcome] = value
        return out

    def bonus(self, data: dict | None) -> Bonus | None:
        if data is None:
            return None
        path = ("bonus",)
        self.only(data, path, {"per_point", "currency", "cap", "partial_after_rounds"})
        per_point = self.value(data, path, "per_point", float)
        currency = self.text(data, path, "currency", re.compile(r"^[A-Z]{3}$"), "a currency code")
        cap = self.value(data, path, "cap", float, None)
        for key, amount in (("per_point", per_point), ("cap", cap)):
            if amount is not None and not 0 <= amount <= 1000:
                self.problem((*path, key), f"{key} must be between 0 and 1000, not {amount}")
        partial = self.number(data, path, "partial_after_rounds", 1, 1000, None)
        return Bonus(_decimal(per_point), currency, _decimal(cap), partial)


def _decimal(amount: float | None) -> Decimal | None:
    """Money as a decimal of the number as written (0.01, not 0.01000000000000000021)."""
    return None if amount is None else Decimal(str(amount))


def is_web_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url

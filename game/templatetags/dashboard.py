"""Number formats for the staff dashboard."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def pct(value: Any, digits: int = 1) -> str:
    """0.4567 -> '45.7%'; None -> '–'."""
    if value is None or value == "":
        return "–"
    return f"{100 * float(value):.{int(digits)}f}%"


@register.filter
def num(value: Any, digits: int = 1) -> str:
    """A number with ``digits`` decimals; None -> '–'."""
    if value is None or value == "":
        return "–"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def get(mapping: Any, key: Any) -> Any:
    """mapping[key], or None."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None

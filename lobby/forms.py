"""Lobby forms: a guest's name, sign-up, and a new table with its rules and seats.

The rules part of the table form is built from the fields of
``game.engine.rules.Rules``: a new rule option shows up here by itself, and
the engine's own validation (``RulesError``) is the form's last word.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm

from bots.registry import bot_groups
from game import external_bots
from game.engine.rules import FIRST_LEAD_CHOICES, Rules, RulesError
from game.identity import GUEST_NAME_MAX, clean_guest_name
from lobby.levels import LEVEL_PREFIX, bot_of, levels

# What people read for each rule option (a missing one falls back to its name).
RULE_LABELS: dict[str, tuple[str, str]] = {
    "winning_goal": ("Winning goal", "A partnership at or above this score wins."),
    "losing_goal": ("Losing goal", "A partnership at or below this score loses."),
    "nil": ("Nil bids", "A bid of 0: take no trick at all."),
    "nil_points": ("Nil points", "Won for a made nil, lost for a failed one."),
    "blind_nil": ("Blind nil", "Nil before seeing your cards, worth double."),
    "blind_nil_min_deficit": (
        "Blind nil when behind by",
        "Blind nil is only allowed this many points behind.",
    ),
    "blind_nil_pass": ("Cards exchanged after blind nil", "0 or 2 cards with partner."),
    "team_bid_cap_13": ("Partners' bids at most 13", ""),
    "min_team_bid": ("Minimum team bid", ""),
    "first_lead": ("First lead", ""),
    "nil_tricks_count_for_team": (
        "Nil bidder's tricks count for the team",
        "Off: they only count as bags.",
    ),
    "bag_limit": ("Bag limit", "Reaching it costs the bag penalty."),
    "bag_penalty": ("Bag penalty", ""),
    "bag_penalty_removes_bag_points": (
        "Penalty also removes the bag points",
        "The -110 convention.",
    ),
}
FIRST_LEAD_LABELS = {"left_of_dealer": "Left of the dealer", "two_of_clubs": "Two of clubs"}

SEAT_NAMES = ("North", "East", "South", "West")
SEAT_OPEN, SEAT_INVITE, SEAT_ME = "open", "invite", "me"


def rule_field_names() -> list[str]:
    return [f.name for f in fields(Rules)]


def _rules_fields() -> dict[str, forms.Field]:
    out: dict[str, forms.Field] = {}
    for f in fields(Rules):
        label, help_text = RULE_LABELS.get(f.name, (f.name.replace("_", " ").capitalize(), ""))
        default = f.default if f.default is not MISSING else None
        if f.name == "first_lead":
            out[f.name] = forms.ChoiceField(
                label=label,
                choices=[(c, FIRST_LEAD_LABELS.get(c, c)) for c in FIRST_LEAD_CHOICES],
                initial=default,
                help_text=help_text,
            )
        elif f.type == "bool":
            out[f.name] = forms.BooleanField(
                label=label, required=False, initial=default, help_text=help_text
            )
        elif f.name == "blind_nil_pass":
            out[f.name] = forms.TypedChoiceField(
                label=label,
                choices=[(0, "0"), (2, "2")],
                coerce=int,
                initial=default,
                help_text=help_text,
            )
        else:
            out[f.name] = forms.IntegerField(label=label, initial=default, help_text=help_text)
    return out


def seat_choices() -> list[tuple[str, Any]]:
    """Me / Open / Reserved, the named bot levels with their ratings, then every
    bot in one group per playing module, and the registered external bots."""
    named = ("Bot levels", [(LEVEL_PREFIX + lv.name, lv.label) for lv in levels()])
    bots = [
        (f"Bot — {title}", [(name, f"Bot: {name}") for name in names])
        for title, names in bot_groups()
    ]
    outside = external_bots.choices()
    if outside:
        bots.append(("Bot — external (bot protocol)", [(n, _external_label(n)) for n in outside]))
    return [(SEAT_ME, "Me"), (SEAT_OPEN, "Open"), (SEAT_INVITE, "Reserved by invite"), named,
            *bots]  # fmt: skip


def _external_label(name: str) -> str:
    if name == external_bots.ANY_BOT:
        return "Any bot accepting challenges (offered: the first to accept sits)"
    return f"Bot: {name}"


class GuestForm(forms.Form):
    name = forms.CharField(label="Your name", max_length=GUEST_NAME_MAX)

    def clean_name(self) -> str:
        name = clean_guest_name(self.cleaned_data["name"])
        if not name:
            raise forms.ValidationError("Choose a name others will see at the table.")
        return name


class SignUpForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        fields = ("username",)


class TableForm(forms.Form):
    """A new table: its rules (from ``Rules``), timer, privacy and the four seats."""

    turn_seconds = forms.IntegerField(
        label="Turn timer (seconds)",
        min_value=5,
        max_value=600,
        initial=30,
        help_text="When it runs out a stand-in bot plays for you.",
    )
    private = forms.BooleanField(
        label="Private (only by invite link)", required=False, initial=False
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, field in _rules_fields().items():
            self.fields[name] = field
        defaults = [SEAT_OPEN, SEAT_OPEN, SEAT_ME, SEAT_OPEN]
        for position, seat_name in enumerate(SEAT_NAMES):
            self.fields[f"seat_{position}"] = forms.ChoiceField(
                label=seat_name, choices=seat_choices(), initial=defaults[position]
            )

    def rule_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in rule_field_names()]

    def seat_fields(self) -> list[forms.BoundField]:
        return [self[f"seat_{p}"] for p in range(4)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        seats = [data.get(f"seat_{p}") for p in range(4)]
        if seats.count(SEAT_ME) > 1:
            raise forms.ValidationError("You can only sit in one seat.")
        values = {name: data.get(name) for name in rule_field_names()}
        if all(name not in self.errors for name in values):
            try:
                data["rules"] = Rules(**values)
            except RulesError as e:
                raise forms.ValidationError(f"Those rules do not work: {e}.") from None
        return data

    def seats(self) -> list[str]:
        """Each seat's choice, a level as its bot kind (the seat says which bot)."""
        chosen = [self.cleaned_data[f"seat_{p}"] for p in range(4)]
        return [bot_of(c.removeprefix(LEVEL_PREFIX)) if c.startswith(LEVEL_PREFIX) else c
                for c in chosen]  # fmt: skip

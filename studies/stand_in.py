"""The waiting room's stand-in fill, told truly.

A participant who waited alone past ``waiting_room.timeout_seconds`` is
seated anyway, and the study's stand-in bot takes each participant seat still
empty (``waiting_room.form_table``; ``StudyTable.filled_by_stand_in`` counts
them). In a ``"names"`` condition that bot is shown under a player's name, so
the participant believes a person sat there: the condition's debrief (which
may say "your partner was another participant") is then false for them. They
read the condition's ``stand_in_debrief`` instead, or by default
:func:`default_debrief`, which names every seat a program played; and the
exports flag the fill per table, round and seat (``studies.export``).
"""

from __future__ import annotations

from collections.abc import Iterable

from game.external_bots import account_of, is_external
from studies.models import Participant, StudySeat, StudyTable
from studies.study_types import PARTICIPANT

SEAT_NAMES = ("North", "East", "South", "West")


def fill_positions(study_table: StudyTable) -> tuple[int, ...]:
    """The participant seats (0-3) of the plan that the stand-in took: those of
    the condition's plan with no participant's ``StudySeat``."""
    planned = [p for p, who in enumerate(study_table.condition.seat_plan) if who == PARTICIPANT]
    taken = {s.position for s in study_table.seats.all()}
    return tuple(p for p in planned if p not in taken)


def seat_of(participant: Participant) -> StudySeat | None:
    found = StudySeat.objects.filter(participant=participant)
    return found.select_related("study_table__table", "study_table__condition").first()


def shown_under_a_name(participant: Participant) -> tuple[int, ...]:
    """The seats at the participant's table that the stand-in took while the
    table showed its bots under players' names (empty: none, or not seated)."""
    seat = seat_of(participant)
    if seat is None or not seat.study_table.filled_by_stand_in:
        return ()
    if not seat.study_table.table.bots_as_players:
        return ()
    return fill_positions(seat.study_table)


def _names(positions: Iterable[int]) -> str:
    names = [SEAT_NAMES[p] for p in positions]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def default_debrief(position: int, filled: Iterable[int], plan: Iterable[str]) -> str:
    """The site's debrief for a participant at ``position`` whose ``filled``
    seats the stand-in took: which seats were programs, partner and opponents
    apart, and whether any other participant played at the table."""
    plan, filled = list(plan), sorted(filled)
    programs = sorted({p for p, who in enumerate(plan) if who != PARTICIPANT} | set(filled))
    partner = (position + 2) % 4
    opponents = [p for p in programs if p % 2 != position % 2]
    said = []
    if partner in programs:
        said.append(f"your partner ({SEAT_NAMES[partner]})")
    if opponents:
        said.append(f"your opponent{'s' if len(opponents) > 1 else ''} ({_names(opponents)})")
    one = len(programs) == 1
    what = "was a computer program (a bot)" if one else "were computer programs (bots)"
    others = len([p for p, who in enumerate(plan) if who == PARTICIPANT]) - len(filled) - 1
    return "\n\n".join(
        [
            "Thank you for taking part. Something we could not tell you before you played: "
            f"{' and '.join(said)} {what}, "
            f"not {'a person' if one else 'people'}, although the table showed "
            f"{'it' if one else 'them'} under {'a player' if one else 'players'}' names.",
            f"The seat{'s' if len(filled) > 1 else ''} at {_names(filled)} "
            f"{'were' if len(filled) > 1 else 'was'} meant for another participant of this "
            "study. Nobody else was ready when you were, so a program took "
            f"{'them' if len(filled) > 1 else 'it'} rather than keep you waiting. "
            + (
                "No other participant played at your table."
                if others == 0
                else "The other seats meant for participants had participants in them."
            ),
            "We showed bots under players' names because people sometimes play "
            "differently against bots. If you would rather we did not use your data now "
            "that you know this, write to the researchers (their address is in the "
            "consent text at the start of the study) and give your reference below.",
        ]
    )


def debrief_for(participant: Participant) -> str | None:
    """The stand-in debrief the participant must read (the condition's
    ``stand_in_debrief`` or the site's), or None when none applies."""
    filled = shown_under_a_name(participant)
    if not filled:
        return None
    seat = seat_of(participant)
    assert seat is not None
    for condition in participant.study.definition["conditions"]:
        if condition["name"] == participant.condition.name and condition.get("stand_in_debrief"):
            return condition["stand_in_debrief"]
    return default_debrief(seat.position, filled, participant.condition.seat_plan)


def debrief_of(participant: Participant) -> str:
    """What the participant's debrief says: the stand-in's (:func:`debrief_for`)
    where it applies, else their condition's; and, where the condition showed
    bots under names, which seats were external bots (:func:`external_told`)."""
    told = debrief_for(participant)
    if told is None:
        told = next((c.get("debrief") or "" for c in participant.study.definition["conditions"]
                     if c["name"] == participant.condition.name), "")  # fmt: skip
    external = external_told(participant)
    return f"{told}\n\n{external}" if told and external else told or external


def external_told(participant: Participant) -> str:
    """The seats of the participant's condition played by an external bot
    (``ext:<name>``, a program of someone else's through the bot protocol),
    named as bots: said whatever the researcher's debrief says, when the
    condition showed its bots under players' names (otherwise the table
    showed them as the bots they are)."""
    condition = participant.condition
    if condition is None or condition.disclosure != "names":
        return ""
    seats = [(p, who) for p, who in enumerate(condition.seat_plan) if is_external(who)]
    if not seats:
        return ""
    named = [f"{SEAT_NAMES[p]} was the bot {account_of(who)!r}" for p, who in seats]
    return (
        f"At your table {' and '.join(named)}: a computer program, not a person, written "
        "outside this site and connected to it through the site's bot protocol. The table "
        "showed it under a player's name."
    )


def dropped_after_deception(participant: Participant) -> bool:
    """A dropped participant who sat at a table that showed bots under players'
    names: the end page debriefs them (they never reach the debrief page)."""
    if participant.stage != Participant.Stage.DROPPED:
        return False
    seat = seat_of(participant)
    return seat is not None and seat.study_table.table.bots_as_players

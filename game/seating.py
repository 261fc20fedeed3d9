"""Tables and seats before play: create, seat players and bots, start, rematch.

Every change of a table runs through the table master
(:meth:`game.master.TableMaster.change`): one transaction that locks the
table row, refused (:class:`~game.errors.SeatError`) once the match has
started; after the commit the master's announcer tells the table's sockets
(a ``table.changed`` event) and its scheduler has the bot or stand-in that
is due move.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from bots.registry import DEFAULT_BOT, UnknownBot, make_bot
from game import abandoned, external_bots, master, switches
from game.engine import Rules, RulesError
from game.errors import NotPlaying, SeatError, ServiceError, TableNotFound
from game.master import Changed, TurnPlan
from game.models import Seat, Table
from game.moves.matches import load_match
from game.ratings import bands


def _rules_dict(rules: Rules | dict[str, Any] | None) -> dict[str, Any]:
    if rules is None:
        return Rules().to_dict()
    if isinstance(rules, Rules):
        return rules.to_dict()
    try:
        return Rules.from_dict(rules).to_dict()
    except (RulesError, TypeError) as e:
        raise ServiceError(f"those rules are not valid: {e}") from None


def create_table(
    *,
    host: Any = None,
    rules: Rules | dict[str, Any] | None = None,
    turn_seconds: int = 30,
    stand_in_bots: bool = True,
    bot_delay: float | None = None,
) -> Table:
    """A new open table (nobody seated yet)."""
    if not 5 <= turn_seconds <= 600:
        raise ServiceError("the turn timer must be between 5 and 600 seconds")
    return Table.objects.create(
        host=host if host is not None and getattr(host, "is_authenticated", False) else None,
        rules=_rules_dict(rules),
        turn_seconds=turn_seconds,
        stand_in_bots=stand_in_bots,
        bot_delay=bot_delay,
    )


def get_table(table: Table | int | str) -> Table:
    """A table by instance, primary key or public id."""
    if isinstance(table, Table):
        return table
    try:
        if isinstance(table, int):
            return Table.objects.get(pk=table)
        return Table.objects.get(public_id=table)
    except Table.DoesNotExist:
        raise TableNotFound("there is no such table") from None


def _open_table_locked(table: Table | int | str) -> Table:
    pk = get_table(table).pk
    locked = Table.objects.select_for_update().get(pk=pk)
    if locked.status != Table.Status.OPEN:
        raise SeatError("seats can only change before the match starts")
    abandoned.touch(pk)  # a seat change is a visit
    return locked


def _check_position(position: int) -> None:
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= 3:
        raise SeatError("a seat is 0..3 (North, East, South, West)")


def take_seat(
    table: Table | int | str,
    position: int,
    *,
    user: Any = None,
    guest_id: str = "",
    guest_name: str = "",
) -> Seat:
    """Seat a signed-in user or a guest (by the guest id in their session)."""
    _check_position(position)
    is_user = user is not None and getattr(user, "is_authenticated", False)
    if not is_user and not guest_id:
        raise SeatError("sign in or choose a guest name to take a seat")

    def write() -> Changed[Seat]:
        locked = _open_table_locked(table)
        mine = Seat.objects.filter(table=locked)
        mine = mine.filter(user=user) if is_user else mine.filter(guest_id=guest_id)
        if mine.exists():
            raise SeatError("you already have a seat at this table")
        seat = Seat.objects.create(
            table=locked,
            position=position,
            kind=Seat.Kind.HUMAN,
            user=user if is_user else None,
            guest_id="" if is_user else guest_id,
            guest_name="" if is_user else guest_name[:40],
        )
        return Changed(seat, (locked.pk,))

    try:
        return master.get().change(write)
    except IntegrityError:
        raise SeatError("that seat is taken") from None


def add_bot(table: Table | int | str, position: int, bot_name: str | None = None) -> Seat | None:
    """Seat the bot ``bot_name`` (a registry name; default the site's default
    bot). ``external_bots.ANY_BOT`` seats none: it offers the seat to the
    external bots accepting open challenges, the first to accept takes it."""
    _check_position(position)
    name = bot_name or DEFAULT_BOT
    if name == external_bots.ANY_BOT:
        _offer_seat(table, position)
        return None
    external = external_bots.is_external(name)
    try:
        external_bots.check(name) if external else make_bot(name)
    except UnknownBot as e:
        raise SeatError(str(e)) from None

    def write() -> Changed[Seat]:
        locked = _open_table_locked(table)
        if external:
            external_bots.check_room(name, locked.pk)
        seat = Seat.objects.create(
            table=locked, position=position, kind=Seat.Kind.BOT, bot_name=name
        )
        return Changed(seat, (locked.pk,))

    try:
        return master.get().change(write)
    except IntegrityError:
        raise SeatError("that seat is taken") from None


def _offer_seat(table: Table | int | str, position: int) -> None:
    with transaction.atomic():
        locked = _open_table_locked(table)
        if locked.seats.filter(position=position).exists():
            raise SeatError("that seat is taken")
        external_bots.offer(locked.pk, position)


def leave_seat(table: Table | int | str, position: int) -> None:
    _check_position(position)

    def write() -> Changed[None]:
        locked = _open_table_locked(table)
        Seat.objects.filter(table=locked, position=position).delete()
        return Changed(None, (locked.pk,))

    master.get().change(write)


def start_table(table: Table | int | str) -> Table:
    """Start the match once the four seats are taken; schedules the first bot."""

    def write() -> Changed[Table]:
        pk = get_table(table).pk
        locked = Table.objects.select_for_update().get(pk=pk)
        if locked.status != Table.Status.OPEN:
            raise NotPlaying("the match has already started")
        seats = {s.position: s for s in locked.seats.all()}
        if len(seats) != 4:
            raise SeatError("all four seats must be taken to start")
        now = timezone.now()
        locked.status = Table.Status.PLAYING
        locked.started_at = locked.turn_started_at = locked.last_human_at = now
        # The partnerships' rating bands now: ratings change only at a match's end.
        locked.band_ns, locked.band_ew = bands.side_bands(seats.values())
        locked.save(update_fields=["status", "started_at", "turn_started_at", "last_human_at",
                                   "band_ns", "band_ew"])  # fmt: skip
        match = load_match(locked)
        plan = master.next_turn(locked, seats, match.round.to_act, locked.version)
        return Changed(locked, (pk,), plan)

    return master.get().change(write)


def hand_over(table: Table | int | str, position: int) -> Seat:
    """A human leaves a match in play: a stand-in bot (SPADES_STAND_IN_BOT) takes
    the seat for the rest of it, and moves at once if it is the seat's turn.
    Refused at a table without stand-in bots (the match would stall)."""
    _check_position(position)
    pk = table if isinstance(table, int) else get_table(table).pk

    def write() -> Changed[Seat]:
        locked = _seats_change_locked(pk)
        if locked.status != Table.Status.PLAYING:
            raise NotPlaying("the match is not being played")
        if not locked.stand_in_bots:
            raise SeatError("this table has no stand-in bots: your seat would stop the match")
        seat = Seat.objects.filter(table=locked, position=position, kind=Seat.Kind.HUMAN).first()
        if seat is None:
            raise SeatError("there is no player in that seat")
        seat.kind, seat.bot_name = Seat.Kind.BOT, stand_in_bot_name()
        seat.user, seat.guest_id, seat.guest_name = None, "", ""
        seat.away, seat.played_for = False, []
        seat.save()
        return Changed(seat, (pk,), _turn_if_due(locked, position))

    return master.get().change(write)


def _seats_change_locked(pk: int) -> Table:
    """The table locked for a seat change during play. A write first, so that
    SQLite takes its write lock before any read (a read lock cannot be
    upgraded while a move holds the write lock); it is the seat change a
    remembered table's quick move must notice (``game.moves.move``)."""
    Table.objects.filter(pk=pk).update(seats_version=F("seats_version") + 1)
    return Table.objects.select_for_update().get(pk=pk)


def _turn_if_due(locked: Table, position: int, restart_clock: bool = False) -> TurnPlan | None:
    """The bot or stand-in move due now if it is ``position``'s turn (its turn
    clock restarted first if ``restart_clock``)."""
    if locked.status != Table.Status.PLAYING:
        return None
    match = load_match(locked)
    if match.is_over or match.round.to_act != position:
        return None
    if restart_clock:
        locked.turn_started_at = timezone.now()
        locked.save(update_fields=["turn_started_at"])
    seats = {s.position: s for s in locked.seats.all()}
    return master.next_turn(locked, seats, position, locked.version)


def stand_in_bot_name() -> str:
    return switches.current.stand_in_bot


def mark_back(table: Table | int | str, position: int) -> bool:
    """The player at ``position`` is back ("I'm back"): no longer away, the list
    of what was played for them cleared, and if it is their turn, their own
    turn timer starts now. Returns whether they were away."""
    pk = table if isinstance(table, int) else get_table(table).pk

    def write() -> Changed[bool]:
        locked = _seats_change_locked(pk)
        seat = Seat.objects.filter(table=locked, position=position, kind=Seat.Kind.HUMAN).first()
        if seat is None or not (seat.away or seat.played_for):
            return Changed(False)
        seat.away, seat.played_for, seat.away_since = False, [], None
        seat.save(update_fields=["away", "played_for", "away_since"])
        return Changed(True, (pk,), _turn_if_due(locked, position, restart_clock=True))

    return master.get().change(write)


def seat_of(
    table: Table | int | str, *, user: Any = None, guest_id: str | None = None
) -> int | None:
    """The seat a signed-in user or a guest holds at the table, or None (a spectator)."""
    t = get_table(table)
    seats = Seat.objects.filter(table=t, kind=Seat.Kind.HUMAN)
    if user is not None and getattr(user, "is_authenticated", False):
        found = seats.filter(user=user).values_list("position", flat=True).first()
        if found is not None:
            return found
    if guest_id:
        return seats.filter(guest_id=guest_id).values_list("position", flat=True).first()
    return None


def list_open_tables(limit: int = 50) -> list[Table]:
    """Tables still waiting for players (and visited lately: ``game.abandoned``),
    newest first, with their seats loaded."""
    return list(
        Table.objects.filter(status=Table.Status.OPEN, last_human_at__gte=abandoned.cutoff())
        .prefetch_related("seats__user")
        .order_by("-created_at")[:limit]
    )


def create_rematch(table: Table | int | str) -> Table:
    """A new table with the same rules, options and seats as ``table``, started.

    The caller decides whether a rematch already exists (the lobby keeps the link).
    """
    old = get_table(table)
    with transaction.atomic():
        new = Table.objects.create(
            host=old.host,
            rules=old.rules,
            turn_seconds=old.turn_seconds,
            stand_in_bots=old.stand_in_bots,
            bot_delay=old.bot_delay,
            bots_as_players=old.bots_as_players,
            rated=old.rated,
            talk=old.talk,
            study_condition=old.study_condition,  # a study's next match (studies.playing)
            pilot=old.pilot,
        )
        for s in old.seats.all():
            Seat.objects.create(
                table=new,
                position=s.position,
                kind=s.kind,
                user=s.user,
                guest_id=s.guest_id,
                guest_name=s.guest_name,
                bot_name=s.bot_name,
            )
        if new.seats.count() == 4:
            start_table(new)
    return get_table(new.pk)

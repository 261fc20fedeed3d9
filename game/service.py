"""The single write path of a table, and what each seat may see of it.

``move_steps`` is the only code that changes a match (run by
``submit_action`` on Django's connection, and by ``game.moves_async`` for
the websockets on PostgreSQL): one transaction, compare-and-swap on the
table's version, the engine checks the action, the action is appended to the
log, the version goes up; a finished round writes its record and a finished
match its result in the same transaction. After the commit: one group
message to the table's sockets and, when a bot (or a stand-in for a human
whose timer ran out) is to act next, a bot move is scheduled through
``bots.tasks``.

A table's match is its log replayed (``load_match``). A small in-process
cache keyed by (table, version) saves the replay on most moves; it is only
filled with committed states, entries are never mutated (a move works on a
copy), and a miss is always answered by replaying the log, so correctness
never depends on it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from game import events, rows, storage
from game.engine import (
    Action as EngineAction,
)
from game.engine import (
    ActionError,
    IllegalAction,
    Match,
    Rules,
    RulesError,
    action_from_dict,
    action_to_dict,
    view_for,
)
from game.engine.state import Phase, RoundState
from game.models import MatchResult, Seat, Table

log = logging.getLogger(__name__)

DEFAULT_BOT_DELAY_SECONDS = 0.6
SEAT_LETTERS = "NESW"


# ----- errors ----------------------------------------------------------------------


class ServiceError(Exception):
    """Something a user (or a late bot) asked for that cannot be done; nothing changed."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TableNotFound(ServiceError):
    code = "not_found"


class NotPlaying(ServiceError):
    """The table is not in play (still open, or finished)."""

    code = "not_playing"


class StaleVersion(ServiceError):
    """The action was meant for another version of the table than the current one."""

    code = "stale"

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(
            f"the table has moved on (you acted on version {expected}, it is at {current}): "
            "refresh and try again"
        )
        self.expected = expected
        self.current = current


class BadAction(ServiceError):
    """Data that does not describe an action, or an action for another seat."""

    code = "bad_action"


class IllegalMove(ServiceError, IllegalAction):
    """The engine refused the action; ``message`` is its reason."""

    code = "illegal"


class SeatError(ServiceError):
    code = "seat"


class CorruptLog(RuntimeError):
    """The stored log does not replay to the stored version (a bug, never a user error)."""


# ----- the match cache -------------------------------------------------------------

CACHE_SIZE = 512
_cache: OrderedDict[tuple[int, int], tuple[str, Match]] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()
        _info_cache.clear()
        _latest.clear()
        _public_cache.clear()


def _cache_get(table_pk: int, version: int, seed: str) -> Match | None:
    with _cache_lock:
        entry = _cache.get((table_pk, version))
        if entry is None:
            return None
        _cache.move_to_end((table_pk, version))
    cached_seed, match = entry
    # Primary keys can be reused (tests flush the database): check the seed too.
    return match if cached_seed == seed and match.version == version else None


def _cache_put(table_pk: int, seed: str, match: Match) -> None:
    with _cache_lock:
        _cache[(table_pk, match.version)] = (seed, match)
        _cache.move_to_end((table_pk, match.version))
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


# What ``table_info`` said at a version, filled on commit by ``submit_action`` and
# by ``table_view``; with the match cache it lets a socket get the view of a
# just-committed version without touching the database (``cached_state_frame``).
# Only versions after the start are kept: status, turn start and seats change
# together with the version once a match is playing (a ``table.changed``
# event, for anything else, always reads the database and refreshes it).
_info_cache: OrderedDict[tuple[int, int], dict[str, Any]] = OrderedDict()
# The newest version of each table this process has seen committed.
_latest: dict[int, int] = {}
# The JSON of what every seat sees alike at (table, version): ``cached_state_frame``.
_public_cache: OrderedDict[tuple[int, int], str] = OrderedDict()


def _info_put(table_pk: int, version: int, info: dict[str, Any]) -> None:
    with _cache_lock:
        _info_cache[(table_pk, version)] = info
        _info_cache.move_to_end((table_pk, version))
        _public_cache.pop((table_pk, version), None)  # built from the info it replaces
        while len(_info_cache) > CACHE_SIZE:
            _info_cache.popitem(last=False)
        if len(_latest) > 8 * CACHE_SIZE:
            _latest.clear()  # a miss only means a database read
        if version > _latest.get(table_pk, -1):
            _latest[table_pk] = version


def _info_get(table_pk: int, version: int) -> dict[str, Any] | None:
    with _cache_lock:
        return _info_cache.get((table_pk, version))


def _load_match_steps(table: Table, version: int) -> Generator[rows.Query, Any, Match]:
    """:func:`load_match` as statements (see :func:`run_steps`)."""
    match = _cache_get(table.pk, version, table.seed)
    if match is not None:
        return match
    # A recent version in the cache: replay only the tail.
    start = None
    for back in range(1, 9):
        if version - back < 0:
            break
        cached = _cache_get(table.pk, version - back, table.seed)
        if cached is not None:
            start = cached.copy()
            break
    match = start if start is not None else Match(Rules.from_dict(table.rules), table.seed)
    logged = yield rows.actions_query(table.pk, match.version, version)
    for number, data in logged:
        if number != match.version + 1:
            raise CorruptLog(f"table {table.pk}: action {match.version + 1} is missing")
        try:
            match.apply(action_from_dict(data))
        except (ActionError, IllegalAction) as e:
            raise CorruptLog(f"table {table.pk}: action {number} does not replay: {e}") from e
    if match.version != version:
        raise CorruptLog(f"table {table.pk}: the log stops at {match.version}, not {version}")
    _cache_put(table.pk, table.seed, match)
    return match


def load_match(table: Table, version: int | None = None) -> Match:
    """The table's match at ``version`` (default: the table's version).

    The result may be shared with other threads: never change it (use
    ``Match.copy``). Only call this for a version that is committed.
    """
    return run_steps(_load_match_steps(table, table.version if version is None else version))


T = TypeVar("T")


def run_steps(steps: Generator[rows.Query, Any, T]) -> T:
    """Run a generator of statements on Django's connection: each yielded
    :class:`rows.Query` is executed and its value sent back; returns what the
    generator returns. (``game.moves_async`` runs the same generators on an
    asyncio connection.)"""
    try:
        query = next(steps)
        while True:
            query = steps.send(rows.run(query))
    except StopIteration as done:
        return done.value


# ----- the write path --------------------------------------------------------------


@dataclass(frozen=True)
class SubmitResult:
    table_id: int
    version: int  # the table's version after the action
    seat: int
    action: dict[str, Any]
    round_number: int  # the round the action belonged to
    round_over: bool
    match_over: bool
    to_act: int | None  # who acts next (None when the match is over)
    by_stand_in: bool


def _parse_action(seat: int, action: EngineAction | dict[str, Any]) -> EngineAction:
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat <= 3:
        raise BadAction("a seat is 0..3")
    if isinstance(action, dict):
        try:
            return action_from_dict(action, seat=seat)
        except ActionError as e:
            raise BadAction(str(e)) from None
    if getattr(action, "seat", None) != seat:
        raise BadAction("you can only act for your own seat")
    return action


@dataclass(frozen=True)
class Committed:
    """What follows a committed move: the caches, the table's group message, a bot."""

    table_id: int
    seed: str
    match: Match
    info: dict[str, Any]
    plan: TurnPlan | None

    def remember(self) -> None:
        """Fill this process's caches with the committed state."""
        _cache_put(self.table_id, self.seed, self.match)
        _info_put(self.table_id, self.match.version, self.info)

    def announce(self) -> None:
        events.table_event(self.table_id, self.match.version)


def submit_action(
    table_id: int,
    seat: int,
    action: EngineAction | dict[str, Any],
    expected_version: int,
    *,
    by_stand_in: bool = False,
) -> SubmitResult:
    """Apply ``action`` for ``seat`` if the table is still at ``expected_version``.

    Raises a :class:`ServiceError` (``StaleVersion``, ``IllegalMove``,
    ``BadAction``, ``NotPlaying``, ``TableNotFound``) and changes nothing
    when the action cannot be taken.
    """
    parsed = parse_submission(seat, action, expected_version)
    with transaction.atomic():
        result, after = run_steps(
            move_steps(table_id, seat, parsed, expected_version, by_stand_in, timezone.now())
        )
        transaction.on_commit(after.remember)
        transaction.on_commit(after.announce, robust=True)
        plan = after.plan
        if plan is not None:
            transaction.on_commit(lambda: schedule_plan(plan), robust=True)
    return result


def parse_submission(
    seat: int, action: EngineAction | dict[str, Any], expected_version: int
) -> EngineAction:
    """The engine action of a submission, or :class:`BadAction`."""
    parsed = _parse_action(seat, action)
    if isinstance(expected_version, bool) or not isinstance(expected_version, int):
        raise BadAction("'version' must be a whole number")
    return parsed


def move_steps(
    table_id: int,
    seat: int,
    parsed: EngineAction,
    expected_version: int,
    by_stand_in: bool,
    now: datetime,
) -> Generator[rows.Query, Any, tuple[SubmitResult, Committed]]:
    """The statements of one move, to run in one transaction (:func:`run_steps`):
    compare-and-swap the version, check the action with the engine, append it
    to the log, and store a finished round's record and a finished match's
    result. A :class:`ServiceError` raised from here must roll back."""
    swapped = yield rows.bump_version_query(table_id, expected_version, now)
    table = yield rows.fetch_table_query(table_id)
    if table is None:
        raise TableNotFound("there is no such table")
    if not swapped:
        if table.status != Table.Status.PLAYING:
            raise NotPlaying(
                "the match is over"
                if table.status == Table.Status.FINISHED
                else "the match has not started"
            )
        raise StaleVersion(expected_version, table.version)
    match = (yield from _load_match_steps(table, expected_version)).copy()
    current: RoundState = match.round
    try:
        match.apply(parsed)
    except IllegalAction as e:
        raise IllegalMove(str(e)) from None  # rolls the version back
    new_version = match.version
    assert new_version == expected_version + 1 == table.version
    action_dict = action_to_dict(parsed)
    yield rows.insert_action_query(
        table.pk, new_version, current.round_number, seat, action_dict, by_stand_in, now
    )
    round_over = current.phase is Phase.DONE
    seats = yield rows.fetch_seats_query(table.pk)
    if round_over:
        stand_ins = yield rows.count_stand_in_query(table.pk, current.round_number)
        row = storage.round_row(table, current, new_version, seats, stand_in_moves=stand_ins)
        yield rows.insert_query(row)
    if match.is_over:
        yield rows.insert_query(_result_row(table, match, new_version, seats))
        yield rows.finish_table_query(table.pk, now)
        table.status, table.finished_at = Table.Status.FINISHED, now
    result = SubmitResult(
        table_id=table.pk,
        version=new_version,
        seat=seat,
        action=action_dict,
        round_number=current.round_number,
        round_over=round_over,
        match_over=match.is_over,
        to_act=None if match.is_over else match.round.to_act,
        by_stand_in=by_stand_in,
    )
    info = table_info(table, list(seats.values()))
    plan = _next_turn_plan(table, seats, result)
    return result, Committed(table.pk, table.seed, match, info, plan)


def _result_row(table: Table, match: Match, version: int, seats: dict[int, Seat]) -> MatchResult:
    assert match.winner is not None
    return storage.result_row(
        table,
        winner=match.winner,
        scores=match.scores,
        bags=match.bags,
        rounds=len(match.rounds),
        version=version,
        seats=seats,
    )


# ----- who moves next: bots and stand-ins --------------------------------------------

# (table_id, seat, version, delay seconds, stand_in)
TurnPlan = tuple[int, int, int, float, bool]


def bot_delay_for(table: Table) -> float:
    if table.bot_delay is not None:
        return max(0.0, table.bot_delay)
    return max(0.0, float(getattr(settings, "SPADES_BOT_DELAY", DEFAULT_BOT_DELAY_SECONDS)))


def _next_turn_plan(
    table: Table, seats: dict[int, Seat], result: SubmitResult | None, to_act: int | None = None
) -> TurnPlan | None:
    """The bot move to schedule after a commit, if a bot or stand-in is due."""
    if result is not None:
        if result.match_over or result.to_act is None:
            return None
        to_act = result.to_act
        version = result.version
    else:
        version = table.version
    if to_act is None:
        return None
    seat = seats.get(to_act)
    if seat is None:
        return None
    if seat.kind == Seat.Kind.BOT:
        return (table.pk, to_act, version, bot_delay_for(table), False)
    if not table.stand_in_bots:
        return None
    if result is not None and result.by_stand_in and result.seat == to_act:
        # The stand-in keeps going for the same seat (e.g. it looked at the cards, now bids).
        return (table.pk, to_act, version, 0.0, True)
    return (table.pk, to_act, version, float(table.turn_seconds), True)


def _schedule(table_id: int, seat: int, version: int, delay: float, stand_in: bool) -> None:
    from bots import tasks  # bots.tasks calls back into this module

    tasks.schedule_act(table_id, seat, version, delay=delay, stand_in=stand_in)


def schedule_plan(plan: TurnPlan) -> None:
    """Schedule the bot move of a committed move's :class:`Committed` plan."""
    _schedule(*plan)


# ----- tables and seats ------------------------------------------------------------


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
    try:
        with transaction.atomic():
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
            transaction.on_commit(lambda: events.table_changed(locked.pk), robust=True)
            return seat
    except IntegrityError:
        raise SeatError("that seat is taken") from None


def add_bot(table: Table | int | str, position: int, bot_name: str | None = None) -> Seat:
    from bots.registry import DEFAULT_BOT, UnknownBot, make_bot

    _check_position(position)
    name = bot_name or DEFAULT_BOT
    try:
        make_bot(name)
    except UnknownBot as e:
        raise SeatError(str(e)) from None
    try:
        with transaction.atomic():
            locked = _open_table_locked(table)
            seat = Seat.objects.create(
                table=locked, position=position, kind=Seat.Kind.BOT, bot_name=name
            )
            transaction.on_commit(lambda: events.table_changed(locked.pk), robust=True)
            return seat
    except IntegrityError:
        raise SeatError("that seat is taken") from None


def leave_seat(table: Table | int | str, position: int) -> None:
    _check_position(position)
    with transaction.atomic():
        locked = _open_table_locked(table)
        Seat.objects.filter(table=locked, position=position).delete()
        transaction.on_commit(lambda: events.table_changed(locked.pk), robust=True)


def start_table(table: Table | int | str) -> Table:
    """Start the match once the four seats are taken; schedules the first bot."""
    with transaction.atomic():
        pk = get_table(table).pk
        # A write first, for the same reason as in submit_action.
        Table.objects.filter(pk=pk).update(version=F("version"))
        locked = Table.objects.select_for_update().get(pk=pk)
        if locked.status != Table.Status.OPEN:
            raise NotPlaying("the match has already started")
        seats = {s.position: s for s in locked.seats.all()}
        if len(seats) != 4:
            raise SeatError("all four seats must be taken to start")
        now = timezone.now()
        locked.status = Table.Status.PLAYING
        locked.started_at = now
        locked.turn_started_at = now
        locked.save(update_fields=["status", "started_at", "turn_started_at"])
        match = load_match(locked)
        plan = _next_turn_plan(locked, seats, None, to_act=match.round.to_act)
        transaction.on_commit(lambda: events.table_changed(pk), robust=True)
        if plan is not None:
            transaction.on_commit(lambda: _schedule(*plan), robust=True)
    return locked


OVERDUE_GRACE_SECONDS = 5.0


def resume_table(table: Table | int | str) -> bool:
    """Schedule the move that is due if it looks lost (e.g. after a restart).

    Bot moves and turn timers wait in memory (or in the Celery broker); after
    a restart of the embedded server a table would wait for ever. Called when
    a socket connects: if a bot's move is overdue by more than a grace period
    it is scheduled again, and a human's turn timer is restarted for the
    time left. A duplicate is harmless: one of the two moves is stale.
    Returns whether something was scheduled.
    """
    t = get_table(table)
    t.refresh_from_db()
    if t.status != Table.Status.PLAYING or t.turn_started_at is None:
        return False
    match = load_match(t)
    if match.is_over:
        return False
    seats = {s.position: s for s in t.seats.all()}
    plan = _next_turn_plan(t, seats, None, to_act=match.round.to_act)
    if plan is None:
        return False
    table_id, seat, version, delay, stand_in = plan
    waited = (timezone.now() - t.turn_started_at).total_seconds()
    if stand_in:
        key = (table_id, version)
        with _resumed_lock:
            if key in _resumed:
                return False
            _resumed.add(key)
            if len(_resumed) > 4096:
                _resumed.clear()
        delay = max(0.0, delay - waited)
    elif waited < delay + OVERDUE_GRACE_SECONDS:
        return False
    else:
        delay = 0.0
    _schedule(table_id, seat, version, delay, stand_in)
    return True


# Turn timers restarted by resume_table in this process, so that every
# connecting socket does not add one more.
_resumed: set[tuple[int, int]] = set()
_resumed_lock = threading.Lock()


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


# ----- views -----------------------------------------------------------------------


def table_info(table: Table, seats: list[Seat] | None = None) -> dict[str, Any]:
    """What anyone at the table may know about it (never the seed or the invite token)."""
    if seats is None:
        seats = list(table.seats.select_related("user"))
    by_position = {s.position: s for s in seats}
    deadline = None
    if (
        table.status == Table.Status.PLAYING
        and table.stand_in_bots
        and table.turn_started_at is not None
    ):
        deadline = (table.turn_started_at + timedelta(seconds=table.turn_seconds)).isoformat()
    return {
        "id": table.public_id,
        "status": table.status,
        "version": table.version,
        "host": table.host.get_username() if table.host_id and table.host else None,
        "seats": [by_position[p].to_public_dict() if p in by_position else None for p in range(4)],
        "turn_seconds": table.turn_seconds,
        "stand_in_bots": table.stand_in_bots,
        "turn_deadline": deadline,
        "rules": table.rules,
    }


def table_view(table: Table | int | str, seat: int | None) -> dict[str, Any]:
    """The engine's view for ``seat`` (None: a spectator) plus the table's info.

    Before the match starts only ``version``, ``seat`` and ``table`` are
    present; afterwards every key of ``SeatView.to_dict()`` too. The turn
    deadline in ``table`` matters only when a human is to act.
    """
    t = get_table(table)
    if isinstance(table, Table):
        t.refresh_from_db()  # the caller's instance may be behind
    out: dict[str, Any] = {"version": t.version, "seat": seat}
    if t.status != Table.Status.OPEN:
        out.update(view_for(load_match(t), seat).to_dict())
    out["version"] = t.version
    out["table"] = info = table_info(t)
    if t.status != Table.Status.OPEN and t.version > 0:
        _info_put(t.pk, t.version, info)
    return out


def cached_state_frame(table_pk: int, seat: int | None, version: int) -> tuple[int, str] | None:
    """The ``state`` frame (JSON text) of ``table_view``, from this process's caches, or None.

    No database access: a consumer calls it on the event loop when a move's
    group event arrives, so that the four sockets of a table do not each
    queue a database read behind the moves of every other table. Like
    ``table_view`` it gives the newest state (the newest this process has
    committed, when that is ``version`` or later). The part every seat sees
    alike is built and encoded once per version; each socket adds its own
    seat's part. A miss (the move was committed in another process, or the
    entry is gone) returns None and the caller reads the database as usual.
    """
    with _cache_lock:
        version = max(version, _latest.get(table_pk, -1))
        entry = _cache.get((table_pk, version))
        public = _public_cache.get((table_pk, version))
    if entry is None or entry[1].version != version:
        return None
    view = view_for(entry[1], seat)
    if public is None:
        info = _info_get(table_pk, version)
        if info is None or info.get("version") != version:
            return None
        # Encoded without its braces, to be joined with each seat's part.
        public = json.dumps({"version": version, **view.public_dict(), "table": info})[1:-1]
        with _cache_lock:
            _public_cache[(table_pk, version)] = public
            while len(_public_cache) > CACHE_SIZE:
                _public_cache.popitem(last=False)
    own = json.dumps(view.private_dict())[1:-1]
    return version, f'{{"type": "state", "version": {version}, "view": {{{own}, {public}}}}}'


# ----- lobby helpers ---------------------------------------------------------------


def list_open_tables(limit: int = 50) -> list[Table]:
    """Tables still waiting for players, newest first, with their seats loaded."""
    return list(
        Table.objects.filter(status=Table.Status.OPEN)
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

"""The columns of a stored round and match result, from the record and who sat where.

Pure functions (no model import), shared by the write path
(``game.moves.move``), stored tournaments and imports (``game.research.storage``) and the
migration that backfilled the columns for rounds stored before they existed.

Seat order is N, E, S, W; partnerships are N/S (0) and E/W (1). A seat kind
is ``"H"`` (human) or ``"B"`` (bot); a partnership's *make-up* is ``"BB"``,
``"HB"`` or ``"HH"`` (order inside the pair does not matter).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from game.engine.cards import SEAT_LETTERS
from game.engine.round_types import RoundType, round_type

SEATS = SEAT_LETTERS.lower()
BOT = "bot"  # the value of ``Seat.Kind.BOT``
MAKEUPS = ("BB", "HB", "HH")

# The round's nil position for the human-vs-bot analyses (the BIS paper's Table 3),
# decided from the four bids and seat kinds, in this order of precedence.
NIL_VS_NIL = "nil vs nil"  # a nil on each side
DOUBLE_NIL = "double nil"  # both seats of one side, none on the other
HUMAN_NIL = "human nil"  # one nil in the round, by a human
PARTNER_OF_HUMAN_NIL = "partner of human nil"  # one nil, by a bot whose partner is human
BOT_BOT_NIL = "bot+bot nil"  # one nil, by a bot whose partner is a bot
NO_NIL = "no nil"
NIL_CATEGORIES = (BOT_BOT_NIL, HUMAN_NIL, PARTNER_OF_HUMAN_NIL, NIL_VS_NIL, DOUBLE_NIL, NO_NIL)

ROUND_TYPE_BY_LABEL = {t.label: int(t) for t in RoundType}

# Who really played a human seat: a round is a *stand-in round* (left out of the
# analyses unless asked for) when a stand-in bot made a seat's bid, or played more
# than this share of a seat's 13 cards. A card or two played for a slow player
# keeps the round theirs; a stand-in's bid (nil, say) never does.
STAND_IN_SHARE = 0.25
CARDS_PER_SEAT = 13
ACTOR_HUMAN, ACTOR_BOT, ACTOR_STAND_IN = "human", "bot", "human+stand-in"


def stand_ins_of(moves: Iterable[tuple[int, str]]) -> tuple[list[int], str]:
    """(cards played per seat, '1' per seat whose bid was the stand-in's) of a round's
    stand-in moves, given as (seat, action type)."""
    plays = [0, 0, 0, 0]
    bids = ["0"] * 4
    for seat, kind in moves:
        if kind == "play":
            plays[seat] += 1
        elif kind == "bid":
            bids[seat] = "1"
    return plays, "".join(bids)


def is_stand_in_round(plays: Sequence[int], bids: str) -> bool:
    return "1" in bids or any(p > STAND_IN_SHARE * CARDS_PER_SEAT for p in plays)


StandIn = tuple[int, int, str]  # a stand-in's move: (round number, seat, action type)


def last_round_stand_ins(
    moves: Iterable[StandIn], round_number: int, last: StandIn | None
) -> tuple[int, list[int], str]:
    """(moves, cards played per seat, bids) of stand-ins in round ``round_number``, whose
    ``last`` move (the last card) is not in the log yet (None: a human's own card)."""
    mine = [(s, kind) for n, s, kind in moves if n == round_number]
    if last is not None:
        mine.append(last[1:])
    return (len(mine), *stand_ins_of(mine))


def match_stand_in_rounds(moves: Iterable[StandIn], last_round: int, last_is: bool) -> int:
    """A match's stand-in rounds: those before its last round from their stand-in moves,
    then the last round (``last_is``: it is one)."""
    before: dict[int, list[tuple[int, str]]] = {}
    for n, s, kind in moves:
        if n != last_round:
            before.setdefault(n, []).append((s, kind))
    return sum(is_stand_in_round(*stand_ins_of(m)) for m in before.values()) + last_is


def actor(kind: str, plays: int, bid_by_stand_in: bool) -> str:
    """A seat-round's actor kind: 'bot', 'human', or 'human+stand-in' (a stand-in moved)."""
    if kind == "B":
        return ACTOR_BOT
    return ACTOR_STAND_IN if plays or bid_by_stand_in else ACTOR_HUMAN


NO_TYPES = "0" * len(RoundType)


def held_round_types(rounds: Iterable[Sequence[int]]) -> tuple[str, str]:
    """Per partnership (N/S, E/W), '1' per round type (1..10) that one of its seats had in
    one of ``rounds`` (each the four seats' RoundType numbers): the types a match held."""
    held = [[False] * len(RoundType), [False] * len(RoundType)]
    for types in rounds:
        for seat, t in enumerate(types):
            held[seat & 1][t - 1] = True
    return "".join("1" if h else "0" for h in held[0]), "".join("1" if h else "0" for h in held[1])


def round_types_of(r: Any) -> list[int]:
    """The four seats' RoundType numbers of a finished engine round (a ``RoundState``)."""
    bids = [b for b in r.bids if b is not None]
    return [int(round_type(bids, s, r.rules.nil)) for s in range(4)]


def side_bot(names: Iterable[str | None]) -> str:
    """A partnership's bot key: its bot seats' name ('BIS+SRP'), two different bots
    as 'A/B' (sorted), '' for two humans."""
    return "/".join(sorted({n for n in names if n}))


def makeup(kind_a: str, kind_b: str) -> str:
    """'BB', 'HB' or 'HH' for two seat kinds."""
    return MAKEUPS[(kind_a == "H") + (kind_b == "H")]


def rules_key(rules: dict[str, Any]) -> str:
    """A short stable id of a rule set (the same rules give the same key)."""
    text = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def nil_category(bids: Sequence[int], kinds: str, nil_allowed: bool = True) -> str:
    nil = [nil_allowed and b == 0 for b in bids]
    ns, ew = nil[0] + nil[2], nil[1] + nil[3]
    if ns and ew:
        return NIL_VS_NIL
    if ns == 2 or ew == 2:
        return DOUBLE_NIL
    if not ns and not ew:
        return NO_NIL
    seat = nil.index(True)
    if kinds[seat] == "H":
        return HUMAN_NIL
    return PARTNER_OF_HUMAN_NIL if kinds[(seat + 2) & 3] == "H" else BOT_BOT_NIL


def derived_columns(record: dict[str, Any], kinds: str, bot_names: Sequence[str | None]) -> dict:
    """The analysis columns of a round: make-ups, bots, nil counts, made flags, types."""
    bids_by_seat = [0, 0, 0, 0]
    for b in record["bids"]:
        bids_by_seat[SEAT_LETTERS.index(b["seat"])] = b["bid"]
    nil_allowed = bool(record["rules"].get("nil", True))
    nil = [nil_allowed and b == 0 for b in bids_by_seat]
    tricks = record["tricks_won"]
    result = record["result"]
    cols: dict[str, Any] = {
        "rules_key": rules_key(record["rules"]),
        "makeup_ns": makeup(kinds[0], kinds[2]),
        "makeup_ew": makeup(kinds[1], kinds[3]),
        "nil_category": nil_category(bids_by_seat, kinds, nil_allowed),
        "made_ns": bool(result[0]["made"]),
        "made_ew": bool(result[1]["made"]),
    }
    for p, name in ((0, "ns"), (1, "ew")):
        seats = (p, p + 2)
        cols[f"nil_bids_{name}"] = sum(nil[s] for s in seats)
        cols[f"nil_made_{name}"] = sum(nil[s] and tricks[s] == 0 for s in seats)
    for s, letter in enumerate(SEATS):
        cols[f"bot_{letter}"] = (bot_names[s] or "") if kinds[s] == "B" else ""
        cols[f"round_type_{letter}"] = ROUND_TYPE_BY_LABEL[record["round_types"][s]]
    for p, name in ((0, "ns"), (1, "ew")):
        cols[f"bot_{name}"] = side_bot(cols[f"bot_{SEATS[s]}"] for s in (p, p + 2))
    return cols


def seat_kinds(seats: Mapping[int, Any]) -> str:
    """'H' or 'B' per seat N, E, S, W of the table's seats (an empty seat counts as human)."""
    return "".join(
        "B" if seats.get(p) is not None and seats[p].kind == BOT else "H" for p in range(4)
    )


def seat_bot_names(seats: Mapping[int, Any]) -> list[str | None]:
    return [seats[p].bot_name if p in seats and seats[p].kind == BOT else None for p in range(4)]


def round_values(
    record: dict[str, Any],
    *,
    version: int,
    kinds: str,
    bot_names: Sequence[str | None],
    finished_at: datetime,
    stand_in_moves: int = 0,
    stand_in_plays: Sequence[int] = (0, 0, 0, 0),
    stand_in_bids: str = "0000",
) -> dict[str, Any]:
    """The columns of a round record row (``record_of``) played by ``kinds``/``bot_names``;
    ``stand_in_plays``/``stand_in_bids``: what stand-ins did for each seat (``stand_ins_of``)."""
    bids = [-1, -1, -1, -1]
    blind = [False] * 4
    for b in record["bids"]:
        s = SEAT_LETTERS.index(b["seat"])
        bids[s], blind[s] = b["bid"], bool(b["blind"])
    ns, ew = record["result"]
    tricks = record["tricks_won"]
    return {
        "round_number": record["round_number"],
        "finished_at": finished_at,
        "version": version,
        "rules": record["rules"],
        "dealer": SEAT_LETTERS.index(record["dealer"]),
        "seat_kinds": kinds,
        "bot_names": list(bot_names),
        "stand_in_moves": stand_in_moves,
        **{f"stand_in_{letter}": stand_in_plays[s] for s, letter in enumerate(SEATS)},
        "stand_in_bids": stand_in_bids,
        "stand_in_round": is_stand_in_round(stand_in_plays, stand_in_bids),
        "bid_n": bids[0],
        "bid_e": bids[1],
        "bid_s": bids[2],
        "bid_w": bids[3],
        "blind_nils": "".join("1" if b else "0" for b in blind),
        "bid_total": sum(b for b in bids if b > 0),
        "tricks_n": tricks[0],
        "tricks_e": tricks[1],
        "tricks_s": tricks[2],
        "tricks_w": tricks[3],
        "points_ns": ns["points"],
        "points_ew": ew["points"],
        "score_ns": ns["score_after"],
        "score_ew": ew["score_after"],
        "bags_ns": ns["bags_after"],
        "bags_ew": ew["bags_after"],
        "nil_position_ns": record["nil_positions"][0],
        "nil_position_ew": record["nil_positions"][1],
        "record": record,
        **derived_columns(record, kinds, bot_names),
    }


def result_values(
    rules: dict[str, Any],
    *,
    winner: int,
    scores: Sequence[int],
    bags: Sequence[int],
    rounds: int,
    version: int,
    kinds: str,
    bot_names: Sequence[str | None],
    finished_at: datetime,
    stand_in_rounds: int = 0,
    round_types: tuple[str, str] = (NO_TYPES, NO_TYPES),
) -> dict[str, Any]:
    """The columns of a match result row (``stand_in_rounds``: its stand-in rounds;
    ``round_types``: the types each partnership held, ``held_round_types``)."""
    return {
        "finished_at": finished_at,
        "winner": winner,
        "score_ns": scores[0],
        "score_ew": scores[1],
        "bags_ns": bags[0],
        "bags_ew": bags[1],
        "rounds": rounds,
        "stand_in_rounds": stand_in_rounds,
        "round_types_ns": round_types[0],
        "round_types_ew": round_types[1],
        "version": version,
        "rules_key": rules_key(rules),
        "makeup_ns": makeup(kinds[0], kinds[2]),
        "makeup_ew": makeup(kinds[1], kinds[3]),
        **{f"bot_{letter}": bot_names[s] or "" for s, letter in enumerate(SEATS)},
    }

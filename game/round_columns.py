"""The query columns of a stored round, derived from its record and who sat where.

Pure functions (no model import), shared by the write path
(``game.storage``), the import command and the migration that backfilled
the columns for rounds stored before they existed.

Seat order is N, E, S, W; partnerships are N/S (0) and E/W (1). A seat kind
is ``"H"`` (human) or ``"B"`` (bot); a partnership's *make-up* is ``"BB"``,
``"HB"`` or ``"HH"`` (order inside the pair does not matter).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from game.engine.round_types import RoundType

SEATS = "nesw"
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
        bids_by_seat["NESW".index(b["seat"])] = b["bid"]
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
    return cols

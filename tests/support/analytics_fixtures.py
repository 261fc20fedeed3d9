"""A small fixed set of stored rounds and matches, for checking the analyses by hand.

Table A (kinds BHBB: N BIS+SRP, E human, S BIS+SRP, W RB+SRP; N/S bot+bot,
E/W human+bot), January 2026, default rules, rounds R1-R5, won by E/W.
Table B (HHHH: two human+human partnerships), February 2026, goal 200/-100,
rounds R6-R7, won by N/S. Table C (BHBB like A), a finished match with no
round rows, won by N/S. Table D (BHBB like A), January 2026: one round, R8, in which
E's timer ran out and the stand-in bot bid nil for E (and played 2 of E's cards):
a stand-in round, left out of the analyses unless asked for; D's match (won by
E/W) is a match with a stand-in round. In R1 a stand-in played 2 of E's cards
(below the share that makes a stand-in round: R1 stays E's).

The rows are written column by column (the analyses read only the columns);
the record is a stub. Bids/tricks/points (N E S W; N/S, E/W):

    R1 d:N  bids 3 4 3 2   tricks 3 4 3 3   points 60, 61       no nil, sum 12
    R2 d:E  bids 0 3 4 3   tricks 0 4 4 5   points 140, 63      bot+bot nil (N made)
    R3 d:S  bids 4 0 4 3   tricks 5 1 4 3   points 81, -69      human nil (E set)
    R4 d:W  bids 2 4 3 0   tricks 2 5 6 0   points 53, 141      partner of human nil (W made)
    R5 d:N  bids 0 0 5 5   tricks 1 0 6 6   points -48, 151     nil vs nil (N set, E made)
    R6 d:E  bids 0b 3 0 4  tricks 0 6 1 6   points 101, 75      double nil (N blind made, S set)
    R7 d:S  bids 3 3 2 3   tricks 2 4 2 5   points -50, 63      no nil, sum 11, N/S set
    R8 d:N  bids 3 0 4 3   tricks 3 0 5 5   points 71, 132      human nil (E made, stand-in)
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta
from typing import Any

from game.engine.round_types import round_type
from game.engine.rules import Rules
from game.models import MatchResult, RoundRecordRow, Seat, Table
from game.research import exports, imports, tallies
from game.research.analytics import Filters
from game.research.round_columns import (
    held_round_types,
    is_stand_in_round,
    makeup,
    nil_category,
    rules_key,
    side_bot,
)
from game.research.storage import store_match
from tests.support.helpers import (
    random_match,
)

RULES_A = Rules().to_dict()
RULES_B = Rules(winning_goal=200, losing_goal=-100).to_dict()

ROUNDS = {
    # name: (table, dealer, bids, blind, tricks, points, made)
    "R1": ("A", 0, (3, 4, 3, 2), "0000", (3, 4, 3, 3), (60, 61), (True, True)),
    "R2": ("A", 1, (0, 3, 4, 3), "0000", (0, 4, 4, 5), (140, 63), (True, True)),
    "R3": ("A", 2, (4, 0, 4, 3), "0000", (5, 1, 4, 3), (81, -69), (True, True)),
    "R4": ("A", 3, (2, 4, 3, 0), "0000", (2, 5, 6, 0), (53, 141), (True, True)),
    "R5": ("A", 0, (0, 0, 5, 5), "0000", (1, 0, 6, 6), (-48, 151), (True, True)),
    "R6": ("B", 1, (0, 3, 0, 4), "1000", (0, 6, 1, 6), (101, 75), (True, True)),
    "R7": ("B", 2, (3, 3, 2, 3), "0000", (2, 4, 2, 5), (-50, 63), (False, True)),
    "R8": ("D", 0, (3, 0, 4, 3), "0000", (3, 0, 5, 5), (71, 132), (True, True)),
}
# Stand-in moves: round -> (cards a stand-in played per seat N E S W, '1' where it bid).
STAND_INS = {"R1": ((0, 2, 0, 0), "0000"), "R8": ((0, 2, 0, 0), "0100")}

DAY_A = datetime(2026, 1, 10, 12, tzinfo=UTC)
DAY_B = datetime(2026, 2, 10, 12, tzinfo=UTC)
DAY_C = datetime(2026, 1, 20, 12, tzinfo=UTC)
DAY_D = datetime(2026, 1, 25, 12, tzinfo=UTC)
BOTS_A = ("BIS+SRP", None, "BIS+SRP", "RB+SRP")
TABLES = {
    # name: (kinds, bots N E S W, rules, day, winner)
    "A": ("BHBB", BOTS_A, RULES_A, DAY_A, 1),
    "B": ("HHHH", (None, None, None, None), RULES_B, DAY_B, 0),
    "C": ("BHBB", BOTS_A, RULES_A, DAY_C, 0),
    "D": ("BHBB", BOTS_A, RULES_A, DAY_D, 1),
}


def build() -> dict[str, Table]:
    tables: dict[str, Table] = {}
    for name, (kinds, bots, rules, day, winner) in TABLES.items():
        t = Table.objects.create(rules=rules, status=Table.Status.FINISHED, finished_at=day)
        tables[name] = t
        for p, kind in enumerate(kinds):
            if kind == "B":
                Seat.objects.create(table=t, position=p, kind=Seat.Kind.BOT, bot_name=bots[p])
            else:
                Seat.objects.create(
                    table=t, position=p, guest_id=f"guest-{name}-{p}", guest_name=f"G{p}"
                )
        rounds = [r for r in ROUNDS.values() if r[0] == name]
        MatchResult.objects.create(
            table=t,
            finished_at=day,
            winner=winner,
            score_ns=0,
            score_ew=0,
            bags_ns=0,
            bags_ew=0,
            rounds=len(rounds),
            stand_in_rounds=int(name == "D"),
            **dict(
                zip(
                    ("round_types_ns", "round_types_ew"),
                    held_round_types([int(round_type(r[2], s)) for s in range(4)] for r in rounds),
                    strict=True,
                )
            ),
            version=0,
            rules_key=rules_key(rules),
            makeup_ns=makeup(kinds[0], kinds[2]),
            makeup_ew=makeup(kinds[1], kinds[3]),
            bot_n=bots[0] or "",
            bot_e=bots[1] or "",
            bot_s=bots[2] or "",
            bot_w=bots[3] or "",
        )
    numbers: dict[str, int] = {}
    for rname, (tname, dealer, bids, blind, tricks, points, made) in ROUNDS.items():
        kinds, bots, rules, day, _ = TABLES[tname]
        numbers[tname] = numbers.get(tname, 0) + 1
        nil = [b == 0 for b in bids]
        plays, stand_in_bids = STAND_INS.get(rname, ((0, 0, 0, 0), "0000"))
        RoundRecordRow.objects.create(
            table=tables[tname],
            round_number=numbers[tname],
            finished_at=day,
            version=0,
            rules=rules,
            dealer=dealer,
            seat_kinds=kinds,
            bot_names=list(bots),
            stand_in_moves=sum(plays) + stand_in_bids.count("1"),
            stand_in_n=plays[0],
            stand_in_e=plays[1],
            stand_in_s=plays[2],
            stand_in_w=plays[3],
            stand_in_bids=stand_in_bids,
            stand_in_round=is_stand_in_round(plays, stand_in_bids),
            bid_n=bids[0],
            bid_e=bids[1],
            bid_s=bids[2],
            bid_w=bids[3],
            blind_nils=blind,
            bid_total=sum(bids),
            tricks_n=tricks[0],
            tricks_e=tricks[1],
            tricks_s=tricks[2],
            tricks_w=tricks[3],
            points_ns=points[0],
            points_ew=points[1],
            score_ns=0,
            score_ew=0,
            bags_ns=0,
            bags_ew=0,
            nil_position_ns="",
            nil_position_ew="",
            record={},
            rules_key=rules_key(rules),
            makeup_ns=makeup(kinds[0], kinds[2]),
            makeup_ew=makeup(kinds[1], kinds[3]),
            bot_n=bots[0] or "",
            bot_e=bots[1] or "",
            bot_s=bots[2] or "",
            bot_w=bots[3] or "",
            bot_ns=side_bot((bots[0], bots[2])),
            bot_ew=side_bot((bots[1], bots[3])),
            nil_category=nil_category(bids, kinds),
            nil_bids_ns=nil[0] + nil[2],
            nil_bids_ew=nil[1] + nil[3],
            nil_made_ns=sum(nil[s] and tricks[s] == 0 for s in (0, 2)),
            nil_made_ew=sum(nil[s] and tricks[s] == 0 for s in (1, 3)),
            made_ns=made[0],
            made_ew=made[1],
            round_type_n=int(round_type(bids, 0)),
            round_type_e=int(round_type(bids, 1)),
            round_type_s=int(round_type(bids, 2)),
            round_type_w=int(round_type(bids, 3)),
        )
    tallies.add_rounds(RoundRecordRow.objects.all())
    tallies.add_matches(MatchResult.objects.all())
    return tables


# Random data for the tallies' tests (tests/game/research/test_tallies.py,
# tests/game/ratings/test_rating_bands.py), beside the fixed set above.
BOTS = ("RB+SRP", "MS+SRP", "BIS+SRP")


def varied_import(rng: random.Random) -> None:
    """Bot matches exported, then imported again as other tables: random seats (humans and
    bots), days over three months and stand-in moves."""
    for i in range(6):
        bots = [rng.choice(BOTS) for _ in range(2)]
        store_match(random_match(f"tally-{i}"), [bots[0], bots[1], bots[0], bots[1]])
    lines = "".join(exports.iter_jsonl(Filters(stand_ins=True))).splitlines()
    by_table: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        item = json.loads(line)
        by_table.setdefault(item["table"], []).append(item)
    out = []
    for copy in range(12):
        for public_id, items in by_table.items():
            kinds = [rng.choice("HB") for _ in range(4)]
            names = [rng.choice(BOTS) for _ in range(2)]
            start = date(2026, 1, 1) + timedelta(days=rng.randrange(85))
            for k, item in enumerate(items):
                item = json.loads(json.dumps(item))
                item["table"] = f"c{copy}-{public_id}"[:16]
                day = start + timedelta(days=k // 4)
                item["finished_at"] = f"{day.isoformat()}T{rng.randrange(24):02d}:30:00+00:00"
                if item["match_result"]:
                    item["match_result"]["finished_at"] = item["finished_at"]
                for p, seat in enumerate(item["seats"]):
                    seat.update(kind="bot" if kinds[p] == "B" else "human",
                                bot=names[p % 2] if kinds[p] == "B" else None,
                                player=None if kinds[p] == "B" else f"p_{copy}{p}")  # fmt: skip
                    human = kinds[p] == "H"
                    seat["stand_in_plays"] = rng.choice((0, 0, 0, 0, 2, 5)) if human else 0
                    seat["stand_in_bid"] = human and rng.random() < 0.05
                out.append(json.dumps(item))
    imports.import_jsonl(out)

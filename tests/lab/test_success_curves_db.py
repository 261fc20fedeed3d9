"""``train_success_curves --from-db``: the curves fitted on stored rounds, by whose nils."""

from __future__ import annotations

import io
import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bots import success_curves as sc
from bots.base import Bot
from bots.bis import nil_value
from bots.srp import SRP
from game.engine import record_of
from game.engine.cards import parse_hand
from game.engine.match import Match
from game.engine.rules import Rules
from game.engine.state import Phase
from game.engine.view import view_for
from game.models import RoundRecordRow, Table
from lab.tournaments.selfplay import NoisyBIS

pytestmark = pytest.mark.django_db

RULES = Rules(winning_goal=200, losing_goal=-100)
KINDS = "HBHB"  # humans North and South, BIS East and West
BOTS = [None, "BIS+SRP", None, "BIS+SRP"]


def played_rounds(n: int) -> list[dict]:
    """``n`` round records of a nil-happy bidder at all four seats."""
    bot = Bot(NoisyBIS(0.6, 0.0), SRP())
    records: list[dict] = []
    match, rng = Match(RULES, "db/0"), random.Random(0)
    while len(records) < n:
        r = match.round
        match.apply(bot.act(view_for(match, r.to_act), rng))
        if r.phase is Phase.DONE:
            records.append(record_of(r))
        if match.is_over:
            match = Match(RULES, f"db/{len(records)}")
    return records


def store(records: list[dict], stand_in_bids: str = "0000") -> None:
    table = Table.objects.create(rules=RULES.to_dict(), status=Table.Status.FINISHED)
    for i, rec in enumerate(records, 1):
        RoundRecordRow.objects.create(
            table=table, round_number=i, version=i, rules=RULES.to_dict(), dealer=0,
            seat_kinds=KINDS, bot_names=BOTS, stand_in_bids=stand_in_bids,
            bid_n=0, bid_e=0, bid_s=0, bid_w=0, blind_nils="0000", bid_total=0,
            tricks_n=0, tricks_e=0, tricks_s=0, tricks_w=0, points_ns=0, points_ew=0,
            score_ns=0, score_ew=0, bags_ns=0, bags_ew=0,
            nil_position_ns="", nil_position_ew="", record=rec,
        )  # fmt: skip


def nils_of(records: list[dict], seats: str) -> list[sc.NilSample]:
    """The expected samples: the non-blind nils of ``seats`` (letters), in bid order."""
    out = []
    for rec in records:
        prev: list[int] = []
        for b in rec["bids"]:
            if b["bid"] == 0 and not b["blind"] and b["seat"] in seats:
                value = nil_value(parse_hand(rec["hands"][b["seat"]]))
                out.append(sc.NilSample(tuple(prev), value, rec["tricks_won"]["NESW".index(
                    b["seat"])] == 0))  # fmt: skip
            prev.append(b["bid"])
    return out


def test_the_curves_are_fitted_on_the_humans_or_the_bis_seats(tmp_path) -> None:
    records = played_rounds(60)
    store(records)
    humans = nils_of(records, "NS")
    bis = nils_of(records, "EW")
    assert len(humans) > 10 and len(bis) > 10
    for seats, expected in (("humans", humans), ("bis", bis), ("all", None)):
        out = tmp_path / f"{seats}.npz"
        text = io.StringIO()
        call_command("train_success_curves", "--from-db", "--seats", seats, "--min-samples",
                     "10", "--output", str(out), stdout=text)  # fmt: skip
        meta = sc.read(out).meta
        assert meta["source"] == {"kind": "db", "seats": seats, "rounds": 60}
        n = len(humans) + len(bis) if expected is None else len(expected)
        assert meta["stats"]["samples"] == n
        if expected is not None:
            assert meta["stats"]["made"] == sum(s.made for s in expected)


def test_a_stand_in_bid_is_not_a_humans_nil(tmp_path) -> None:
    records = played_rounds(30)
    store(records, stand_in_bids="1000")  # North's bids were the stand-in's
    out = tmp_path / "h.npz"
    call_command("train_success_curves", "--from-db", "--seats", "humans", "--min-samples", "1",
                 "--output", str(out), stdout=io.StringIO())  # fmt: skip
    assert sc.read(out).meta["stats"]["samples"] == len(nils_of(records, "S"))


def test_too_few_nils_fit_nothing(tmp_path) -> None:
    store(played_rounds(10))
    out = tmp_path / "few.npz"
    with pytest.raises(CommandError, match="fewer than --min-samples 1000"):
        call_command("train_success_curves", "--from-db", "--seats", "humans", "--output",
                     str(out), stdout=io.StringIO())  # fmt: skip
    assert not out.exists()

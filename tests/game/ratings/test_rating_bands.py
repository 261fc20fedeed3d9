"""Rating bands (game.ratings.bands): a table's partnerships' bands as its match
starts, on its rows, and the dashboard's band filter against a direct count."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.test import Client, override_settings

from game import seating
from game.models import MatchResult, Rating, RoundRecordRow, RoundTally, Table
from game.ratings import bands
from game.research import tallies
from tests.support import analytics_fixtures
from tests.support.analytics_fixtures import varied_import

pytestmark = pytest.mark.django_db

URL = "/dashboard/"


@pytest.fixture
def staff(client: Client) -> Client:
    user = get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)
    client.force_login(user)
    return client


def test_band_edges_from_the_settings_table() -> None:
    assert [bands.band_of(c) for c in (-9.0, 4.99, 5.0, 11.9, 12.0, 19.99, 20.0, 45.0)] == [
        1, 1, 2, 2, 3, 3, 4, 4]  # fmt: skip
    assert bands.choices() == [
        (0, "0: no rated human"),
        (1, "1: Newcomer (below 5)"),
        (2, "2: Improving (5 to 12)"),
        (3, "3: Established (12 to 20)"),
        (4, "4: Strong (20 and above)"),
    ]
    with override_settings(SPADES_RATING_BANDS=[("Low", float("-inf")), ("High", 10)]):
        assert [bands.band_of(c) for c in (9.9, 10.0)] == [1, 2]
        assert bands.choices()[-1] == (2, "2: High (10 and above)")


def _rate(user: object = None, guest: str = "", mu: float = 25.0, sigma: float = 5.0,
          matches: int = 3) -> None:  # fmt: skip
    key = f"u:{user.pk}" if user is not None else f"g:{guest}"  # type: ignore[attr-defined]
    Rating.objects.create(key=key, kind="user" if user is not None else "guest", user=user,
                          guest_id=guest, mu=mu, sigma=sigma, conservative=mu - 3 * sigma,
                          matches=matches)  # fmt: skip


def test_a_match_starts_with_its_partnerships_bands_and_keeps_them() -> None:
    amy = get_user_model().objects.create_user("amy", password="pw-amy-123")
    table = seating.create_table()
    seating.take_seat(table, 0, user=amy)
    seating.take_seat(table, 1, guest_id="gx", guest_name="X")
    seating.take_seat(table, 2, guest_id="gy", guest_name="Y")
    seating.add_bot(table, 3, "RB+SRP")
    _rate(user=amy, mu=30.0, sigma=2.0)  # 24
    _rate(guest="gy", mu=20.0, sigma=2.0)  # 14: N/S's mean is 19, band 3
    _rate(guest="gx", mu=40.0, sigma=1.0, matches=0)  # no rated match yet: left out
    seating.start_table(table)
    table.refresh_from_db()
    assert (table.band_ns, table.band_ew) == (3, bands.NO_BAND)
    # Ratings move only at a match's end; a change now would not be this match's start.
    Rating.objects.filter(guest_id="gy").update(mu=35.0)
    assert (table.band_ns, table.band_ew) == (3, 0)
    assert bands.side_bands(table.seats.all()) == (4, 0)  # what a new match would start with


def test_no_human_or_no_rated_human_is_band_0() -> None:
    table = seating.create_table()
    for p in range(4):
        if p % 2:
            seating.add_bot(table, p, "RB+SRP")
        else:
            seating.take_seat(table, p, guest_id=f"new{p}", guest_name=f"N{p}")
    assert bands.side_bands(table.seats.all()) == (0, 0)


def _with_bands() -> None:
    """Imported tables of random seats, each side with people in a band (every band
    used, 0 too: a side of people with no rated match), bots' sides in 0."""
    varied_import(random.Random(45))
    cycle = iter(range(10**6))
    for table in Table.objects.all():
        kinds = "".join("H" if s.kind == "human" else "B" for s in table.seats.order_by("position"))
        ns, ew = (next(cycle) % 5 if "H" in kinds[p::2] else 0 for p in (0, 1))
        for model in (Table, RoundRecordRow, MatchResult):
            key = {"pk": table.pk} if model is Table else {"table": table}
            model.objects.filter(**key).update(band_ns=ns, band_ew=ew)
    tallies.rebuild()


def test_the_figures_under_a_band_equal_a_direct_count(staff: Client) -> None:
    _with_bands()
    for band in range(5):
        data = staff.get(URL, {"band": str(band), "stand_ins": "on"}).context["data"]
        side = Q(band_ns=band) | Q(band_ew=band)
        rounds = RoundRecordRow.objects.filter(side)
        assert data["summary"]["rounds"] == rounds.count(), band
        assert data["summary"]["matches"] == MatchResult.objects.filter(side).count(), band
        # Partnership-matches won by make-up, each side in the band counted by hand.
        by_hand: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for m in MatchResult.objects.all():
            for p, s in enumerate(("ns", "ew")):
                if getattr(m, f"band_{s}") == band:
                    by_hand[getattr(m, f"makeup_{s}")][0] += 1
                    by_hand[getattr(m, f"makeup_{s}")][1] += m.winner == p
        got = {r["makeup"]: [r["partnership_matches"], r["wins"]]
               for r in data["win_rates"]["by_makeup"]}  # fmt: skip
        assert got == dict(by_hand), band
        assert band == 0 or rounds.exists(), band  # every band has rounds
        if band:
            assert f"with people in rating band {band}" in data["measured"]
    both = staff.get(URL, {"band": ["1", "3"], "stand_ins": "on"}).context["data"]
    side = Q(band_ns__in=(1, 3)) | Q(band_ew__in=(1, 3))
    assert both["summary"]["rounds"] == RoundRecordRow.objects.filter(side).count()


@pytest.mark.parametrize("bad", ["5", "-1", "99", "x"])
def test_a_band_out_of_range_is_refused_with_a_clear_message(staff: Client, bad: str) -> None:
    analytics_fixtures.build()
    tallies.rebuild()
    before = list(RoundTally.objects.order_by("pk").values_list("pk", "n"))
    response = staff.get(URL, {"band": bad})
    assert response.status_code == 400
    html = response.content.decode()
    assert response.context["data"] is None
    assert f"rating band {bad} is out of range: the bands are 0 to 4" in html
    assert 'id="filter-band"' in html  # the form is still there, the figures are not
    assert 'id="dash-total"' not in html
    for export in ("export.csv", "export.jsonl"):
        refused = staff.get(URL + export, {"band": bad})
        assert refused.status_code == 400
        assert "rating band" in refused.content.decode()
    assert list(RoundTally.objects.order_by("pk").values_list("pk", "n")) == before

"""The ratings' pages: the leaderboard, the named bot levels of "Play now" and the
table form, and the profile (its rating, chart, figures; kept at sign-up; public
only by choice)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from bots.registry import bot_names
from game.models import Seat, Table
from game.ratings import compute
from game.ratings.models import Rating
from lobby.models import PublicProfile
from tests.support.helpers import play_humans
from tests.support.inline import InlineScheduler
from tests.support.lobby_client import as_guest, table_form_data

pytestmark = pytest.mark.django_db(transaction=True)


def rate(key: str, mu: float, sigma: float, matches: int, **more: Any) -> Rating:
    return Rating.objects.create(key=key, mu=mu, sigma=sigma, matches=matches, wins=matches // 2,
                                 conservative=compute.conservative(mu, sigma), **more)  # fmt: skip


def test_the_leaderboard_lists_people_by_their_conservative_rating_and_the_bots_apart(
    client: Client,
) -> None:
    minimum = settings.SPADES_LEADERBOARD_MIN_MATCHES
    sure, lucky, new = (User.objects.create_user(n) for n in ("sure", "lucky", "new"))
    rate(f"u:{sure.pk}", 30.0, 1.0, minimum, kind="user", user=sure)  # 27 at least
    rate(f"u:{lucky.pk}", 34.0, 4.0, minimum + 3, kind="user", user=lucky)  # 22 at least
    rate(f"u:{new.pk}", 40.0, 1.0, minimum - 1, kind="user", user=new)  # too few matches
    rate("g:someone", 50.0, 1.0, 50, kind="guest", guest_id="someone")  # guests are not listed
    rate("b:BIS+SRP", 26.0, 2.0, 40, kind="bot", name="BIS+SRP")
    rate("b:RB+WRP", 21.0, 3.0, 12, kind="bot", name="RB+WRP")
    page = client.get("/leaderboard/")
    assert page.status_code == 200
    assert [r.name for r in page.context["people"]] == ["sure", "lucky"]
    bots = page.context["bots"]
    assert [b["rating"].name for b in bots] == ["BIS+SRP", "RB+WRP"]
    assert bots[0]["league"] == (0.0, pytest.approx(bots[0]["league"][1]))  # BIS is the league's 0
    assert bots[1]["league"] is None  # the league plays SRP only
    assert bots[0]["rating"].low == pytest.approx(26.0 - 1.96 * 2.0)
    html = page.content.decode()
    assert "someone" not in html and ">new<" not in html
    assert html.index(">sure<") < html.index(">lucky<")
    assert 'href="/players/sure/"' not in html  # a private profile is not linked
    PublicProfile.objects.create(user=sure, public=True)
    assert 'href="/players/sure/"' in client.get("/leaderboard/").content.decode()


def test_every_level_is_a_registered_bot_and_play_now_seats_the_level_asked_for(
    client: Client, live: InlineScheduler
) -> None:
    assert {bot for _, bot in settings.SPADES_BOT_LEVELS} <= set(bot_names())
    rate("b:RB+WRP", 21.5, 3.0, 12, kind="bot", name="RB+WRP")
    home = client.get("/").content.decode()
    assert "Beginner — RB+WRP (rating 21.5 ± 3.0)" in home and "Strongest" in home
    response = client.post("/play/", {"name": "Cy", "level": "Beginner"})
    assert response.status_code == 302
    table = Table.objects.get()
    assert [s.bot_name for s in table.seats.order_by("position")] == ["RB+WRP"] * 2 + [""] + [
        "RB+WRP"
    ]
    shown = client.get(f"/t/{table.public_id}/seating.json").json()["seats"]
    assert [s["bot"] for s in shown if s["state"] == "bot"] == ["RB+WRP"] * 3  # says which bot
    # a level that does not exist: a clear message, nothing made
    response = client.post("/play/", {"name": "Cy", "level": "Grandmaster"})
    assert response.status_code == 400
    assert "There is no bot level called &#x27;Grandmaster&#x27;" in response.content.decode()
    assert Table.objects.count() == 1


def test_the_table_form_offers_the_levels_and_seats_their_bots(client: Client) -> None:
    as_guest(client)
    response = client.post("/tables/new/", table_form_data(seat_1="level:Expert"))
    assert response.status_code == 302
    assert Seat.objects.get(position=1).bot_name == dict(settings.SPADES_BOT_LEVELS)["Expert"]
    response = client.post("/tables/new/", table_form_data(seat_1="level:Grandmaster"))
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert Table.objects.count() == 1


def test_a_guest_sees_their_rating_move_keeps_it_by_signing_up_and_may_go_public(
    client: Client, live: InlineScheduler
) -> None:
    rng = random.Random(45)
    for number in range(2):
        client.post("/play/", {"name": "Cy", "level": "Beginner"})
        table = play_humans(Table.objects.order_by("-id").first(), rng)
        assert table.status == Table.Status.FINISHED
        page = client.get("/profile/")
        rating = page.context["rating"]
        assert rating.matches == number + 1 and rating.kind == "guest"
        html = page.content.decode()
        assert 'id="rating-chart"' in html and html.count("<polyline") == 2
    figures = page.context["stats"]
    assert figures["me"]["rounds"] >= 2 and figures["bots"]["rounds"] == 3 * figures["me"]["rounds"]
    guest_rating = (rating.mu, rating.sigma)
    response = client.post("/accounts/signup/", {"username": "cyrus", "password1": "pw-sp4des!x",
                                                 "password2": "pw-sp4des!x"})  # fmt: skip
    assert response.status_code == 302
    user = User.objects.get(username="cyrus")
    kept = Rating.objects.get(user=user)
    assert (kept.mu, kept.sigma, kept.matches, kept.key) == (*guest_rating, 2, f"u:{user.pk}")
    page = client.get("/profile/")
    assert page.context["rating"].pk == kept.pk and len(page.context["games"]) == 2
    # the public profile: private until the account says otherwise
    stranger = Client()
    private = stranger.get("/players/cyrus/")
    assert private.status_code == 404 and "keeps its profile private" in private.content.decode()
    assert stranger.get("/players/nobody/").content == private.content.replace(b"cyrus", b"nobody")
    client.post("/profile/public/", {"public": "1"})
    shown = stranger.get("/players/cyrus/")
    assert shown.status_code == 200 and shown.context["rating"].pk == kept.pk
    assert "Make it p" not in shown.content.decode()  # nobody else's switch


def test_the_play_figures_by_hand() -> None:
    from game.models import RoundRecordRow
    from lobby.player_stats import Figures

    def row(**values: Any) -> RoundRecordRow:
        base = {f"{c}_{s}": 0 for c in ("bid", "tricks", "round_type") for s in "nesw"}
        return RoundRecordRow(**{**base, "points_ns": 0, "points_ew": 0, "made_ns": True,
                                 "made_ew": True, **values})  # fmt: skip

    me = Figures()
    # S bids 4 takes 5 (over), N bids 3 takes 3: side made 8 of 7, one bag, 71 points
    me.add(row(bid_s=4, tricks_s=5, bid_n=3, tricks_n=3, points_ns=71, round_type_s=2), 2)
    # S bids nil and takes none; N bids 4 takes 2: the side is set
    me.add(row(bid_s=0, tricks_s=0, bid_n=4, tricks_n=2, points_ns=60, made_ns=False,
               round_type_s=6), 2)  # fmt: skip
    # W (E/W) bids 2 takes 2 exactly
    me.add(row(bid_w=2, tricks_w=2, bid_e=5, tricks_e=6, points_ew=81, round_type_w=2), 3)
    shown = me.shown()
    assert (shown["rounds"], shown["exact"], shown["over"], shown["under"]) == (3, 50, 50, 0)
    assert shown["set_rate"] == pytest.approx(100 / 3) and (shown["nils"], shown["nils_made"]) == (
        1,
        1,
    )
    assert shown["bags"] == pytest.approx(2 / 3) and shown["points"] == pytest.approx(212 / 3)
    types = dict(shown["by_type"])
    assert list(types) == ["under", "we nil"] and types["under"]["rounds"] == 2
    assert types["under"]["exact"] == 50 and types["we nil"]["set_rate"] == 100

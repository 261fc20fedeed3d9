"""The HTTP side of the site: home page and admin."""

import re

import pytest
from django.test import Client


def test_home_page_says_what_the_site_is(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "<h1>Spades</h1>" in page
    assert "Play with friends and research bots" in page
    assert "Tables open soon" in page


def test_home_page_links_only_local_assets(client: Client) -> None:
    page = client.get("/").content.decode()
    assert "/static/css/site.css" in page
    # No CDN, no web font: nothing the browser loads may come from elsewhere.
    assert re.findall(r'(?:href|src)="(?:https?:)?//', page) == []


@pytest.mark.django_db
def test_admin_login_page_renders(client: Client) -> None:
    response = client.get("/admin/login/")
    assert response.status_code == 200
    assert "Spades administration" in response.content.decode()


def test_admin_redirects_anonymous_users_to_login(client: Client) -> None:
    response = client.get("/admin/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")

"""The HTTP side of the site: the lobby's pages (lobby/views.py: the home page,
the new table's form; the accounts' pages) and the admin."""

import re

import pytest
from django.test import Client

from game import seating


@pytest.mark.django_db
def test_home_page_says_what_the_site_is(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "<h1>Spades</h1>" in page
    assert "Play with friends and research bots" in page
    assert "Play now" in page


@pytest.mark.django_db
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


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/tables/new/", "/accounts/login/", "/accounts/signup/"])
def test_pages_render_and_load_nothing_from_elsewhere(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200
    assert re.findall(r'(?:href|src)="(?:https?:)?//', response.content.decode()) == []


@pytest.mark.django_db
def test_the_table_page_loads_nothing_from_elsewhere(client: Client) -> None:

    table = seating.create_table()
    page = client.get(f"/t/{table.public_id}/").content.decode()
    assert "/static/js/table.js" in page
    assert re.findall(r'(?:href|src)="(?:https?:)?//', page) == []


def test_page_scripts_never_insert_html(repo_root) -> None:  # type: ignore[no-untyped-def]
    # Names and chat come from other people: the scripts build nodes and set textContent.
    for script in (repo_root / "static" / "js").glob("*.js"):
        text = script.read_text()
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text, script.name
        assert "http://" not in text and "https://" not in text, script.name

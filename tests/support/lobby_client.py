"""The lobby through Django's test client: a guest signed in, the new table's form
with its defaults, a seat command."""

from __future__ import annotations

from typing import Any

from django.test import Client

from game.models import Table
from lobby.forms import TableForm


def as_guest(client: Client, name: str = "Ann") -> str:
    response = client.post("/guest/", {"name": name, "next": "/"})
    assert response.status_code == 302
    return str(client.session["guest_id"])


def table_form_data(**overrides: Any) -> dict[str, Any]:
    form = TableForm()
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        initial = field.initial
        if isinstance(initial, bool):
            if initial:
                data[name] = "on"
        elif initial is not None:
            data[name] = initial
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def seat_op(client: Client, table: Table, **data: Any) -> Any:
    return client.post(f"/t/{table.public_id}/seat/", data)

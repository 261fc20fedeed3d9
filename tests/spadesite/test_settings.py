"""The switch between the embedded default and the production stack."""

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from channels.routing import ProtocolTypeRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.sqlite3.base import DatabaseWrapper

from spadesite import config


def test_channel_layer_is_redis_pubsub_with_redis_url() -> None:
    layers = config.channel_layers("redis://redis.example:6379/1")
    assert layers["default"]["BACKEND"] == "game.sockets.pubsub_layer.TablePubSubLayer"
    assert layers["default"]["CONFIG"] == {"hosts": ["redis://redis.example:6379/1"]}


@pytest.mark.parametrize("redis_url", [None, ""])
def test_channel_layer_is_in_memory_without_redis_url(redis_url: str | None) -> None:
    layers = config.channel_layers(redis_url)
    assert layers == {"default": {"BACKEND": "game.sockets.memory_layer.TableChannelLayer"}}


def test_celery_uses_redis_when_given_and_memory_otherwise() -> None:
    assert config.celery_urls("redis://r:6379/2") == ("redis://r:6379/2", "redis://r:6379/2")
    assert config.celery_urls(None) == ("memory://", None)


def test_database_from_sqlite_url(tmp_path: Path) -> None:
    db = config.database(config.default_database_url(tmp_path))
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == str(tmp_path / "db.sqlite3")


def test_database_from_postgres_url() -> None:
    db = config.database("postgres://spades:secret@db.example:5433/spades")
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["HOST"], db["PORT"], db["NAME"]) == ("db.example", 5433, "spades")
    assert (db["USER"], db["PASSWORD"]) == ("spades", "secret")
    assert db["OPTIONS"] == {"options": "-c jit=off"}
    given = config.database("postgres://db.example/spades?options=-c%20work_mem%3D8MB")
    assert given["OPTIONS"] == {"options": "-c work_mem=8MB"}


def test_database_url_with_unknown_scheme_is_a_clear_error() -> None:
    with pytest.raises(ImproperlyConfigured, match="DATABASE_URL"):
        config.database("nosuchdb://x/y")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, True), ("", True), ("0", False), ("off", False), ("YES", True), ("true", True)],
)
def test_env_bool(value: str | None, expected: bool) -> None:
    assert config.env_bool("DJANGO_DEBUG", value, default=True) is expected


def test_env_bool_rejects_nonsense() -> None:
    with pytest.raises(ImproperlyConfigured, match="DJANGO_DEBUG"):
        config.env_bool("DJANGO_DEBUG", "maybe", default=True)


def test_env_list() -> None:
    assert config.env_list(None, ["a"]) == ["a"]
    assert config.env_list(" spades.example , www.spades.example,", []) == [
        "spades.example",
        "www.spades.example",
    ]


def test_test_run_uses_the_embedded_default_unless_redis_is_configured() -> None:
    expected = config.channel_layers(settings.REDIS_URL)
    assert expected == settings.CHANNEL_LAYERS
    assert settings.SPADES_BOTS_IN_PROCESS is (settings.REDIS_URL is None)
    assert settings.INSTALLED_APPS[0] == "daphne"


def test_asgi_application_routes_http_and_websocket() -> None:
    from spadesite.asgi import application

    assert isinstance(application, ProtocolTypeRouter)
    assert set(application.application_mapping) == {"http", "websocket"}


# Channels' denying consumer closes old connections on the shared sync thread,
# where the table consumers keep theirs (game/moves/db.py): that is database access.
@pytest.mark.django_db(transaction=True)
async def test_websocket_from_a_foreign_origin_is_refused() -> None:
    from spadesite.asgi import application

    communicator = WebsocketCommunicator(
        application, "/ws/anything/", headers=[(b"origin", b"https://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()


def test_sqlite_uses_the_write_ahead_log(tmp_path: Path) -> None:
    # A commit per move must not cost three fsyncs (see bench_server).
    db = config.database(config.default_database_url(tmp_path))
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]
    assert "synchronous=NORMAL" in db["OPTIONS"]["init_command"]


def test_sqlite_transactions_take_the_write_lock_at_their_start(
    tmp_path: Path, django_db_blocker: Any
) -> None:
    # A transaction that reads first must not fail at its first write because
    # another connection (a bot thread, the tally flush) committed meanwhile.
    db = config.database(config.default_database_url(tmp_path))
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    defaults = {"TIME_ZONE": None, "CONN_HEALTH_CHECKS": False, "CONN_MAX_AGE": 0,
                "AUTOCOMMIT": True, "ATOMIC_REQUESTS": False}  # fmt: skip
    mine = DatabaseWrapper({**db, **defaults}, alias="lock-check")
    other = sqlite3.connect(db["NAME"], isolation_level=None, timeout=0.05)
    with django_db_blocker.unblock():
        try:
            with mine.cursor() as cursor:
                cursor.execute("CREATE TABLE seats (x integer)")
            mine._start_transaction_under_autocommit()  # what transaction.atomic() runs
            with mine.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM seats")  # the read first
                with pytest.raises(sqlite3.OperationalError, match="locked"):
                    other.execute("INSERT INTO seats VALUES (2)")  # waits, then gives up
                cursor.execute("INSERT INTO seats VALUES (1)")
            mine.commit()
            other.execute("INSERT INTO seats VALUES (2)")
            assert other.execute("SELECT x FROM seats ORDER BY x").fetchall() == [(1,), (2,)]
        finally:
            other.close()
            mine.close()


def test_postgres_connections_come_from_a_pool_of_the_given_size(tmp_path: Path) -> None:
    pool = config.PoolSize(max_size=14, timeout=2.5)
    db = config.database("postgres://db.example/spades", pool)
    assert db["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 14, "timeout": 2.5}
    assert db["OPTIONS"]["options"] == "-c jit=off"
    # SQLite has one connection per thread and no pool.
    assert "pool" not in config.database(config.default_database_url(tmp_path), pool)["OPTIONS"]

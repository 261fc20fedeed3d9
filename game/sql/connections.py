"""What this process's database offers beyond the ORM, and its broken connections dropped.

:class:`Features` is decided once with the master's store by ``game.builder``
(the only reader of the database switch) and asked by the research code and
the studies' transactions, which never branch on the vendor themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connections


def drop_broken_connections() -> None:
    """Close this thread's connections that saw an error and are no longer usable."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None or not conn.errors_occurred:
            continue
        if conn.in_atomic_block or not conn.is_usable():
            conn.close()
        else:
            conn.errors_occurred = False


@dataclass(frozen=True)
class Features:
    """What the site's code may use of this process's database beyond the ORM
    (the research code, the studies' transactions), decided with the store by
    ``game.builder``."""

    copies_rows: bool = False  # COPY ... FROM STDIN (PostgreSQL)
    reads_side_by_side: bool = False  # queries on a connection per thread at once
    # Row locks (SELECT ... FOR UPDATE) and SET LOCAL lock_timeout (PostgreSQL);
    # without them (SQLite) a transaction's first write takes the one write lock.
    row_locks: bool = False


_features = Features()


def use_features(found: Features) -> None:
    global _features
    _features = found


def features() -> Features:
    """This process's database features (:class:`Features`)."""
    return _features

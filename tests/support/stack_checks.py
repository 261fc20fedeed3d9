"""Checks of a table's stored log in PostgreSQL, shared by the stack tests."""

from __future__ import annotations

import psycopg

from game.engine import Match, Rules, action_from_dict


def check_stored_log(database_url: str, table_pk: int) -> Match:
    """The table's log holds versions 1..N without a hole, replays through the
    engine to the table's version, and a round record (with its scores), or a
    pending round whose record is still to be written, was stored at the
    version that ended each finished round, and a result for a finished match.
    Returns the replayed match. The table may still be playing: its rows are
    read in one snapshot, or a move committed between two reads would look
    like a hole."""
    with psycopg.connect(database_url, connect_timeout=5) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        rules, seed, status, version = conn.execute(
            "select rules, seed, status, version from game_table where id = %s", [table_pk]
        ).fetchone()
        actions = conn.execute(
            "select version, seat, action from game_action where table_id = %s order by version",
            [table_pk],
        ).fetchall()
        result = conn.execute(
            "select winner, score_ns, score_ew, rounds, version from game_matchresult"
            " where table_id = %s",
            [table_pk],
        ).fetchone()
        records = conn.execute(
            "select round_number, version, score_ns, score_ew from game_roundrecordrow"
            " where table_id = %s order by round_number",
            [table_pk],
        ).fetchall()
        # Rounds ended by a quick move whose rows are still to be written
        # (game.research.round_rows: within a second, or at the sweep after a fault).
        pending = conn.execute(
            "select round_number, version from game_pendinground where table_id = %s",
            [table_pk],
        ).fetchall()
    assert [v for v, _, _ in actions] == list(range(1, version + 1))
    match = Match(Rules.from_dict(rules), seed)
    round_ends = []
    for number, seat, data in actions:
        finished_before = sum(r.result is not None for r in match.rounds)
        assert data.get("seat", seat) == seat
        match.apply(action_from_dict(data))
        if sum(r.result is not None for r in match.rounds) > finished_before:
            round_ends.append(number)
    assert match.version == version
    # Each finished round has its row or a pending round, never both, at the
    # version of its last card; a row has the round's scores.
    stored = sorted([(n, v) for n, v, _, _ in records] + pending)
    assert stored == [(n, v) for n, v in enumerate(round_ends, 1)], (records, pending, round_ends)
    finished = [rs for rs in match.rounds if rs.result is not None]
    for n, _, score_ns, score_ew in records:
        ns, ew = finished[n - 1].result or ()
        assert (score_ns, score_ew) == (ns.score_after, ew.score_after)
    if match.is_over:
        assert status == "finished"
        assert result == (match.winner, match.scores[0], match.scores[1], len(match.rounds),
                          version)  # fmt: skip
    else:
        assert status == "playing" and result is None
    return match

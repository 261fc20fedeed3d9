"""Checks of a table's stored log in PostgreSQL, shared by the stack tests."""

from __future__ import annotations

import psycopg

from game.engine import Match, Rules, action_from_dict


def check_stored_log(database_url: str, table_pk: int) -> Match:
    """The table's log holds versions 1..N without a hole, replays through the
    engine to the table's version, and a round record was stored at the version
    that ended each finished round (with its scores), and a result for a
    finished match. Returns the replayed match."""
    with psycopg.connect(database_url, connect_timeout=5) as conn:
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
    assert [r[0] for r in records] == list(range(1, len(round_ends) + 1))
    assert [r[1] for r in records] == round_ends
    assert [(r[2], r[3]) for r in records] == [
        (rs.result[0].score_after, rs.result[1].score_after)
        for rs in match.rounds
        if rs.result is not None
    ]
    if match.is_over:
        assert status == "finished"
        assert result == (match.winner, match.scores[0], match.scores[1], len(match.rounds),
                          version)  # fmt: skip
    else:
        assert status == "playing" and result is None
    return match

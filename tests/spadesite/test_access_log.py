"""Daphne's access log names paths without their query: a recruitment ID never reaches it."""

from __future__ import annotations

import io

from daphne.access import AccessLogGenerator

from spadesite import access_log


def test_a_requests_query_never_reaches_the_access_log() -> None:
    access_log.install()
    access_log.install()  # once per process, however often asked
    stream = io.StringIO()
    log = AccessLogGenerator(stream)
    query = "/study/s/?PROLIFIC_PID=raw123&STUDY_ID=x"
    details = {"client": "127.0.0.1:5", "method": "GET", "status": 200, "size": 10}
    log("http", "complete", {**details, "path": query})
    log("websocket", "connected", {"client": "127.0.0.1:6", "path": "/ws/table/abc/?t=1"})
    text = stream.getvalue()
    assert "raw123" not in text and "STUDY_ID" not in text and "?t=1" not in text
    assert '"GET /study/s/" 200 10' in text and "WSCONNECT /ws/table/abc/" in text


def test_the_server_installs_it() -> None:
    import spadesite.asgi  # noqa: F401  (what Daphne imports)

    assert AccessLogGenerator.write_entry.__name__ == "write_entry_without_query"

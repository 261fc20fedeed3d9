"""A websocket's frames written to its socket at once, not on the reactor's next pass.

Twisted's TCP transport only queues a write: it registers the socket with
epoll, and the bytes leave on the reactor's next pass, once the socket is
reported writable. On Daphne that puts every frame behind all the other
callbacks of the pass that made it; when several tables move together (a
round's end, or moves that simply arrive together), the first table's frames
wait for every other table's move, and each frame costs two ``epoll_ctl``
calls and a wake-up of its own. asyncio's transports instead try ``send()``
first and queue only what the kernel did not take; :func:`install` gives
Twisted's TCP connections the same, for connections with Nagle's algorithm
off (autobahn turns it off on every websocket). Others (plain HTTP) keep
Twisted's queue: there, a response's parts written one by one would wait for
the peer's delayed acknowledgement.

Measured with ``manage.py bench_server --stacks embedded`` (docs/scaling.md).
"""

from __future__ import annotations

from typing import Any

from twisted.internet import tcp

_installed = False


def install() -> None:
    """Write at once on every TCP connection of this process that has Nagle off
    (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    queued_write = tcp.Connection.write  # TLS when started, else FileDescriptor's queue
    set_no_delay = tcp.Connection.setTcpNoDelay

    def setTcpNoDelay(self: Any, enabled: Any) -> None:  # noqa: N802 (Twisted's name)
        set_no_delay(self, enabled)
        self.writes_at_once = bool(enabled)

    def write(self: Any, data: bytes) -> None:
        if (
            not self.writes_at_once
            or self.TLS
            or not isinstance(data, bytes)
            or not data
            or not self.connected
            or self._writeDisconnected
            or self.disconnecting
            or self.dataBuffer
            or self._tempDataBuffer  # bytes wait before these: keep their order
        ):
            queued_write(self, data)
            return
        sent = self.writeSomeData(data)
        if isinstance(sent, int) and sent >= 0:
            if sent == len(data):
                return
            data = data[sent:]
        # The rest, or all of it after an error: the reactor sends it, or meets
        # the error again and closes the connection as Twisted always does.
        queued_write(self, data)

    tcp.Connection.writes_at_once = False
    tcp.Connection.setTcpNoDelay = setTcpNoDelay
    tcp.Connection.write = write

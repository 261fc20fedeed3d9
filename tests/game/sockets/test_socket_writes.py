"""game.sockets.socket_writes: Twisted's TCP connections with Nagle off send a write at
once; what the kernel does not take, and every write without Nagle off, waits
for the reactor as before, in order."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from twisted.internet import error, tcp
from twisted.internet.protocol import Protocol

from game.sockets.socket_writes import install


class Reactor:
    """What a FileDescriptor asks of its reactor: which sockets wait to be written."""

    def __init__(self) -> None:
        self.writers: set[object] = set()

    def addWriter(self, fd: object) -> None:  # noqa: N802 (Twisted's names)
        self.writers.add(fd)

    def removeWriter(self, fd: object) -> None:  # noqa: N802
        self.writers.discard(fd)

    def addReader(self, fd: object) -> None:  # noqa: N802
        pass

    def removeReader(self, fd: object) -> None:  # noqa: N802
        pass


@pytest.fixture
def pair() -> Iterator[tuple[tcp.Connection, socket.socket, Reactor]]:
    """(a Twisted connection on one end of a loopback TCP pair, the other end, its reactor)."""
    install()
    listener = socket.create_server(("127.0.0.1", 0))
    peer = socket.create_connection(listener.getsockname())
    ours, _ = listener.accept()
    listener.close()
    reactor = Reactor()
    connection = tcp.Connection(ours, Protocol(), reactor)  # type: ignore[arg-type]
    connection.connected = 1
    peer.setblocking(False)
    yield connection, peer, reactor
    peer.close()
    ours.close()


def received(peer: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = peer.recv(1 << 20)
        except BlockingIOError:
            return b"".join(chunks)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def test_a_write_on_a_connection_with_nagle_off_leaves_at_once(pair) -> None:
    connection, peer, reactor = pair
    connection.setTcpNoDelay(True)
    connection.write(b"a frame")
    assert reactor.writers == set()  # nothing left for the reactor
    peer.setblocking(True)
    peer.settimeout(5)
    assert peer.recv(100) == b"a frame"


def test_a_connection_with_nagle_on_still_waits_for_the_reactor(pair) -> None:
    connection, peer, reactor = pair
    connection.write(b"a response")
    assert reactor.writers == {connection}
    assert received(peer) == b""
    assert connection.doWrite() is None
    assert reactor.writers == set()
    peer.setblocking(True)
    peer.settimeout(5)
    assert peer.recv(100) == b"a response"


def test_what_the_kernel_does_not_take_waits_and_later_writes_keep_their_order(pair) -> None:
    connection, peer, reactor = pair
    connection.setTcpNoDelay(True)
    connection.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    big = bytes(range(256)) * 40_000  # far more than the two buffers hold
    connection.write(big)
    assert reactor.writers == {connection}  # the rest waits
    connection.write(b"after")  # must not overtake what waits
    got = [received(peer)]
    assert 0 < len(got[0]) < len(big)
    while reactor.writers:
        assert connection.doWrite() is None
        got.append(received(peer))
    got.append(received(peer))
    assert b"".join(got) == big + b"after"


def test_a_write_to_a_lost_peer_is_left_to_the_reactor_which_closes_as_before(pair) -> None:
    connection, peer, reactor = pair
    connection.setTcpNoDelay(True)
    # Reset, not an orderly close: the next send fails at once.
    peer.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    peer.close()
    lost = None
    for _ in range(50):  # the reset may take a moment to arrive
        connection.write(b"x" * 1000)
        if reactor.writers:
            lost = connection.doWrite()
            break
    assert isinstance(lost, error.ConnectionLost)


def test_nothing_is_written_once_the_connection_is_closed(pair) -> None:
    connection, peer, reactor = pair
    connection.setTcpNoDelay(True)
    connection.connected = 0
    connection.write(b"late")
    assert reactor.writers == set()
    assert received(peer) == b""


def test_install_is_idempotent() -> None:
    install()
    write = tcp.Connection.write
    install()
    assert tcp.Connection.write is write

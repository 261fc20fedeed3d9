"""A small HTTP/1.1 client on asyncio streams, with a browser's cookie jar, for
``manage.py bench_study``'s simulated participants.

The project depends on neither httpx nor aiohttp, and a thread per
participant (urllib) would not scale to hundreds of them in one process.
One connection per request (``Connection: close``): on 127.0.0.1 setting one
up costs far less than the page behind it, and a server that closes an idle
keep-alive connection between two pages can then never be mistaken for a
failure of the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urljoin, urlsplit

_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class ProtocolError(Exception):
    """The server's answer was not a readable HTTP/1.1 response."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]  # lower-case names (Set-Cookie is folded into the jar)
    body: bytes
    url: str
    elapsed_ms: float

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    @property
    def location(self) -> str | None:
        found = self.headers.get("location")
        return urljoin(self.url, found) if found else None

    def csrf_token(self) -> str | None:
        """The form's CSRF token (``{% csrf_token %}``'s hidden input)."""
        found = _CSRF_INPUT.search(self.text)
        return found.group(1) if found else None


@dataclass
class Browser:
    """One participant's browser: its cookie jar, sent to one origin."""

    origin: str  # http://127.0.0.1:PORT
    cookies: dict[str, str] = field(default_factory=dict)
    timeout: float = 30.0

    def cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    def keep(self, set_cookie: str) -> None:
        jar: SimpleCookie = SimpleCookie()
        jar.load(set_cookie)
        for name, morsel in jar.items():
            if morsel["max-age"] == "0" or not morsel.value:
                self.cookies.pop(name, None)  # Django deletes a cookie with max-age=0
            else:
                self.cookies[name] = morsel.value

    async def get(self, url: str) -> Response:
        return await self.request("GET", url)

    async def post(self, url: str, form: dict[str, str]) -> Response:
        return await self.request("POST", url, urlencode(form).encode())

    async def request(self, method: str, url: str, body: bytes | None = None) -> Response:
        """One request and its whole response (no redirect followed); raises
        TimeoutError after :attr:`timeout` seconds, OSError or ProtocolError."""
        url = urljoin(self.origin, url)
        started = time.perf_counter()
        status, headers, data = await asyncio.wait_for(
            self._exchange(method, url, body), self.timeout
        )
        elapsed = (time.perf_counter() - started) * 1000.0
        return Response(status, headers, data, url, elapsed)

    async def _exchange(
        self, method: str, url: str, body: bytes | None
    ) -> tuple[int, dict[str, str], bytes]:
        parts = urlsplit(url)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        lines = [
            f"{method} {target} HTTP/1.1",
            f"Host: {parts.netloc}",
            "User-Agent: bench-study",
            "Accept: text/html,application/json",
            "Connection: close",
        ]
        if self.cookies:
            lines.append(f"Cookie: {self.cookie_header()}")
        if body is not None:
            # As a browser's form post: Django's CSRF check compares the Origin.
            lines += [
                f"Origin: {self.origin}",
                f"Referer: {url}",
                "Content-Type: application/x-www-form-urlencoded",
                f"Content-Length: {len(body)}",
            ]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        try:
            writer.write(head + (body or b""))
            await writer.drain()
            return await self._read(reader)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _read(self, reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
        status_line = await reader.readline()
        fields = status_line.decode("latin-1").split(" ", 2)
        if len(fields) < 2 or not fields[0].startswith("HTTP/") or not fields[1].isdigit():
            raise ProtocolError(f"bad status line {status_line[:80]!r}")
        headers: dict[str, str] = {}
        while True:
            line = (await reader.readline()).decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                self.keep(value)
            else:
                headers[name] = value
        if "content-length" in headers:
            data = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            data = await _chunked(reader)
        else:
            data = await reader.read()  # to the end: the connection is ours alone
        return int(fields[1]), headers, data


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    chunks = []
    while True:
        size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readline()  # the empty trailer
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readline()

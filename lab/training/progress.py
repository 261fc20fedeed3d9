"""A one-line progress bar for the training commands (no dependency)."""

from __future__ import annotations

import time
from typing import TextIO


class Progress:
    """``[#####.....] done/total what  rate/s  ETA``, redrawn at most 5 times a second."""

    def __init__(
        self, what: str, total: int, done: int = 0, stream: TextIO | None = None, note: str = ""
    ) -> None:
        self.what, self.total, self.done, self.start = what, total, done, done
        self.stream = stream
        self.note = note
        self.t0 = time.monotonic()
        self.last = 0.0

    def update(self, n: int = 1, note: str | None = None) -> None:
        self.done += n
        if note is not None:
            self.note = note
        now = time.monotonic()
        if self.stream is None or (now - self.last < 0.2 and self.done < self.total):
            return
        self.last = now
        frac = min(1.0, self.done / self.total) if self.total else 1.0
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        rate = (self.done - self.start) / max(now - self.t0, 1e-9)
        eta = (
            time.strftime("%H:%M:%S", time.gmtime((self.total - self.done) / rate)) if rate else "-"
        )
        self.stream.write(
            f"\r[{bar}] {self.done}/{self.total} {self.what}  {rate:.1f}/s  ETA {eta}  {self.note} "
        )
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()

"""Where numba keeps the compiled kernels' machine code (``cache=True``): a
folder named by a digest of the sources the kernels are built from.

numba checks only the source file of the function it caches. A change in
another module that a kernel calls, or whose global arrays it reads
(``bots/bits.py``, ``game/engine/tricks.py``'s tables, the compiled SRP in
the lab's kernels), leaves the cached machine code stale, silently, after an
update in place: seen here when the lab's QP kernels went on computing the
old inputs after a merge. Under a digest of every module of the kernels'
packages, a changed module means a new folder, compiled afresh once.

Every module that defines a cached kernel imports this before its kernels.
An operator's ``NUMBA_CACHE_DIR`` is the root of the folders; the default
root is ``.numba_cache/`` in the checkout, else the temporary directory."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parents[2]
# The packages that hold kernels, and what those kernels are built from.
SOURCES = ("game/engine", "bots", "lab/training")


def digest(root: Path = ROOT) -> str:
    """A digest of every Python module under ``SOURCES`` (path and text)."""
    h = hashlib.sha256()
    for folder in SOURCES:
        for path in sorted((root / folder).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def _use_folder() -> str | None:
    """numba's cache folder set to the digest's under the first writable root."""
    roots = [Path(numba.config.CACHE_DIR or ROOT / ".numba_cache")]
    roots.append(Path(tempfile.gettempdir()) / "spades-numba")
    name = digest()
    for root in roots:
        folder = root / name
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=folder).close()
        except OSError:
            continue
        numba.config.CACHE_DIR = str(folder)
        return str(folder)
    return None  # nowhere writable: numba's own places


FOLDER = _use_folder()

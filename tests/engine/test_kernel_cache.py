"""The compiled kernels' cache folder (game/engine/kernel_cache.py): named by a
digest of the kernels' sources, so that a change in any of them, not only in
the kernel's own file, starts a fresh cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import numba

from bots import solver_compiled, srp_compiled
from game.engine import fast_compiled, kernel_cache


def test_every_kernel_is_cached_under_the_digest_of_the_sources() -> None:
    assert kernel_cache.FOLDER is not None and numba.config.CACHE_DIR == kernel_cache.FOLDER
    folder = Path(kernel_cache.FOLDER)
    assert folder.name == kernel_cache.digest()
    for kernel in (fast_compiled.score_points, srp_compiled.srp_play, solver_compiled._solve):
        assert Path(kernel._cache._cache_path).is_relative_to(folder), kernel


def test_a_change_in_any_source_of_the_kernels_changes_the_digest(tmp_path: Path) -> None:
    for folder in kernel_cache.SOURCES:
        shutil.copytree(kernel_cache.ROOT / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "data"))  # fmt: skip
    same = kernel_cache.digest(tmp_path)
    assert same == kernel_cache.digest()
    # A callee's module, not a kernel's own: numba alone would keep the old code.
    bits = tmp_path / "bots" / "bits.py"
    bits.write_text(bits.read_text() + "\n# changed\n")
    assert kernel_cache.digest(tmp_path) != same
    bits.unlink()
    assert kernel_cache.digest(tmp_path) != same

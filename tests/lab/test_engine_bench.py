"""The engine bench: every path it times prints its figure (no timing asserts)."""

from __future__ import annotations

from lab.bench import engine_bench as bench


def test_bench_prints_every_path_and_says_when_openspiel_is_missing() -> None:
    lines: list[str] = []
    figures = bench.run(rounds=20, runs=1, seed=2, out=lines.append, peer_python="/nonexistent")
    text = "\n".join(lines)
    for name in ("fast path:", "compiled:", "OpenSpiel:", "checked path:"):
        assert name in text
    assert figures["compiled_rounds_per_s"] > 0 and figures["fast_rounds_per_s"] > 0
    if figures["openspiel_rounds_per_s"] is None:
        assert "not available" in text

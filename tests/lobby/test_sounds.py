"""The table's sounds: short, clean WAV files that the script in the repository
makes again byte for byte (static/sounds/LICENSE.txt says they are ours)."""

from __future__ import annotations

import importlib.util
import wave
from pathlib import Path

import numpy as np
import pytest

from lobby.table_views import TABLE_SOUNDS
from tests.support import ROOT

SOUNDS = ROOT / "static" / "sounds"


@pytest.mark.parametrize("name", TABLE_SOUNDS)
def test_each_sound_is_a_short_clean_wav(name: str) -> None:
    with wave.open(str(SOUNDS / f"{name}.wav")) as f:
        assert (f.getnchannels(), f.getsampwidth(), f.getframerate()) == (1, 2, 22_050)
        seconds = f.getnframes() / f.getframerate()
        samples = np.frombuffer(f.readframes(f.getnframes()), dtype="<i2")
    assert 0.05 <= seconds <= 1.0, seconds
    peak = np.abs(samples.astype(int)).max() / 32_768
    assert 0.2 < peak < 0.99, peak  # audible, never clipped
    # It fades out: the last 10 ms are near silence (no click at the end).
    assert np.abs(samples[-220:].astype(int)).max() / 32_768 < 0.05


def test_the_script_makes_the_same_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = ROOT / "scripts" / "make_sounds.py"
    spec = importlib.util.spec_from_file_location("make_sounds", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "OUT", tmp_path)
    module.main()
    for name in TABLE_SOUNDS:
        assert (tmp_path / f"{name}.wav").read_bytes() == (SOUNDS / f"{name}.wav").read_bytes()
    assert "CC0" in (SOUNDS / "LICENSE.txt").read_text()

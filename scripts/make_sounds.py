"""Make the table's short sounds (static/sounds/*.wav) from sine tones and noise.

The files are generated here rather than taken from a sound library, so their
licence is the project's own (static/sounds/LICENSE.txt). Run it again after
changing a sound: ``python scripts/make_sounds.py``. Deterministic: the noise
has a fixed seed, so the same code makes the same bytes.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

RATE = 22_050  # Hz: plenty for short cues, a few kB each
OUT = Path(__file__).resolve().parent.parent / "static" / "sounds"


def tone(freq: float, seconds: float, decay: float, volume: float = 0.5) -> np.ndarray:
    """A sine with its octave, struck and decaying: a soft bell."""
    t = np.arange(int(RATE * seconds)) / RATE
    wave_ = np.sin(2 * np.pi * freq * t) + 0.3 * np.sin(4 * np.pi * freq * t)
    envelope = np.exp(-t / decay) * np.minimum(1.0, t / 0.004)  # 4 ms attack: no click
    return volume * wave_ * envelope / 1.3


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(RATE * seconds))


def card() -> np.ndarray:
    """A card laid on felt: a short burst of low-passed noise."""
    noise = np.random.default_rng(7).standard_normal(int(RATE * 0.07))
    smooth = np.convolve(noise, np.ones(6) / 6, mode="same")
    t = np.arange(smooth.size) / RATE
    return 0.6 * smooth * np.exp(-t / 0.015)


def your_turn() -> np.ndarray:
    """Two rising notes (E5, A5)."""
    return np.concatenate([tone(659.3, 0.12, 0.08), tone(880.0, 0.3, 0.12)])


def trick() -> np.ndarray:
    """A trick gathered: a quick triad (C5, E5, G5), softly."""
    notes = [tone(f, 0.07, 0.05, 0.35) for f in (523.3, 659.3)] + [tone(784.0, 0.22, 0.09, 0.35)]
    return np.concatenate(notes)


def nil_set() -> np.ndarray:
    """A nil set: three falling notes (G4, E4, C4)."""
    return np.concatenate(
        [tone(392.0, 0.16, 0.1), tone(329.6, 0.16, 0.1), silence(0.02), tone(261.6, 0.45, 0.2)]
    )


def write(name: str, samples: np.ndarray) -> None:
    pcm = (np.clip(samples, -1, 1) * 32_000).astype("<i2")
    with wave.open(str(OUT / f"{name}.wav"), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(RATE)
        f.writeframes(pcm.tobytes())


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in (("card", card), ("turn", your_turn), ("trick", trick), ("nil-set", nil_set)):
        write(name, make())
        print(f"{OUT / name}.wav")


if __name__ == "__main__":
    main()

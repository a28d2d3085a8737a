"""An image model whose PSNR stays below what a flat grey picture scores: it reconstructs
nothing (not-learning; a blocker if the run ends so).

PSNR is 10·log10(MAX² / MSE), in decibels, whatever the pixel scale. Predicting one
mid-grey value for every pixel already scores about 10-12 dB on natural images (their
variance around the middle of the range is 0.06-0.1 of MAX²), so a model below
`FLOOR_DB` does worse than knowing nothing about the picture; every codec, denoiser or
super-resolution model that works sits at 20-40 dB. A learned image codec that fell from
9.5 dB to 3-4 dB in its first 500 steps and wandered there for 10,000 more
(`[ep 40 step 10440 t= 19788s vram= 5904MB] L=0.3579  D=0.3551  PSNR= 4.50  R=0.2164
bpp`) delivered a model that cannot reconstruct an image.

A run's first points may sit there before the model learns the identity, so it takes
`_POINTS` values in a row below the floor; a notice while the run goes on, withdrawn once
the PSNR's level rises above the floor, and a blocker if the run ends below it.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections import deque
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.eval_names import evaluation_direction, name_words
from babysit.rules.metric_floor import floor_key
from babysit.rules.signals import Observation, Raise, Resolve, Signal

FLOOR_DB = 10.0
_POINTS = 20  # values in a row below the floor before it speaks
# ... of an evaluation's PSNR, scored a few times a run (3D Gaussian splatting's `[ITER
# 7000] Evaluating test: L1 0.347 PSNR 6.25`, then `[ITER 30000] … PSNR 3.08`, both of its
# evaluations): two in a row
_EVAL_POINTS = 2
_LEVEL = 5  # values whose median is the PSNR's level now
# Not one measurement of the model: a best-so-far, a spread, a target or a count.
_NOT_MEASURED = frozenset({"best", "max", "min", "std", "target", "delta", "diff", "gain"})


@functools.lru_cache(maxsize=256)
def psnr_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    """The names among a record's that are a PSNR the model scores (`psnr`, `val/psnr`,
    `PSNR_Y`), not a best-so-far or a difference of two."""
    found = []
    for key in names:
        words = name_words(key)
        if any(w.startswith("psnr") for w in words) and not _NOT_MEASURED.intersection(words):
            found.append(key)
    return tuple(found)


class PsnrFloorRule:
    """Not learning: a PSNR below a flat picture's for `_POINTS` values in a row."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._below: dict[str, int] = {}  # values in a row below the floor
        self._recent: dict[str, deque[float]] = {}
        self._raised: set[str] = set()

    def observe(self, point: Observation) -> list[Signal]:
        if not any("psnr" in key.lower() for key in point.metrics):
            return []  # the cheap test first: most logs print no PSNR
        out: list[Signal] = []
        for key in psnr_keys(tuple(point.metrics)):
            value = point.metrics[key]
            if math.isfinite(value) and value > 0:
                out.extend(self._judge(key, value))
        return out

    def _judge(self, key: str, value: float) -> list[Signal]:
        recent = self._recent.setdefault(key, deque(maxlen=_LEVEL))
        recent.append(value)
        self._below[key] = self._below.get(key, 0) + 1 if value < FLOOR_DB else 0
        need = _EVAL_POINTS if evaluation_direction(key) > 0 else _POINTS
        if key in self._raised:
            level = statistics.median(recent)
            if len(recent) >= min(_LEVEL, need + 1) and level >= FLOOR_DB:
                self._raised.discard(key)
                return [Resolve(AnomalyType.NOT_LEARNING, f"{key} rose to {level:.3g} dB",
                                key=floor_key(key))]
            return []
        if self._below[key] < need:
            return []
        self._raised.add(key)
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: {key} has been below {FLOOR_DB:g} dB on {need} values "
                      f"in a row (now {value:.3g} dB): worse than a flat grey picture scores, "
                      f"the model does not reconstruct the image",
                      key=floor_key(key), severity_at_end=Severity.BLOCKER)]

"""Models that score what a guess scores: not learning, whatever else moves (issue 24).

Two shapes of "at chance":

- A classifier that predicts one class for everything scores that class's share of
  the evaluation set at every evaluation: its accuracy jumps between the same few exact
  values (0.1979, 0.2604, 0.5417 on a 96-image test set: 19, 25 and 52 images) and never
  beats its first evaluation, however its training loss wanders.
- A GAN whose discriminator outputs 0.5 for real and fake alike: its loss sits at
  2·ln 2 (the sum of the two binary cross-entropies; ln 2 for their mean) and the
  generator's at ln 2, flat, point after point (DCGAN's `d_loss: 1.3956, g_loss: 0.6922`
  for 390 steps). A healthy GAN's losses swing far more than that.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules.metric_floor import quality_keys
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_EVAL = ("eval", "val", "test", "valid", "dev")
_LEAST_EVALS = 8  # evaluations before a classifier can be said to be at chance
_LEAST_SPAN = 0.05  # on a 0-1 scale: a run whose accuracy barely moves has converged
_NEAR_FIRST = 0.05  # a value this far above the first evaluation: learning
_SHARES_MOST = 0.6  # evaluations at the two classes' shares, of all of them
_SHARES_SUM = 2e-3  # how near 1 those two shares sum

_LN2 = math.log(2)
_D_NAMES = ("d_loss", "loss_d", "errd", "lossd", "disc_loss", "discriminator_loss",
            "loss_dis", "dis_loss")
_G_NAMES = ("g_loss", "loss_g", "errg", "lossg", "gen_loss", "generator_loss", "loss_gen")
_GAN_POINTS = 50  # the recent points both losses must sit at chance over
_GAN_SEEN = 100  # points seen first: a GAN starts near chance, and leaves it soon
_NEAR = 0.03  # within this share of the chance value
_FLAT = 0.03  # and their robust spread within this share of it


def _two_shares(values: Sequence[float], scale: float) -> tuple[float, float] | None:
    """The two classes' shares of a binary evaluation set (p and 1 - p), when most of
    the evaluations score exactly one or the other: a model predicting one class for
    everything, now this one, now that (a fall detector's 0.4695 and 0.5305, 123 and
    139 of 262 clips, on 18 of its 27 evaluations). None otherwise."""
    counts = Counter(round(v / scale, 4) for v in values)
    (a, seen_a), (b, seen_b) = [*counts.most_common(2), (0.0, 0), (0.0, 0)][:2]
    if min(seen_a, seen_b) < 2 or seen_a + seen_b < _SHARES_MOST * len(values) \
            or abs(a + b - 1.0) > _SHARES_SUM or min(a, b) <= 0:
        return None
    return (a, b)


def at_class_shares(values: Sequence[float]) -> str | None:
    """Why a binary evaluation's accuracies say the model predicts one class for
    everything: 8+ evaluations, most of them exactly one of the two classes' shares
    (`_two_shares`), whatever the first scored. None otherwise."""
    if len(values) < _LEAST_EVALS:
        return None
    shares = _two_shares(values, 100.0 if max(values) > 1.0 else 1.0)
    if shares is None:
        return None
    return (f"scored exactly {shares[0]:.4g} or {shares[1]:.4g} (their sum 1: the two "
            f"classes' shares of the set) on most of its {len(values)} evaluations: the "
            f"model predicts the same class for everything, now one, now the other")


def _jumping_at_chance(values: Sequence[float]) -> str | None:
    """8+ evaluations, none above the first, few distinct values repeated, jumping
    between them: a class's share of the set, whichever class. None otherwise."""
    count = len(values)
    if count < _LEAST_EVALS:
        return None
    scale = 100.0 if max(values) > 1.0 else 1.0
    first = values[0]
    distinct = len(set(values))
    if max(values[1:]) > first or distinct > count // 2 \
            or (max(values) - min(values)) / scale < _LEAST_SPAN:
        return None
    shown = ", ".join(f"{v:.4g}" for v in sorted(set(values)))
    return (f"jumped between the same {distinct} values ({shown}) over {count} "
            f"evaluations and never beat its first ({first:.4g}): the model predicts the "
            f"same class for everything, scoring that class's share of the set")


def accuracy_at_chance(values: Sequence[float]) -> str | None:
    """Why an evaluation accuracy's values say the model predicts the same thing for
    every input (`at_class_shares`, then `_jumping_at_chance`). None otherwise."""
    return at_class_shares(values) or _jumping_at_chance(values)


_CHANCE = " chance"  # the key's end of an accuracy found at a constant guess's share
_SHARES = " class shares"  # ... found at one of a binary set's two classes' shares


def chance_metric(key: str) -> str | None:
    """The evaluation metric a finding at one of a binary set's two classes' shares
    names (the surest sign of a model predicting one class: a finished run that ends so
    delivers nothing), or None."""
    return key[: -len(_SHARES)] if key.endswith(_SHARES) else None


def _named(metrics: Mapping[str, float], names: tuple[str, ...]) -> str | None:
    return next((k for k in names if k in metrics), None)


def gan_at_chance(d_values: Sequence[float], g_values: Sequence[float]) -> str | None:
    """Why a GAN's two losses say its discriminator outputs 0.5 for everything: both
    flat at their chance values over the recent points. None otherwise."""
    if len(d_values) < _GAN_POINTS or len(g_values) < _GAN_POINTS:
        return None
    d_level, g_level = statistics.median(d_values), statistics.median(g_values)
    d_chance = min((2 * _LN2, _LN2), key=lambda c: abs(d_level - c))
    for level, chance, values in ((d_level, d_chance, d_values), (g_level, _LN2, g_values)):
        spread = statistics.median(abs(v - level) for v in values)
        if abs(level - chance) > _NEAR * chance or spread > _FLAT * chance:
            return None
    said = "2·ln 2" if d_chance > 1 else "ln 2"
    return (f"the discriminator is at chance: its loss sits at {d_level:.4g} ({said}) and "
            f"the generator's at {g_level:.4g} (ln 2) over the last {len(d_values)} points: "
            f"it outputs 0.5 for real and fake alike, so neither network learns")


class ChanceRule:
    """Not learning: an accuracy at a constant guess's share, a GAN at chance."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._accuracies: dict[str, list[float]] = {}
        self._last: dict[str, tuple[int | None, float]] = {}
        self._raised: set[str] = set()
        self._d: deque[float] = deque(maxlen=_GAN_POINTS)
        self._g: deque[float] = deque(maxlen=_GAN_POINTS)
        self._gan_points = 0

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        metrics = point.metrics
        if "acc" in "".join(metrics):
            for key in quality_keys(metrics):
                if "acc" in key and key.startswith(_EVAL):
                    out.extend(self._accuracy(key, metrics[key], point.step))
        d_key = _named(metrics, _D_NAMES)
        g_key = _named(metrics, _G_NAMES) if d_key else None
        if d_key and g_key:
            out.extend(self._gan(metrics[d_key], metrics[g_key]))
        return out

    def _accuracy(self, key: str, value: float, step: int | None) -> list[Signal]:
        if not math.isfinite(value) or self._last.get(key) == (step, value):
            return []  # the same evaluation printed twice
        self._last[key] = (step, value)
        values = self._accuracies.setdefault(key, [])
        if len(values) >= 200:
            return []
        values.append(value)
        scale = 100.0 if max(values) > 1.0 else 1.0
        raised = next((tag for tag in (f"{key}{_CHANCE}", f"{key}{_SHARES}")
                       if tag in self._raised), None)
        if raised is not None:
            if (value - values[0]) / scale > _NEAR_FIRST:
                self._raised.discard(raised)
                return [Resolve(AnomalyType.NOT_LEARNING,
                                f"{key} rose above its first evaluation ({value:.4g})",
                                key=raised)]
            return []
        shares = at_class_shares(values)
        found = shares or _jumping_at_chance(values)
        if found is None:
            return []
        tag = f"{key}{_SHARES}" if shares is not None else f"{key}{_CHANCE}"
        self._raised.add(tag)
        return [Raise(AnomalyType.NOT_LEARNING, f"not learning: {key} {found}", key=tag)]

    def _gan(self, d_value: float, g_value: float) -> list[Signal]:
        if not (math.isfinite(d_value) and math.isfinite(g_value)):
            return []
        self._d.append(d_value)
        self._g.append(g_value)
        self._gan_points += 1
        if self._gan_points < _GAN_SEEN:
            return []
        found = gan_at_chance(self._d, self._g)
        if found is not None and "gan" not in self._raised:
            self._raised.add("gan")
            return [Raise(AnomalyType.NOT_LEARNING, f"not learning: {found}", key="gan")]
        if found is None and "gan" in self._raised:
            self._raised.discard("gan")
            return [Resolve(AnomalyType.NOT_LEARNING,
                            f"the GAN's losses left chance (d {d_value:.4g}, g {g_value:.4g})",
                            key="gan")]
        return []

"""The terms a total loss adds up, to tell a rise of the run from a rise of the weights.

A VAE's `loss` is `ce + β·kl (+ property terms)`, and its schedule raises β (KL
annealing): the total climbs from 0.5 to 9 while every term it is made of holds or
falls. A detector's `loss` is the sum of `loss_cls`, `loss_bbox`…: when it truly
diverges, at least one of them rises with it. So a rise of the total that none of its
logged terms shares is the schedule's weighting, not a divergence or a spike.
"""

from __future__ import annotations

import functools
import math
import re
import statistics
from collections import deque
from collections.abc import Mapping

from babysit import lazy_re
from babysit.rules import trends

# A term of a loss: a name that says loss, or the usual short names of its parts.
_PART = lazy_re.compile(r"loss|(?:^|[/_.])(?:ce|kl|kld|nll|mse|mae|l1|l2|bce|recon|rec|xent)"
                        r"(?:$|[/_.])", re.IGNORECASE)
# Not a term of the training loss: an evaluation's, a best-so-far, a weight or scale.
_NOT_PART = lazy_re.compile(r"(?:^|[/_ .-])(?:val|valid|validation|eval|test|dev)|best|scale|"
                            r"weight|coef|beta|lr|total", re.IGNORECASE)
_WINDOW = 50
_MAX_PARTS = 16
_LEVEL = 3  # points in a term's level


@functools.lru_cache(maxsize=1024)
def is_term(name: str) -> bool:
    """Whether a metric's name is a term of the training loss (`loss_recon`, `kl`)."""
    return _PART.search(name) is not None and _NOT_PART.search(name) is None


# How near the terms' sum must come to the total: each term printed to four places.
_SUM_NEAR = 0.005


def sums_its_terms(metrics: Mapping[str, float], loss: float) -> bool:
    """Whether the loss is the sum of two or more terms logged beside it (SGL's
    `loss : 7.0305 = 0.6931 + 6.3374 + 0.0000`, a detector's `loss` beside its `loss_cls`
    and `loss_bbox`): a total of several objectives, no single cross-entropy, so no ln K
    tells a guess from it."""
    terms = [v for k, v in metrics.items() if is_term(k) and v != loss and math.isfinite(v)]
    if len(terms) < 2:
        return False
    return abs(sum(terms) - loss) <= _SUM_NEAR * abs(loss) + 1e-4 * len(terms)


class LossParts:
    """The recent values of the loss's logged terms."""

    def __init__(self) -> None:
        self._recent: dict[str, deque[float]] = {}
        self._names: dict[tuple[str, ...], tuple[str, ...]] = {}

    def observe(self, metrics: Mapping[str, float], loss: float) -> None:
        names = tuple(metrics)
        parts = self._names.get(names)
        if parts is None:
            if len(self._names) >= 256:
                self._names.clear()
            parts = self._names[names] = tuple(
                k for k in names if is_term(k))
        for key in parts:
            value = metrics[key]
            if value == loss or not math.isfinite(value):
                continue  # the loss itself, under a second name
            if key not in self._recent and len(self._recent) >= _MAX_PARTS:
                continue
            self._recent.setdefault(key, deque(maxlen=_WINDOW)).append(value)

    def unshared(self, least: float, jump: bool = False) -> str | None:
        """Why a rise of the total is the weighting's: its terms are known (five values
        each at least) and none of them rose by `least` of it and beyond its own noise —
        for a lasting rise, its level (median of three) above its lowest level in the
        window; for a `jump`, its latest value above the median of the ones before. None
        when a term rose too, or no term is known."""
        ready = {k: list(v) for k, v in self._recent.items() if len(v) >= 5}
        if not ready:
            return None
        for values in ready.values():
            if jump:
                low, now = statistics.median(values[:-1]), values[-1]
            else:
                levels = [statistics.median(values[i:i + _LEVEL])
                          for i in range(len(values) - _LEVEL + 1)]
                low, now = min(levels), levels[-1]
            # Judged against the term's own noise: a KL term wanders by a third of its
            # level from one logged point to the next.
            if trends.beyond_noise(now - low, low, trends.noise_scale(values), 3.0, least):
                return None
        names = ", ".join(sorted(ready)[:4])
        return (f"none of its terms ({names}) rose with it: the weights of the terms changed "
                f"(an annealed KL or auxiliary weight), not the model")

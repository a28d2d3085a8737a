"""A speech separation or enhancement model whose SI-SNR (or SDR) stays at the mixture's
own: it separates nothing (not-learning; a blocker if the run ends so).

Scale-invariant SNR is measured in decibels of the estimate against the clean source.
The mixture itself, handed back unchanged, scores about 0 dB against either of two
speakers mixed at equal level (Libri2Mix, WSJ0-2mix), and every separator that works
climbs past 10 dB within a few epochs (SepFormer reaches 15-20). Recipes minimise its
negative and log that under the metric's own name (SpeechBrain's `train si-snr: -2.49e-01
- valid si-snr: -2.77e-01`, Asteroid's `val_loss`), so the sign says nothing; the size
does: a validation SI-SNR within `_NEAR_ZERO` dB of 0 on `_POINTS` evaluations in a row,
after the first `_WARM` of them, is a model that outputs the mixture. A SepFormer on
Libri2Mix: valid 0.087, -0.175, -0.232, then -0.26 to -0.29 for ten epochs, through a
halving of its learning rate. High from `_POINTS` such evaluations, a blocker from
`_FIRM`: a separator that outputs its input does not leave that point on its own.
"""

from __future__ import annotations

from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal

_SEPARATION = lazy_re.compile(r"(?:^|[/_-])(?:si[_-]?snr|si[_-]?sdr|sdr|sisnr|sisdr)"
                              r"(?:[_-]?loss)?$")
_NEAR_ZERO = 1.0  # dB
_WARM = 2  # evaluations before it is judged
_POINTS = 6  # evaluations in a row near 0 dB: high
_FIRM = 10  # ... a blocker, the run going on or not (nothing it does leaves that point)
_CLEAR = 3.0  # dB away from 0: separating


class SeparationFloorRule:
    """A held-out SI-SNR or SDR near 0 dB for `_POINTS` evaluations (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._seen: dict[str, int] = {}
        self._near: dict[str, int] = {}
        self._raised: set[str] = set()
        self._firm: set[str] = set()

    def observe(self, point: Observation) -> list[Signal]:
        out: list[Signal] = []
        for key, value in point.metrics.items():
            if ("snr" in key or "sdr" in key) and is_eval_metric(key) \
                    and _SEPARATION.search(key) and value == value:
                out.extend(self._judge(key, value))
        return out

    def _judge(self, key: str, value: float) -> list[Signal]:
        seen = self._seen[key] = self._seen.get(key, 0) + 1
        if abs(value) >= _CLEAR and key in self._raised:
            self._raised.discard(key)
            self._firm.discard(key)
            return [Resolve(AnomalyType.NOT_LEARNING, f"{key} is {value:.3g} dB: it separates",
                            key=f"separation {key}")]
        if seen <= _WARM:
            return []
        near = self._near[key] = self._near.get(key, 0) + 1 if abs(value) < _NEAR_ZERO else 0
        if near >= _FIRM and key in self._raised and key not in self._firm:
            self._firm.add(key)
            return [Reassess(AnomalyType.NOT_LEARNING, Severity.BLOCKER,
                             f"not learning: {key} has stayed within {_NEAR_ZERO:g} dB of 0 on "
                             f"{near} evaluations in a row (latest {value:.3g})",
                             key=f"separation {key}")]
        if near < _POINTS or key in self._raised:
            return []
        self._raised.add(key)
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: {key} has stayed within {_NEAR_ZERO:g} dB of 0 on {near} "
                      f"evaluations in a row (latest {value:.3g}): the model's output scores "
                      f"what the unseparated mixture does; a separator that works is past "
                      f"10 dB within a few epochs",
                      key=f"separation {key}", severity=Severity.HIGH,
                      severity_at_end=Severity.BLOCKER)]

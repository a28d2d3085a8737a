"""A variational autoencoder whose KL term has collapsed to zero (issue 24, item 2:
"not learning"): the posterior collapse every VAE practitioner looks for first.

A VAE's loss is a reconstruction term plus the KL divergence of its encoder's posterior
from the prior. When the decoder is strong enough to model the data alone (an LSTM over
text, an autoregressive pixel model), the cheapest way down is to make every posterior
the prior: the KL term falls to 0 and stays there, the latent code carries nothing, and
the "VAE" is a plain decoder. Its loss still falls and its reconstruction improves, so
no other rule sees anything. A sentence VAE on PTB: `KL-Loss 0.0517` at the first
batch, `0.0000` from batch 1100 of epoch 1 to the end of epoch 8, `Recon-Loss` equal
to `Loss` on every line.

The signal: a metric the run names its KL term (`kl`, `kld`, `kl_loss`, `KL-Loss`,
`loss_kl`; not an evaluation's, not a weight or coefficient) printed beside a
reconstruction term (`recon`, `rec`, `nll`, `elbo`, …) — a VAE's loss, not a policy's
KL to its reference, where a KL near 0 is a policy that moved little — that was above
`_ALIVE` and then stayed at or below `_COLLAPSED` (0.001 nats: printed `0.0000`) on
`_POINTS` training records in a row and on most of the records since the first. The
run's result is no VAE: medium while the run goes on, high if still open when it ends
(a finished run is then CONDITIONAL: it finished, but not as what it set out to train);
resolved when the term rises again (KL annealing that lets it back up).
"""

from __future__ import annotations

import math
import re
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.metric_names import is_eval_metric
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal

# The KL term by the names VAE loops print it under (normalised: lower case, `_`).
_KL_TERM = lazy_re.compile(r"^(?:train_)?(?:kl|kld|kl_loss|loss_kl|kl_div|kl_divergence|"
                           r"kl_term|kld_loss|loss_kld|kl_part)$")
# A reconstruction term beside it: the loss is a VAE's.
_RECONSTRUCTION = lazy_re.compile(r"recon|(?:^|_)rec(?:_|$)|rec_loss|nll|elbo|likelihood",
                                  re.IGNORECASE)
_ALIVE = 0.01  # the term carried information once
_COLLAPSED = 1e-3  # nats: what prints as 0.0000
_POINTS = 20  # training records in a row at the floor
_SHARE = 0.5  # of the records since the first one at the floor


class PosteriorCollapseRule:
    """A VAE's KL term at 0 for `_POINTS` records after it was above `_ALIVE`."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._alive: dict[str, float] = {}  # a KL term's first value above `_ALIVE`
        self._run: dict[str, int] = {}  # records in a row at the floor
        self._since: dict[str, int] = {}  # records since the term first hit the floor
        self._floored: dict[str, int] = {}  # of them, those at the floor
        self._raised: set[str] = set()

    def observe(self, point: Observation) -> list[Signal]:
        if not point.advanced or not point.metrics:
            return []
        terms = [k for k in point.metrics if _KL_TERM.match(k) and not is_eval_metric(k)]
        if not terms or not any(_RECONSTRUCTION.search(k) for k in point.metrics):
            return []
        out: list[Signal] = []
        for key in terms:
            out.extend(self._term(key, point.metrics[key], point.step))
        return out

    def _term(self, key: str, value: float, step: int | None) -> list[Signal]:
        if not math.isfinite(value):
            return []
        if value > _ALIVE:
            self._alive.setdefault(key, value)
            self._run[key] = 0
            if key in self._since:
                self._since[key] += 1
            if key in self._raised and value > 10 * _ALIVE:
                self._raised.discard(key)
                return [Resolve(AnomalyType.NOT_LEARNING, f"the KL term {key} rose again "
                                f"({value:.4g})", key=f"collapse {key}")]
            return []
        if key not in self._alive:
            return []  # (annealed from 0, or never above it: nothing collapsed yet)
        self._since[key] = self._since.get(key, 0) + 1
        if value <= _COLLAPSED:
            self._run[key] = self._run.get(key, 0) + 1
            self._floored[key] = self._floored.get(key, 0) + 1
        else:
            self._run[key] = 0
        if key in self._raised or self._run[key] < _POINTS \
                or self._floored[key] < _SHARE * self._since[key]:
            return []
        self._raised.add(key)
        at = f" (step {step})" if step is not None else ""
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"posterior collapse: the VAE's KL term {key} fell from "
                      f"{self._alive[key]:.4g} to {value:.2g} and has stayed at or below "
                      f"{_COLLAPSED:g} on {self._run[key]} training records in a row{at}: "
                      f"the encoder's posterior is the prior, the latent code carries "
                      f"nothing, and the model is a plain decoder (try KL annealing, "
                      f"free bits or word dropout)",
                      key=f"collapse {key}", severity=Severity.MEDIUM,
                      severity_at_end=Severity.HIGH)]

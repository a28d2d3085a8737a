"""The nan-inf rule: a non-finite value, judged by what the metric is (see
`nonfinite_roles`).

- The objective non-finite, or a value nothing in its record vouches for: a blocker
  (key "").
- A gradient norm non-finite beside a finite loss: MEDIUM (key "" as well: one entry for
  the run's NaN), what a loss scaler's skipped step looks like; a blocker when the next
  record's norm is non-finite too, or when the objective goes NaN; resolved once a
  finite norm comes back with a finite loss (NaN weights never give a finite norm again),
  unless a NaN objective was seen.
- A summary writer's unnamed `NaN or Inf found in input tensor`: MEDIUM as a statistic
  is, once; said on `SUMMARY_RECORDS` records in a row, each at a later step, it is what
  every step writes (the loss, most often), a blocker.
- A statistic over a possibly empty set: MEDIUM (key "statistic"); a bound or a
  best-so-far sentinel: LOW (key "setting"). Reported, never a reason to stop the run.
  A timing or a rate (`speed nan` at step 0, an ETA) is not reported at all: a timer
  before its first interval says nothing about the run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.nonfinite_roles import Role, finite_objective, role_of, severity_of
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal

_NAN = AnomalyType.NAN_INF
STATISTIC_KEY = "statistic"
SETTING_KEY = "setting"
# Records in a row whose gradient norm is non-finite, beside a finite loss, before it is
# a blocker: one is a skipped overflow, two in a row a run whose updates are broken.
GRADIENT_RECORDS = 2
# Records in a row with a summary writer's non-finite input before it is a blocker: a
# mean over no episode yet is written now and then, a NaN loss on every step.
SUMMARY_RECORDS = 3
# Distinct finite losses after a learning rate printed as inf that show it was not applied.
RATE_RECORDS = 3
# Distinct finite losses after one non-finite loss under a dynamic loss scale that show the
# scaler skipped the step (see `_scaled_back`).
SCALED_RECORDS = 3


def _listed(metrics: dict[str, float], names: list[str]) -> str:
    return ", ".join(f"{k}={metrics[k]}" for k in names[:8])


class NonFiniteRule:
    windowed: ClassVar[bool] = False

    def __init__(self, rules: RuleSettings) -> None:
        self._gradient_run = 0  # records in a row with a non-finite norm and a finite loss
        # The nan-inf this rule keeps open (key "") is a gradient norm's alone, so far: a
        # finite norm coming back resolves it; a NaN objective never is.
        self._gradient_only = False
        self._objective_seen = False  # this rule raised a NaN that is not a gradient's
        self._summary_run = 0  # records in a row with a summary writer's non-finite input
        self._summary_step: int | None = None  # the step of the latest of them
        # A learning rate printed as inf: the finite losses read since (see `_rate_shown`),
        # None when none is open; once they showed the rate was not the one applied, its
        # later prints are a notice.
        self._rate_losses: set[float] | None = None
        self._rate_display = False
        self._bad_objective = False  # a non-finite objective was read
        self._bad_objectives = 0  # records with a non-finite objective
        # The finite losses read since the one non-finite loss of a run with a dynamic
        # loss scale beside it (see `_scaled_back`); None when none is open.
        self._scaled_losses: set[float] | None = None

    def observe(self, point: Observation) -> Sequence[Signal]:
        metrics = dict(point.metrics)
        total = sum(metrics.values())
        # A finite sum means every value is finite: the usual case, in one C loop.
        if total - total == 0:
            self._summary_run = 0
            return self._all_finite(metrics) + self._rate_shown(metrics) \
                + self._scaled_back(metrics)
        by: dict[Severity, list[str]] = {}
        gradient: list[str] = []
        shown_rate: list[str] = []  # a rate printed as inf again, shown not to be applied
        objective_counted = False
        for name, value in metrics.items():
            if math.isfinite(value):
                continue
            severity, role = severity_of(name, value, metrics)
            if role is Role.TIMING:
                continue  # a timer before its first interval says nothing about the run
            if role is Role.SUMMARY and point.step is not None \
                    and (self._summary_step is None or point.step > self._summary_step):
                # (one a step: the same sentence three times at start-up, before any step,
                # is no step's loss; nor three at one step)
                self._summary_run += 1
                self._summary_step = point.step
                if self._summary_run >= SUMMARY_RECORDS:
                    severity = Severity.BLOCKER
            if role is Role.OBJECTIVE and not objective_counted:
                self._bad_objective = objective_counted = True  # (once a record)
                self._bad_objectives += 1
                self._scaled_losses = set() if self._bad_objectives == 1 \
                    and any("loss_scale" in k or "loss scale" in k for k in metrics) else None
            if role is Role.OPTIMIZER and math.isinf(value) and severity is Severity.BLOCKER:
                if self._rate_display:
                    shown_rate.append(name)
                    continue
                if self._rate_losses is None:
                    self._rate_losses = set()
            if role is Role.GRADIENT and severity is Severity.MEDIUM:
                gradient.append(name)
            else:
                by.setdefault(severity, []).append(name)
        if not any(role_of(k, v) is Role.SUMMARY for k, v in metrics.items()
                   if not math.isfinite(v)):
            self._summary_run = 0
        out: list[Signal] = []
        if Severity.BLOCKER in by:
            said = f"non-finite metric: {_listed(metrics, by[Severity.BLOCKER])}"
            # One entry for the run's NaN: a gradient's open one is escalated, with this.
            out += [Reassess(_NAN, Severity.BLOCKER, said), Raise(_NAN, said)]
            self._gradient_only, self._objective_seen = False, True
        if gradient:
            out.extend(self._gradient(metrics, gradient))
        elif self._gradient_run and self._norm_back(metrics):
            out.extend(self._recovered(metrics))
        if Severity.MEDIUM in by:
            out.append(Raise(_NAN, (
                f"non-finite statistic: {_listed(metrics, by[Severity.MEDIUM])} — a mean over "
                f"a set that can be empty, or a score beside a finite loss, not the objective; "
                f"the training itself is not shown to be broken"), STATISTIC_KEY,
                Severity.MEDIUM))
        if Severity.LOW in by:
            out.append(Raise(_NAN, (
                f"non-finite bound: {_listed(metrics, by[Severity.LOW])} — a limit or a "
                f"best-so-far starting value, not a measurement"),
                SETTING_KEY, Severity.LOW))
        if shown_rate:
            out.append(Raise(_NAN, (
                f"non-finite learning rate printed again: {_listed(metrics, shown_rate)} — "
                f"the loss stayed finite after the first, so it is not the rate applied"),
                SETTING_KEY, Severity.LOW))
        return out + self._rate_shown(metrics)

    def _scaled_back(self, metrics: dict[str, float]) -> list[Signal]:
        """One non-finite loss in a run whose records print a dynamic loss scale (fp16's:
        `lm loss NAN | loss scale 4.0`, Megatron averaging an interval that held an
        overflowed step), then the loss finite and still moving on `SCALED_RECORDS`
        records: the scaler skipped the overflowed step, as it is built to. Weights made
        NaN never give a finite loss again, so they were not hurt: resolved. A second
        non-finite loss stays open (the overflow recurs: the scale is not finding a
        level the run can train at)."""
        losses = self._scaled_losses
        if losses is None or self._bad_objectives != 1:
            return []
        losses.update(v for k, v in metrics.items()
                      if math.isfinite(v) and role_of(k, v) is Role.OBJECTIVE)
        if len(losses) < SCALED_RECORDS:
            return []
        self._scaled_losses = None
        return [Resolve(_NAN, (
            f"the loss came back finite and kept changing on {len(losses)} records after "
            f"the one non-finite loss, under a dynamic loss scale: the scaler skipped the "
            f"overflowed step, and weights made NaN never give a finite loss again"))]

    def _rate_shown(self, metrics: dict[str, float]) -> list[Signal]:
        """A learning rate printed as inf, then the loss finite and still moving on
        `RATE_RECORDS` records: an update at an infinite rate makes every weight inf or
        NaN and the next loss with them, so the printed rate is not the one the optimiser
        applies (a schedule helper's display: UaNet's `[epoch 2, lr inf, …]` over 100
        epochs whose loss fell from 5.2 to 8.6 and back, finite throughout). Resolved, and
        its later prints a notice; never after a non-finite objective."""
        losses = self._rate_losses
        if losses is None or self._bad_objective:
            return []
        losses.update(v for k, v in metrics.items()
                      if v != 0 and math.isfinite(v) and role_of(k, v) is Role.OBJECTIVE)
        if len(losses) < RATE_RECORDS:
            return []
        self._rate_losses, self._rate_display = None, True
        return [Resolve(_NAN, (
            f"the loss stayed finite and kept changing after the learning rate was printed "
            f"as inf ({len(losses)} finite values since): an infinite rate would have "
            f"made the weights non-finite, so the printed rate is not the one applied"))]

    def _all_finite(self, metrics: dict[str, float]) -> list[Signal]:
        out: list[Signal] = []
        if self._gradient_run and self._norm_back(metrics):
            out.extend(self._recovered(metrics))
        skipped = metrics.get("number_of_nan_iterations", 0)
        if skipped > 0:
            # Megatron-LM skips a NaN iteration and counts it instead of printing nan.
            out.append(Raise(_NAN, f"Megatron-LM reports {skipped:g} NaN iteration(s) in this "
                                   f"logging interval"))
        return out

    def _gradient(self, metrics: dict[str, float], names: list[str]) -> list[Signal]:
        self._gradient_run += 1
        values = _listed(metrics, names)
        sibling = any(math.isfinite(v) and role_of(k, v) is Role.GRADIENT
                      for k, v in metrics.items())
        if self._gradient_run >= GRADIENT_RECORDS and sibling:
            # A finite norm beside the non-finite one (an epoch's `grad_norm_avg` over
            # steps a loss scaler skipped, next to the last step's `grad_norm_val`): the
            # average is spoilt, the updates are not. (A loss that merely moves vouches
            # for nothing: with every step skipped, the same weights give each batch its
            # own loss.) The first record's notice stands.
            self._gradient_only = not self._objective_seen
            return []
        if self._gradient_run < GRADIENT_RECORDS:
            self._gradient_only = not self._objective_seen
            return [Raise(_NAN, (
                f"non-finite gradient norm beside a finite loss: {values} (an fp16 loss "
                f"scaler's skipped step looks like this; a second in a row is a blocker)"),
                severity=Severity.MEDIUM)]
        why = (f"non-finite on {self._gradient_run} records in a row: the updates are "
               f"broken, whatever the loss shows")
        return [Reassess(_NAN, Severity.BLOCKER, why),
                Raise(_NAN, f"non-finite gradient norm: {values}, {why}")]

    @staticmethod
    def _norm_back(metrics: dict[str, float]) -> bool:
        """A finite gradient norm with a finite loss beside it."""
        return finite_objective(metrics) and any(
            math.isfinite(v) and role_of(k, v) is Role.GRADIENT for k, v in metrics.items())

    def _recovered(self, metrics: dict[str, float]) -> list[Signal]:
        run, self._gradient_run = self._gradient_run, 0
        if not self._gradient_only:
            return []  # a NaN objective is open as well: that one stands
        self._gradient_only = False
        norm = next(f"{k}={v:.4g}" for k, v in metrics.items()
                    if math.isfinite(v) and role_of(k, v) is Role.GRADIENT)
        return [Resolve(_NAN, (
            f"the gradient norm came back finite ({norm}) with the loss finite after {run} "
            f"non-finite record(s): overflowing steps were skipped, the weights were not hurt"))]

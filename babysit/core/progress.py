"""Progress: whether the run moved since the last poll, how fast, and for how long not.

Progress is a step advance, or metrics from a run that reports no steps, or — for a
process whose log babysit cannot read — busy CPUs. The rate comes from steps between
polls; the stall threshold grows with the longest quiet gap the run has already shown
and recovered from, so a run that logs every ten minutes is not called stalled at
minute three.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import dataclass

from babysit.config import RuleSettings
from babysit.units import count, format_duration

# CPU seconds a log-less process must burn between polls to count as working.
_BUSY_CPU_SECONDS = 0.5
# CPU seconds over a stall that still count as a hang (the process is not computing).
_HUNG_CPU_SECONDS = 1.0


@dataclass(frozen=True)
class ProgressSample:
    now: float
    step: int | None
    advanced: bool  # the step moved forward
    metrics_without_steps: bool  # metrics arrived from a run that reports no step
    cpu_seconds: float | None  # CPU time of the run's process tree, when visible
    log_visible: bool  # babysit reads the run's log (else CPU is the only sign of work)
    baseline: bool
    activity: bool = False  # the service saw the run do something (new log entries...)


class Progress:
    def __init__(self, started: float) -> None:
        self.last_progress_at = started
        self.longest_gap = 0.0
        self.quiet_polls = 0
        self._rate_origin: tuple[float, int] | None = None
        self._last_step_seen: tuple[float, int] | None = None
        self._cpu_at_progress: float | None = None
        self._last_cpu: float | None = None
        self._rate: float | None = None  # steps/s between the last two polls with steps
        # Time between progress seen at polls with quiet polls in between: the cadence of
        # a run slower than babysit's polling.
        self._gaps: deque[float] = deque(maxlen=20)

    def observe(self, sample: ProgressSample) -> bool:
        """Record one poll; True when the run made progress."""
        progressed = sample.advanced or sample.metrics_without_steps or sample.activity
        cpu = sample.cpu_seconds
        if (not sample.log_visible and cpu is not None and self._last_cpu is not None
                and cpu - self._last_cpu > _BUSY_CPU_SECONDS):
            progressed = True
        self._last_cpu = cpu
        if progressed or self._cpu_at_progress is None:
            self._cpu_at_progress = cpu
        self._rate = None
        if progressed:
            if not sample.baseline and self.quiet_polls:
                gap = sample.now - self.last_progress_at
                self.longest_gap = max(self.longest_gap, gap)
                self._gaps.append(gap)
            self._measure(sample.now, sample.step)
            self.last_progress_at = sample.now
            self.quiet_polls = 0
        elif not sample.baseline:
            self.quiet_polls += 1
        return progressed

    def _measure(self, now: float, step: int | None) -> None:
        if step is None:
            return
        if self._rate_origin is None:
            self._rate_origin = (now, step)
        elif self._last_step_seen is not None:
            then, old = self._last_step_seen
            if now > then and step > old:
                self._rate = (step - old) / (now - then)
        self._last_step_seen = (now, step)

    @property
    def poll_rate(self) -> float | None:
        """Steps per second between this poll and the previous one with steps."""
        return self._rate

    def steps_per_second(self, reported: float | None = None) -> float | None:
        """The rate since babysit first saw a step; else what the run reports (it/s)."""
        if self._rate_origin is not None and self._last_step_seen is not None:
            (t0, s0), (t1, s1) = self._rate_origin, self._last_step_seen
            if t1 > t0 and s1 > s0:
                return (s1 - s0) / (t1 - t0)
        return reported if reported and math.isfinite(reported) else None

    def observed_cadence(self) -> float | None:
        """The run's usual seconds between progress, as seen between polls (None while
        it always moves between two polls, or too few gaps were seen)."""
        return statistics.median(self._gaps) if len(self._gaps) >= 2 else None

    def quiet_for(self, now: float) -> float:
        return now - self.last_progress_at

    def hung(self, cpu_seconds: float | None) -> bool:
        """No CPU time to speak of since the last progress: waiting, not computing."""
        return (cpu_seconds is not None and self._cpu_at_progress is not None
                and cpu_seconds - self._cpu_at_progress < _HUNG_CPU_SECONDS)

    def restarted(self, now: float) -> None:
        """A new attempt began: its quiet time starts now, and its first rate is
        measured from its own first step (a process starting up is not training slowly)."""
        self.quiet_polls = 0
        self.last_progress_at = now
        self._cpu_at_progress = None
        self._last_step_seen = None
        self._rate = None


@dataclass(frozen=True)
class StallAllowance:
    seconds: float
    why: str  # what set it, for the report


_PHASE_NAMES = {"setup": "start-up", "save": "a checkpoint save", "eval": "an evaluation"}


def stall_allowance(*, interval: float, longest_gap: float, cadence: float | None,
                    cadence_source: str, phase: str | None,
                    longest_phase: float, rules: RuleSettings) -> StallAllowance:
    """Seconds without progress after which a run counts as stalled.

    At least `stall_polls` polling intervals (the seed's rule) and three times the longest
    quiet gap the run already showed and recovered from; `stall_cadence_factor` times
    its usual gap between progress lines when that is known, else at least
    `stall_unknown_seconds`. Start-up, a checkpoint save and an evaluation get their own,
    longer allowance: a barrier, an NFS write or an eval pass looks like a hang."""
    seconds = max(rules.stall_polls * interval, 3.0 * longest_gap, rules.stall_seconds)
    why = count(rules.stall_polls, "poll")
    if cadence is not None:
        if rules.stall_cadence_factor * cadence > seconds:
            seconds = rules.stall_cadence_factor * cadence
            why = f"{rules.stall_cadence_factor:g}× its usual {cadence:.3g}s between progress " \
                  f"lines ({cadence_source})"
    elif rules.stall_unknown_seconds > seconds:
        seconds = rules.stall_unknown_seconds
        # (Said after "beyond": "… for 11m 0s (7 polls), beyond the 10m 0s allowed …".)
        why = f"the {format_duration(seconds)} allowed while its cadence is not known"
    floor = {"setup": rules.stall_setup_seconds, "save": rules.stall_save_seconds,
             "eval": rules.stall_eval_seconds}.get(phase or "", 0.0)
    allowance = max(floor, 3.0 * longest_phase)
    if allowance > seconds and phase in _PHASE_NAMES:
        seconds = allowance
        why = f"the allowance for {_PHASE_NAMES[phase]}"
    return StallAllowance(seconds, why)

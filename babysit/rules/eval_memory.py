"""An evaluation's best level, remembered past the rule's window (issue 24).

The evaluation rule keeps the last two dozen evaluations of each metric: enough for a
level and its noise, and cheap. A run that evaluates often leaves its best far behind
that window: a checkpoint sweep's Dice peaks at 0.740 at epoch 43 of 200 and sits near
0.60 at the end; an earthquake model's validation loss reached 2.14 at step 33,400 and
is 9-15 three million steps later. Inside the window the metric looks merely noisy, and
the gap to its best is never seen.

So the best level (the best median of five evaluations in a row: one lucky evaluation is
not a level) is kept for the whole run, with the training loss at the time and the first
evaluation, and the latest level (median of five) is judged against it as the windowed
level test judges its own best: beyond four level-sigmas of the evaluations' recent
scatter and by 3 × `eval_min_worsening` of it. The scatter is the largest of the
window's point-to-point noise, the spread of its values and the noise when the best was
reached: a best left far behind was the least of many levels, low by luck as much as by
skill, and two dozen evaluations sometimes show half the scatter a plateau really has.
A log with no training loss to compare with is judged when the metric first improved
beyond its noise (the run learned, then the evaluation fell back); one that never
improved is not this rule's.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from babysit.config import RuleSettings
from babysit.rules import trends

# Evaluations in the remembered best level: five, as the latest level. The best of a
# hundred levels of three is an extreme draw (two of their sigmas below the plateau).
_LEVEL = 5
_NOW = 5  # evaluations in the latest level
_MIN_EVALS = 10  # evaluations in the window before the test speaks
# As the windowed level test (eval_trends): a level of five's noise against a point's,
# times √2 for the gap between two levels. The sigmas the gap must exceed are one more
# than there (4): over a long run both ends are extremes of many levels, the best low
# by luck and the latest high by luck, each by up to three of a level's sigmas.
_LEVEL_NOISE = 0.76
_LEVEL_K = 5.0


@dataclass(slots=True)
class BestLevel:
    """The best level an evaluation metric reached, oriented so that higher is worse."""

    level: float
    value: float  # the metric's own median at that level
    train: float | None  # the training loss set beside the level's last evaluation
    first: float  # the first evaluation, oriented
    at: int  # how many evaluations there had been when it was reached
    noise: float  # the point-to-point noise of the evaluations then (oriented)


class BestLevels:
    """The best level of each evaluation metric, updated once per evaluation."""

    def __init__(self) -> None:
        self._best: dict[str, BestLevel] = {}
        self._count: dict[str, int] = {}
        self._first: dict[str, float] = {}

    def note(self, key: str, series: Sequence[tuple[float, float | None]],
             direction: int) -> None:
        """Take the newest evaluation of `series` ((value, train loss) in order) into
        account: call once per new evaluation."""
        count = self._count[key] = self._count.get(key, 0) + 1
        first = self._first.setdefault(key, -direction * series[-1][0])
        if len(series) < _LEVEL:
            return
        last = [value for value, _ in list(series)[-_LEVEL:]]
        level = statistics.median(-direction * v for v in last)
        best = self._best.get(key)
        if best is None or level < best.level:
            noise = trends.noise_scale([-direction * v for v, _ in series])
            self._best[key] = BestLevel(level, statistics.median(last), series[-1][1], first,
                                        count, noise)

    def forget(self, key: str) -> None:
        """Start the metric's levels afresh (its objective changed)."""
        for held in (self._best, self._count, self._first):
            held.pop(key, None)

    def replace_latest(self, key: str, series: Sequence[tuple[float, float | None]],
                       direction: int) -> None:
        """The newest evaluation was revised in place (an evaluation pass's running
        figure, then its summary): count it once."""
        self._count[key] = self._count.get(key, 1) - 1
        self.note(key, series, direction)

    def worse_than_best(self, key: str, series: Sequence[tuple[float, float | None]],
                        direction: int, rules: RuleSettings,
                        in_window: bool = False) -> str | None:
        """Why the latest level is far worse than the best level the run ever reached,
        or None. Only once that best has left the window (`series`), where the windowed
        tests (eval_trends) no longer see it, unless `in_window` (a metric judged on
        levels alone)."""
        best = self._best.get(key)
        count = self._count.get(key, 0)
        if best is None or len(series) < _MIN_EVALS or count - best.at < _NOW:
            return None  # the latest level would still hold the best one's evaluations
        if not in_window and count - best.at < len(series) - _LEVEL + 1:
            return None  # its evaluations are all in the window: the windowed tests' case
        worse = [-direction * v for v, _ in series]
        now = statistics.median(worse[-_NOW:])
        sigma = max(trends.noise_scale(worse), trends.spread(worse), best.noise)
        if not trends.beyond_noise(now - best.level, best.level, sigma * _LEVEL_NOISE,
                                   _LEVEL_K, 3 * rules.eval_min_worsening):
            return None
        train = _train_since(best, series, sigma, rules)
        if train is None:
            return None
        now_value = statistics.median(v for v, _ in list(series)[-_NOW:])
        return (f"is far worse than its best level ({best.value:.4g} → {now_value:.4g}, "
                f"{count - best.at} evaluations after it, beyond its noise σ≈{sigma:.2g}) "
                f"{train}")


def _train_since(best: BestLevel, series: Sequence[tuple[float, float | None]],
                 sigma: float, rules: RuleSettings) -> str | None:
    """How the training loss went since the best level: fell or held (the evaluation's
    trouble), rose (the run's: None); with no training loss at all, whether the metric
    had first improved beyond its noise (else None: a run that never learned)."""
    last = series[-1][1]
    if best.train is not None and last is not None:
        if last > best.train:
            return None
        return (f"while train loss held at {last:.4g}" if last == best.train else
                f"while train loss fell ({best.train:.4g} → {last:.4g})")
    if best.train is not None or any(train is not None for _, train in series):
        return None  # known at times only: too little to tell
    if not trends.beyond_noise(best.first - best.level, best.level, 3 * sigma, 1.0,
                               3 * rules.eval_min_worsening):
        return None
    return "after it first improved, with no training loss in the log to compare with"

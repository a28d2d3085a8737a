"""Rules over the run's metric stream, behind one small protocol.

Each rule sees one `Observation` at a time (what one record said, with the keys the
run uses for loss, learning rate and gradient norm already picked), keeps the small
window it needs, and answers with signals: raise this anomaly, resolve that one. The
judging itself is done by the pure evaluators in `metric_rules`. Adding a rule is one
class here and one line in `METRIC_RULES`.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules import eval_trends, grad_trends, trends
from babysit.rules import metric_rules as mr
from babysit.rules.any_loss_blown_up import AnyLossBlownUpRule
from babysit.rules.below_mean import BelowMeanRule
from babysit.rules.best_unreached import BestUnreachedRule
from babysit.rules.bottomless_loss import BottomlessLossRule
from babysit.rules.chance_level import ChanceRule
from babysit.rules.chance_streak import ChanceStreakRule
from babysit.rules.collapse import CollapseRule
from babysit.rules.confidently_wrong import ConfidentlyWrongRule
from babysit.rules.constant_answer import ConstantAnswerRule
from babysit.rules.correlation_chance import CorrelationChanceRule
from babysit.rules.detector_chance import DetectorChanceRule
from babysit.rules.epoch_blowup import EpochBlowUpRule
from babysit.rules.error_rate_ceiling import ErrorRateCeilingRule
from babysit.rules.eval_blockers import BlockerLedger, Why
from babysit.rules.eval_chance import EvalChanceRule
from babysit.rules.eval_context import ContextualEvaluations, twin_train_loss
from babysit.rules.eval_memory import BestLevels
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.eval_restated import Restatements, restates_best
from babysit.rules.exploration import ExplorationRule
from babysit.rules.flat_fitness import FlatFitnessRule
from babysit.rules.flat_scores import FlatScoreRule
from babysit.rules.gan_frozen import FrozenPlayerRule
from babysit.rules.gan_saturated import SaturatedGameRule
from babysit.rules.grad_without_learning import GrowingGradRule
from babysit.rules.impossible_metrics import ImpossibleMetricRule, impossible_share
from babysit.rules.inverted_ranking import InvertedRankingRule
from babysit.rules.learning_rules import NotLearningRule
from babysit.rules.loss_rules import LossRule
from babysit.rules.lr_config import LrConfigRule
from babysit.rules.majority_class import MajorityClassRule
from babysit.rules.metric_floor import MetricFloorRule
from babysit.rules.never_learned import NeverLearnedRule
from babysit.rules.no_positives import NoPositiveRule
from babysit.rules.nonfinite_rule import NonFiniteRule
from babysit.rules.one_class_recalls import OneClassRecallRule
from babysit.rules.perplexity_chance import PerplexityChanceRule
from babysit.rules.posterior_collapse import PosteriorCollapseRule
from babysit.rules.preference_chance import PreferenceChanceRule
from babysit.rules.psnr_floor import PsnrFloorRule
from babysit.rules.q_values import QValueRule
from babysit.rules.return_collapse import ReturnCollapseRule
from babysit.rules.runaway import RUNAWAY_TIMES, running_away
from babysit.rules.saturated_outputs import SaturatedOutputRule
from babysit.rules.separation_floor import SeparationFloorRule
from babysit.rules.shrunken_epochs import ShrunkenEpochRule
from babysit.rules.signals import (
    MetricRule,
    Observation,
    Raise,
    Reassess,
    Resolve,
    Signal,
    at_run_start,
)
from babysit.rules.slow_climb import SlowClimbRule
from babysit.rules.stale_best import StaleBestRule
from babysit.rules.throughput_trends import DataWaitRule, StallWatch
from babysit.rules.uniform_output import UniformOutputRule
from babysit.rules.user_rules import UserAlertRule
from babysit.user_alerts import UserAlert

__all__ = ["METRIC_RULES", "EvalRule", "LossRule", "LrScheduleRule", "MetricRule",
           "NonFiniteRule", "NotLearningRule", "Observation", "Raise", "Reassess", "Resolve",
           "RuleSet", "Signal"]


# An evaluation loss this many times the training loss is beyond what over-fitting
# alone gives while the evaluation still improves (see `EvalRule._gap`).
_LEAK_RATIO = 3 * eval_trends.GAP_RATIO
# What a generalisation gap raised as a notice says: the evaluation was at its best then
# (the run's end weighs it against the checkpoint the run kept: core.run).
GAP_AT_BEST = "the evaluation is still at its best"
# ... and what it says when it grew only because the evaluation left its best (short of
# a leak's ratio): the best weights still hold the notice's gap.
GAP_LEFT_BEST = "the evaluation left its best"


_KNOWN_NORMS = 5  # norms before a ceiling is judged against the run's own level
_UNDONE_EVALS = 2  # evaluations in a row back at the run's first
_LOSS_NAME = lazy_re.compile(r"loss|nll|objective", re.IGNORECASE)
_UNDONE_GAIN = 0.5  # the share of its best the evaluation had gained over its first
_UNDONE_KEPT = 0.1  # the share of that gain it kept, at most
# An evaluation error never better than its first, this many times that on its last
# `_TIMES_EVALS` evaluations (of `_TIMES_MIN_EVALS` at least): a blocker.
_TIMES_FIRST = 2.5
_TIMES_BEST = 5.0  # ... or this many times the best it held, wherever it began
_TIMES_EVALS = 3
_TIMES_MIN_EVALS = 6


def _held_best(values: Sequence[float], direction: int) -> float:
    """The best an evaluation held on two evaluations in a row (the worse of each pair):
    one stray figure (a training bar's loss read as an evaluation's) is no best."""
    if len(values) < 2:
        return values[-1]
    pairs = [min(a * direction, b * direction) for a, b in pairwise(values)]
    return max(pairs) * direction


_COLLAPSED_EVALS = 5  # evaluations in a row a score stands fallen at
_COLLAPSED_SHARE = 0.2  # ... at this share of its best or less
_TIMES_FIRST_SCORE = 2.0  # a score never better than its first, down by this factor
_COLLAPSE_CLEAR = 1.5  # back this far above the line it crossed: withdrawn
_LEAST_SCORE = 0.1  # a best below this share of its scale is judged by neither
_ZEROS_HELD = 20  # norms of 0 in a row that are a collapse, in a run whose 0s came and went
_NO_GRADIENT = 1e-8  # a norm this small is none


def _score_fallen(last: Sequence[float], best: float, first: float | None,
                  clear: float = 1.0, held: float | None = None) -> str | None:
    """How a score's last evaluations have fallen, `clear` times above the lines they
    are held to: `fifth` (each at a fifth of its best or less: the best it `held` on two
    evaluations in a row, where known), `halved` (never better than its `first`
    evaluation, and the last three at half of it or less), or None."""
    if max(last) <= clear * _COLLAPSED_SHARE * (held if held is not None else best):
        return "fifth"
    if first is not None and first == best \
            and max(last[-_TIMES_EVALS:]) <= clear * first / _TIMES_FIRST_SCORE:
        return "halved"
    return None


class GradNormRule:
    """Exploding gradient norms, and norms that collapse towards zero (reported under
    the artifact's one gradient type, with their own key)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._recent: deque[float] = deque(maxlen=rules.grad_norm_window)
        # The norms an explosion is judged against: not an exact 0, a step with no
        # gradient at all (a GRPO group whose rewards are all equal has no advantage to
        # follow, TRL's `'grad_norm': 0.0` on half its steps; a skipped overflow step),
        # against which any real norm would look like an explosion.
        self._moving: deque[float] = deque(maxlen=rules.grad_norm_window)
        self._baseline: list[float] = []
        # What this rule raised and has not resolved: a healthy point says nothing else.
        self._raised: set[str] = set()
        self._back_below = rules.grad_norm_max  # an explosion is over below this
        self._climb: list[float] = []  # the norms of the latest unbroken rise
        self._runaway = False  # the open explosion was judged a runaway
        self._first_high: float | None = None  # the norm raised on, if among the first
        self._zeros = 0  # norms of exactly 0 in a row, the latest
        self._came_back = False  # norms of 0 came and went before: a step may have none

    def observe(self, point: Observation) -> Sequence[Signal]:
        value = point.grad_norm
        if value is None:
            return []
        out: list[Signal] = []
        raised = self._raised
        reason = mr.evaluate_grad_explosion(self._moving, value, self.rules) \
            if value != 0 else None
        if reason is not None and "" not in raised:
            raised.add("")
            # (raised on a run's first norms, nothing to set them against: see below)
            self._first_high = value if len(self._moving) < _KNOWN_NORMS else None
            # Back means below the ceiling and near the level the norm held before; a
            # norm that goes on growing past a window that has filled with its own
            # climb (3.8e12, 5.7e12 … 1.4e14) has not come back.
            before = statistics.median(self._moving) if self._moving else None
            self._back_below = min(self.rules.grad_norm_max,
                                   self.rules.grad_norm_ratio * before) \
                if before is not None and before < self.rules.grad_norm_max \
                else self.rules.grad_norm_max
            out.append(Raise(AnomalyType.GRAD_EXPLOSION, f"gradient explosion: {reason}"))
        elif "" in raised and math.isfinite(value) and value <= self._back_below:
            raised.discard("")
            self._runaway = False
            out.append(Resolve(AnomalyType.GRAD_EXPLOSION, f"grad_norm back to {value:.4g}"))
        elif "" in raised and self._first_high is not None and math.isfinite(value) \
                and len(self._moving) >= _KNOWN_NORMS \
                and max(itertools.islice(reversed(self._moving), _KNOWN_NORMS - 1)) \
                < self._first_high and value <= self._first_high / 2:
            # Raised on the run's first norms, which have fallen since, to half of that
            # and none above it (fairseq's fp16 transformer with clipping off: gnorm
            # 90465 at its first print, 24930 at its last, the loss falling all along):
            # the model's norms run that high, they did not explode.
            raised.discard("")
            self._runaway = False
            out.append(Resolve(AnomalyType.GRAD_EXPLOSION,
                               f"grad_norm fell from {self._first_high:.4g} to {value:.4g} "
                               f"since the run's first norms: this model's norms run that "
                               f"high, they did not explode"))
        if not math.isfinite(value):
            return out
        self._recent.append(value)
        if value != 0:
            self._moving.append(value)
        self._climb = [*self._climb[-256:], value] if self._climb and value > self._climb[-1] \
            else [value]
        if "" in raised and not self._runaway:
            climb = grad_trends.steady_climb(self._climb)
            if climb is not None:
                self._runaway = True
                out.append(Reassess(AnomalyType.GRAD_EXPLOSION, Severity.BLOCKER,
                                    f"{climb}: it runs away towards overflow"))
        if len(self._baseline) < self.rules.grad_vanish_points * 2:
            self._baseline.append(value)
        if value > _NO_GRADIENT and self._zeros:
            self._came_back = True  # 0s came and went: steps with nothing to follow
        self._zeros = self._zeros + 1 if value <= _NO_GRADIENT else 0
        vanished = mr.evaluate_grad_vanishing(self._baseline, self._recent, self.rules) \
            or mr.evaluate_grad_collapse(self._baseline, self._recent)
        if vanished is not None and self._came_back and self._zeros < _ZEROS_HELD:
            # Norms that fell to 0 before and came back (TRL's GRPO: `'grad_norm': 0.0`
            # wherever a group's rewards were all equal, a few steps at a time between
            # real ones): steps with nothing to follow, not a collapse, until the 0s hold.
            vanished = None
        if vanished is not None:
            raised.add("vanishing")
            out.append(Raise(AnomalyType.GRAD_EXPLOSION, vanished, key="vanishing"))
        elif "vanishing" in raised and value > 0:
            raised.discard("vanishing")
            out.append(Resolve(AnomalyType.GRAD_EXPLOSION, f"grad_norm back to {value:.3g}",
                               key="vanishing"))
        return out


class LrScheduleRule:
    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._trace: mr.LrTrace | None = None
        self._raised = False
        self._step: int | None = None

    def observe(self, point: Observation) -> Sequence[Signal]:
        value = point.lr
        if value is None or not math.isfinite(value):
            return []
        if point.step is not None:
            if self._step is not None and point.step < self._step:
                self.restart()
            self._step = point.step
        previous = self._trace
        if previous is None:
            trace = mr.LrTrace(value, value, value, int(value == 0), value > 0, 0)
        else:
            peak = max(previous.peak, value)
            # Back at (or above) the peak after decaying well below it is a return to the
            # peak, not a new warm-up: the low it fell to is kept, so the rule sees it.
            decayed = previous.low_after_peak < previous.peak * 0.95
            low = value if value >= previous.peak and not decayed else \
                min(previous.low_after_peak, value)
            trace = mr.LrTrace(
                current=value, peak=peak, low_after_peak=low,
                zero_run=previous.zero_run + 1 if value == 0 else 0,
                was_positive=previous.was_positive or value > 0,
                rising_run=previous.rising_run + 1 if value > previous.current else 0,
                faded=value == 0 and (previous.faded if previous.zero_run else
                                      0 < previous.current <= mr.FADED * previous.peak
                                      or (previous.falls >= mr.FADED_FALLS and 0 < previous.current
                                          <= mr.FADED_STEPPED * previous.peak)),
                falls=0 if value > previous.peak else
                previous.falls + (value < previous.current),
            )
        if trace.rising_run >= 2 and trace.low_after_peak < 0.5 * trace.peak:
            # Climbing again for several points from far below its peak: a new warm-up
            # (a restart, or a new run in the same log), not a schedule gone wrong.
            trace = mr.LrTrace(value, value, value, 0, True, 0)
        self._trace = trace
        if trace.rising_run == 1:
            return []  # one rise: a jump back, or the start of a new warm-up; the next says
        reason = mr.evaluate_lr_schedule(trace, point.step, point.target_steps,
                                         point.lr_schedule, self.rules)
        if reason is not None:
            self._raised = True
            return [Raise(AnomalyType.LR_SCHEDULE, reason)]
        if self._raised:  # the schedule is doing what it should again
            self._raised = False
            return [Resolve(AnomalyType.LR_SCHEDULE, f"learning rate now {value:.3g}")]
        return []

    def restart(self) -> None:
        """The run started again (a resume, or a new run in the same log): a new schedule."""
        self._trace = None
        self._raised = False

    @property
    def peak(self) -> float | None:
        """The highest learning rate seen (the configured peak, for most schedules)."""
        return self._trace.peak if self._trace is not None else None


_EVAL_WINDOW = 24  # evaluations kept per metric: enough for a level and its noise
# A copy of another metric: a decoder layer's auxiliary loss (DETR's `loss_bbox_3` of six
# layers) or its unweighted twin (`loss_giou_unscaled`). The metric itself is judged;
# thirty noisy copies of it would only multiply the chance of a rise by luck. Not a
# score's order (`val_bleu_4`, BLEU over 4-grams; `acc_1`, top-1): only a loss has layers.
_AUXILIARY = lazy_re.compile(r"loss\w*_\d(?:_unscaled)?$|_unscaled$")
# An evaluation's total loss, and the terms of it printed beside it (Mask R-CNN's
# `val_loss` with `val_rpn_class_loss`, `val_mrcnn_class_loss` …).
_TOTAL_LOSS = lazy_re.compile(r"(eval|val|valid|validation|test|dev)[_/]loss")


def _loss_parts(names: tuple[str, ...]) -> frozenset[str]:
    """The evaluation losses in a record that are terms of its total evaluation loss,
    printed beside it: judged through their total (one term worsening while the total
    improves is the objective's own trade-off, not the model getting worse on unseen
    data; the total worsening is raised on the total)."""
    totals = {m.group(1) for key in names if (m := _TOTAL_LOSS.fullmatch(key))}
    if not totals:
        return frozenset()
    return frozenset(key for key in names if "loss" in key and _TOTAL_LOSS.fullmatch(key) is None
                     and any(key.startswith((f"{split}_", f"{split}/")) for split in totals))

# What a breakdown's name adds to its headline's: a threshold (`_50`, `_75`) or an object
# size (`_s`, `_m`, `_l`). Not a class (`_class_1`): one class's accuracy collapsing while
# the overall one holds is the model giving that class up, judged on its own.
_BREAKDOWN = lazy_re.compile(r"^(?:\d+(?:\.\d+)?|[sml]|small|medium|large)$")


def _breakdowns(judged: tuple[tuple[str, int], ...]) -> frozenset[str]:
    """The judged scores that break down another score of the same record, named as it
    with a qualifier after it (mmdetection's `bbox_mAP_50`, `bbox_mAP_75`, `bbox_mAP_s`
    beside `bbox_mAP`, the COCO figure over every threshold and size): judged through
    that headline. One threshold's score wanders as the detector trades its boxes' fit
    for its recall (a traffic-sign Cascade R-CNN's mAP@75 0.119 → 0.112 → 0.103 over its
    last three epochs, its mAP 0.144 → 0.134 → 0.136); the headline worsening is raised
    on the headline."""
    scores = [key for key, direction in judged if direction > 0]
    if len(scores) < 2:
        return frozenset()
    return frozenset(key for key in scores
                     if any(key != head and key.startswith(f"{head}_")
                            and _BREAKDOWN.match(key[len(head) + 1:]) for head in scores))


_SCORE_AT_BEST = "a score of the same evaluation is at its best"
_SCORE_SLACK = 0.01  # a score this near its best (as a share of it) is still at it


class EvalRule:
    """Evaluation metrics that get worse while the training loss improves."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self.series: dict[str, deque[tuple[float, float | None]]] = {}
        self.best: dict[str, tuple[float, int | None]] = {}  # best value and its step
        # Each metric's best before its latest evaluation: what that evaluation's figures,
        # revised in place (a pass's running or per-batch ones), are judged against.
        self._best_before: dict[str, tuple[float, int | None] | None] = {}
        self._raised: set[str] = set()
        self._at: dict[str, int | None] = {}  # the training step of each metric's latest
        self._directions: dict[str, int] = {}  # each judged metric's direction (+1: higher)
        self._gapped: dict[str, int] = {}  # evaluations in a row far above the training loss
        # The judged metrics among a record's names (most records share a few shapes).
        self._judged: dict[tuple[str, ...], tuple[tuple[str, int], ...]] = {}
        # The breakdowns among each judged shape's scores (see `_breakdowns`).
        self._breakdowns: dict[tuple[tuple[str, int], ...], frozenset[str]] = {}
        self._restatements = Restatements()
        self._mild: set[str] = set()  # raised as a notice (eval_after_best, not clearly worse)
        # Why each metric's degradation is held at blocker (see `eval_blockers`).
        self._blockers = BlockerLedger()
        self._ran_away: set[str] = set()  # judged running away at some time
        self._contextual = ContextualEvaluations()
        self._levels = BestLevels()  # each metric's best level, kept past the window
        self._totals: set[str] = set()  # evaluation losses that are a total (see `_eval_term`)
        # Each metric's first evaluation, when it came at the run's start (None: later).
        # Each metric's first evaluation: its value, its step, and whether it came at the
        # run's start (an excerpt's first is no start to be back at).
        self._first: dict[str, tuple[float, int | None, bool]] = {}
        self._evaluations: dict[str, int] = {}  # evaluations of each metric so far
        # A score's best held on two evaluations in a row (the worse of each pair): one
        # stray figure (HAQ's `acc: 48.43` among accuracies of 7) is no best to collapse from.
        self._held_score: dict[str, float] = {}
        # The scores of the same evaluation when each evaluation loss was at its best.
        self._scores_then: dict[str, dict[str, float]] = {}

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        metrics = point.metrics
        names = tuple(metrics)
        judged = self._judged.get(names)
        if judged is None:
            if len(self._judged) >= 256:
                self._judged.clear()
            parts = _loss_parts(names)
            judged = self._judged[names] = tuple(
                (key, direction) for key in names
                if (direction := evaluation_direction(key)) and not _AUXILIARY.search(key)
                and key not in parts)
        for key, direction in judged:
            if direction < 0 and key.endswith("loss") and not _eval_term(key, self._totals):
                self._totals.add(key)
        # A term of an evaluation's loss whose total the run prints too (VoteNet's `eval
        # mean sem_cls_loss: 0.0123` beside `eval mean loss: 13.74`, each on a line of its
        # own): the total is judged; a small term's wander is not the evaluation's.
        judged = tuple((key, direction) for key, direction in judged
                       if not _eval_term(key, self._totals))
        # Names an evaluation's only by the record they sit in (a bare `val` beside the
        # bare `train` loss, a line of scores alone): judged by what this record holds.
        judged += self._contextual.judged(metrics)
        scores = self._contextual.scores(metrics)
        judged += scores
        if self._restatements.restated(tuple((key, metrics[key]) for key, _ in judged)):
            return out  # the run's summary of an evaluation it already printed
        breakdowns = self._breakdowns.get(judged)
        if breakdowns is None:  # (a record's judged names come in a few shapes: kept)
            if len(self._breakdowns) >= 256:
                self._breakdowns.clear()
            breakdowns = self._breakdowns[judged] = _breakdowns(judged)
        for key, direction in judged:
            value = metrics[key]
            if key in breakdowns:
                continue
            if not math.isfinite(value) or (direction > 0 and impossible_share(key, value)):
                # (a share past 100 % is no evaluation to judge: HAQ's `acc: 1557.7961`
                # among accuracies of 7, a computing error the impossible-metric rule
                # names; taken for a best, it made every later evaluation a collapse)
                continue
            series = self.series.setdefault(
                key, deque(maxlen=max(self.rules.eval_degradation_evals + 1, _EVAL_WINDOW)))
            if series and series[-1][0] == value:
                continue  # the same evaluation printed again (progress bar and summary)
            if len(judged) == 1 and key in self.best and restates_best(
                    value, self.best[key][0], [v for v, _ in series], direction):
                continue
            if series and point.step is not None and self._at.get(key) == point.step:
                # Still the same evaluation: an evaluation pass prints its batches (DETR's
                # `Test: [7/8] loss_bbox: 3.1`), or a running figure, before its summary.
                # One evaluation is one point; its latest figure stands for it.
                series[-1] = (value, series[-1][1])
                self._levels.replace_latest(key, series, direction)
                # (a figure of the pass part way through is no best: the evaluation's
                # best is its latest figure's, against the best before it)
                before = self._best_before.get(key)
                if before is None or (value - before[0]) * direction > 0:
                    self.best[key] = (value, point.step)
                else:
                    self.best[key] = before
            else:
                self._best_before[key] = self.best.get(key)
                train = twin_train_loss(key, direction, metrics)
                if direction > 0 and series:
                    pair = min(value, series[-1][0])
                    self._held_score[key] = max(self._held_score.get(key, pair), pair)
                series.append((value, train if train is not None else point.train_loss))
                self._evaluations[key] = self._evaluations.get(key, 0) + 1
                if key not in self._first and len(self._first) < _EVAL_WINDOW:
                    self._first[key] = (value, point.step, at_run_start(
                        point, self.rules.divergence_start_steps))
                self._levels.note(key, series, direction)
            self._at[key] = point.step
            self._directions[key] = direction
            best = self.best.get(key)
            if best is None or (value - best[0]) * direction > 0:
                self.best[key] = (value, point.step)
                if direction < 0:
                    self._scores_then[key] = self._scores_beside(key, metrics, judged,
                                                                 point.step)
            if (key, direction) in scores:  # judged on levels only (eval_context)
                reason = self._levels.worse_than_best(key, series, direction, self.rules,
                                                      in_window=True)
            else:
                out.extend(self._gap(key, value,
                                     _train_counterpart(metrics, point.train_loss), direction,
                                     self._score_at_best(key, metrics, judged,
                                                         point.step)))
                reason = mr.evaluate_eval_degradation(list(series), direction, self.rules) \
                    or self._levels.worse_than_best(key, series, direction, self.rules)
            if reason is not None and direction < 0 \
                    and self._score_held(key, metrics, judged, point.step):
                # An evaluation's loss worse while a score of the same evaluation is at its
                # best (a WideResNet's test loss 0.63 → 1.22 over 120 epochs as its test
                # accuracy climbs to 94.5 %): the loss grows on what the model gets wrong
                # ever more confidently; the weights are as good as they were. A notice.
                if key not in self._raised or key not in self._mild:
                    out.append(Raise(AnomalyType.EVAL_DEGRADATION, f"{key} {reason}; "
                                     f"{_SCORE_AT_BEST}", key=key, severity=Severity.LOW)
                               if key not in self._raised else
                               Reassess(AnomalyType.EVAL_DEGRADATION, Severity.LOW,
                                        _SCORE_AT_BEST, key=key))
                self._raised.add(key)
                self._mild.add(key)
            elif reason is not None:
                self._raised.add(key)
                if key in self._mild:  # raised as a notice before: now the usual medium
                    self._mild.discard(key)
                    out.append(Reassess(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
                                        f"{key} {reason}", key=key))
                else:
                    out.append(Raise(AnomalyType.EVAL_DEGRADATION, f"{key} {reason}", key=key))
            elif (key, direction) not in scores and \
                    (since_best := self._since_best(key, series, direction)) is not None:
                out.append(since_best)
            elif key in self._raised and (near := self._near_best(key, value, direction)
                                          or (direction < 0 and self._score_held(
                                              key, metrics, judged, point.step))):
                # (or, for an evaluation's loss, a score of the same evaluation back at
                # its best: a sign-language model's val loss 8 % above its best while
                # its gloss accuracy ends at its best, 0.596 — the loss grew on what the
                # model gets wrong, and what it gets right is all there)
                self._raised.discard(key)
                self._mild.discard(key)
                self._blockers.drop(key, Why.RUNAWAY)
                out.append(Resolve(AnomalyType.EVAL_DEGRADATION,
                                   f"{key} back to {value:.4g}, near its best" if near else
                                   f"{key} at {value:.4g}, but a score of the same "
                                   f"evaluation is back at its best", key=key))
            if direction < 0 and key in self._raised and key not in self._mild:
                out.extend(self._judge_runaway(key, series,
                                               self._score_at_best(key, metrics, judged)))
            if direction > 0 and key in self._raised:
                out.extend(self._judge_score_collapse(key, series))
            if key in self._raised and key not in self._mild \
                    and not self._blockers.holds(key, Why.RUNAWAY):
                out.extend(self._judge_undone(key, series, direction,
                                              self._score_at_best(key, metrics, judged)))
                if direction < 0:
                    out.extend(self._judge_multiplied(key, series,
                                                      self._score_at_best(key, metrics, judged)))
        return out

    def _judge_score_collapse(self, key: str,
                              series: Sequence[tuple[float, float | None]]) -> list[Signal]:
        """A blocker while a score (higher is better) stands at a fifth of its best or
        less on each of its last `_COLLAPSED_EVALS` evaluations (DivideMix on CIFAR-10:
        test accuracy 84.84 at epoch 9, then down epoch by epoch to 2.84 at epoch 100,
        below a guess's 10): the model has fallen apart, whatever it scored before. So,
        too, one never better than its first evaluation at half of it or less on its last
        three (below). Withdrawn to the usual medium once well clear of the line it
        crossed (half again above it)."""
        best = self.best.get(key)
        if best is None or best[0] <= 0 or len(series) < _COLLAPSED_EVALS \
                or best[0] < _LEAST_SCORE * (100.0 if best[0] > 1.0 else 1.0):
            # (a score that never reached a tenth of its scale is still finding its feet:
            # a captioner's chrF of 0.069, then 0.030, early in its first epochs)
            return []
        last = [value for value, _ in list(series)[-_COLLAPSED_EVALS:]]
        first = self._start_value(key)
        counted = self._evaluations.get(key, 0) >= _TIMES_MIN_EVALS
        held = self._held_score.get(key)
        how = _score_fallen(last, best[0], first if counted else None, held=held)
        if how is not None and self._blockers.hold(key, Why.COLLAPSED):
            top = held if held is not None else best[0]
            why = (f"has stood at a fifth of its best ({top:.4g}) or less on each of its "
                   f"last {_COLLAPSED_EVALS} evaluations ({last[-1]:.4g} now): the model has "
                   f"fallen apart on unseen data") if how == "fifth" else (
                f"has never been better than at the run's first evaluation ({first:.4g}) and "
                f"stands at half of that or less on its last {_TIMES_EVALS} evaluations "
                f"({last[-1]:.4g} now): training made the model worse on unseen data than "
                f"the one it began from")
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.BLOCKER, f"{key} {why}",
                             key=key)]
        # (withdrawn only well clear of the line it crossed, not on its noise about it)
        if self._blockers.holds(key, Why.COLLAPSED) \
                and _score_fallen(last, best[0], first, _COLLAPSE_CLEAR, held) is None:
            if not self._blockers.release(key, Why.COLLAPSED):
                return []  # another of the evaluation's blockers still holds
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
                             f"{key} back above a fifth of its best ({last[-1]:.4g})", key=key)]
        return []

    def _judge_multiplied(self, key: str, series: Sequence[tuple[float, float | None]],
                          score_holds: bool = False) -> list[Signal]:
        """A blocker while an evaluation error that was never better than at the run's
        first evaluation stands at `_TIMES_FIRST` times that or more on each of its last
        `_TIMES_EVALS` evaluations (a fine-tuned M3GNet's validation force MAE 0.030 at its
        first epoch, then 0.05, 0.09 … 0.14 while the training loss fell): training made
        the model several times worse on unseen data than the one it began from. (A slide
        of a few per cent from a first evaluation that stayed the best is over-fitting to
        look at, a medium, as before.) So, too, one at `_TIMES_BEST` times the best it held
        (on two evaluations in a row) or more on each of its last `_TIMES_EVALS`, wherever
        it began (a RealNVP's test loss on CIFAR-10: 10,015 at its best, then 1.0e6, 2.3e5,
        1.3e7 while its training loss fell; a held-out likelihood that erratic is a model
        broken on unseen data). Not while a score of the same evaluation holds near its
        best or keeps its gain."""
        if self._evaluations.get(key, 0) < _TIMES_MIN_EVALS or score_holds \
                or self._score_kept(key):
            return []
        last = min(value for value, _ in list(series)[-_TIMES_EVALS:])
        why = self._multiplied_why(key, series, last)
        if why is not None and self._blockers.hold(key, Why.MULTIPLIED):
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.BLOCKER,
                             f"{key} {why} ({series[-1][0]:.4g} now): training made the "
                             f"model worse on unseen data than the one it began from"
                             if why.startswith("has never") else f"{key} {why} "
                             f"({series[-1][0]:.4g} now): the model is broken on unseen data",
                             key=key)]
        if why is None and self._blockers.holds(key, Why.MULTIPLIED):
            if not self._blockers.release(key, Why.MULTIPLIED):
                return []  # another of the evaluation's blockers still holds
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
                             f"{key} back below several times its first evaluation or its "
                             f"best ({series[-1][0]:.4g})", key=key)]
        return []

    def _multiplied_why(self, key: str, series: Sequence[tuple[float, float | None]],
                        last: float) -> str | None:
        """How an evaluation error's last evaluations (the least of them `last`) stand
        several times above where it began or its best (see `_judge_multiplied`)."""
        first = self._start_value(key)
        best = self.best.get(key)
        if first is not None and first > 0 and best is not None and best[0] == first \
                and last / first >= _TIMES_FIRST:
            return (f"has never been better than at the run's first evaluation ({first:.4g}) "
                    f"and stands at {last / first:.1f}× that on its last {_TIMES_EVALS} "
                    f"evaluations")
        held = _held_best([value for value, _ in series], -1) if len(series) > 1 else None
        if held is not None and held > 0 and last / held >= _TIMES_BEST:
            return (f"stands at {last / held:.1f}× the best it held ({held:.4g}) or more on "
                    f"each of its last {_TIMES_EVALS} evaluations")
        return None

    def _start_value(self, key: str) -> float | None:
        """A metric's first evaluation when it came at the run's start, else None."""
        first = self._first.get(key)
        return first[0] if first is not None and first[2] else None

    def direction_of(self, key: str) -> int:
        """The direction a judged metric was judged by (+1: higher is better), 0 if none."""
        return self._directions.get(key, 0)

    def gave_back(self, key: str) -> tuple[float, float] | None:
        """How much of what a score gained from its first evaluation to its best its
        latest gave back: (that share of the gain, and the drop as a share of the best);
        None when it gained nothing, or is a loss (whose fall from an untrained model's
        level dwarfs any over-fitting after it), or is not judged."""
        first, best, series = self._first.get(key), self.best.get(key), self.series.get(key)
        if self._directions.get(key, 0) <= 0 or first is None or best is None or not series \
                or best[0] == 0:
            return None
        gain = best[0] - first[0]
        if gain <= 0:
            return None
        back = best[0] - series[-1][0]
        return back / gain, back / abs(best[0])

    def first_held_best(self, key: str) -> tuple[float, int, int | None] | None:
        """(its first value, the evaluations made, the step of the first) when a metric's
        first evaluation seen is still its best; None otherwise."""
        first, best = self._first.get(key), self.best.get(key)
        if first is None or best is None or best[0] != first[0]:
            return None
        return first[0], self._evaluations.get(key, 0), first[1]

    def _judge_undone(self, key: str, series: Sequence[tuple[float, float | None]],
                      direction: int, score_holds: bool = False) -> list[Signal]:
        """A blocker while an evaluation that had gained at least half its best since the
        run's first is back at that first value (within a tenth of what it had gained),
        or worse, on its last two (a QMIX
        agent's test return 4.4 at epoch 0, 17.5 at its best, then 6.3, 4.6, 5.3; its
        test win rate 0.0, 0.7, then 0.0 ever after): everything the run had learned,
        as its own evaluation measures it, is lost. Back to the usual medium once it
        stands above its first again. Not an evaluation loss while a score of the same
        evaluation holds near its best (`score_holds`) or keeps its gain: see
        `_score_kept`."""
        first = self._start_value(key)
        if first is None or len(series) < _UNDONE_EVALS + 1 \
                or (direction < 0 and (score_holds or self._score_kept(key))):
            return []
        best = _held_best([v for v, _ in series], direction)
        gain = (best - first) * direction
        lost = all((value - first) * direction <= _UNDONE_KEPT * gain
                   for value, _ in list(series)[-_UNDONE_EVALS:])
        if lost and gain > 0 and gain >= _UNDONE_GAIN * abs(best) \
                and self._blockers.hold(key, Why.UNDONE):
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.BLOCKER,
                             f"{key} is back where the run's first evaluation had it "
                             f"({first:.4g}; its best {best:.4g}) on its last "
                             f"{_UNDONE_EVALS} evaluations: all the run had learned is lost",
                             key=key)]
        if not lost and self._blockers.holds(key, Why.UNDONE):
            if not self._blockers.release(key, Why.UNDONE):
                return []  # another of the evaluation's blockers still holds
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
                             f"{key} above its first evaluation again "
                             f"({series[-1][0]:.4g})", key=key)]
        return []

    def _score_kept(self, loss_key: str) -> bool:
        """Whether a score of the run's evaluations (higher is better, first seen at the
        run's start) keeps more than `_UNDONE_KEPT` of what it gained over its first: an
        evaluation loss back above its first beside it is over-confidence on what the
        model gets wrong (TransQuest's validation loss 0.463 → 0.123 → 0.634 while its F1
        went 0.462 → 0.621 → 0.569), not all the learning lost."""
        for other, direction in self._directions.items():
            first, series = self._start_value(other), self.series.get(other)
            if direction <= 0 or other == loss_key or first is None or not series:
                continue
            gain = _held_best([v for v, _ in series], direction) - first
            if gain > 0 and series[-1][0] - first > _UNDONE_KEPT * gain:
                return True
        return False

    def _judge_runaway(self, key: str, series: Sequence[tuple[float, float | None]],
                       score_holds: bool = False) -> list[Signal]:
        """A blocker while the evaluation runs away (what the model does on unseen data
        is collapsing); back to the usual medium once it stops climbing: a new level it
        holds, however high (a resume that landed on a worse plateau), is the usual
        degradation, judged by the tests above. Not while the same evaluation's score
        holds near its best (`score_holds`: TransQuest's validation loss 0.123 → 0.634
        beside an accuracy of 0.83 against its best 0.86): the loss grows on what the
        model gets wrong ever more confidently, not on what it gets right — over-fitting
        to look at, not a collapse."""
        found = None if score_holds else self._running_away(series)
        if found is not None and self._blockers.hold(key, Why.RUNAWAY):
            self._ran_away.add(key)
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.BLOCKER,
                             f"{key} has been {found}: what the model does on unseen data "
                             f"is collapsing", key=key)]
        if found is None and self._blockers.holds(key, Why.RUNAWAY) \
                and series[-1][0] <= series[-2][0]:
            if not self._blockers.release(key, Why.RUNAWAY):
                return []  # another of the evaluation's blockers still holds
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
                             f"{key} stopped climbing ({series[-1][0]:.4g})", key=key)]
        return []

    def collapsed_at_end(self) -> list[tuple[str, float, float]]:
        """(key, last value, best) of each evaluation loss or error that ran away once
        (see `_judge_runaway`), is open still, and stands at its last evaluation over
        `RUNAWAY_TIMES` × its best: the weights the run ends with are broken on unseen
        data, wherever the climb stopped."""
        found = []
        for key in sorted(self._ran_away & self._raised):
            series, best = self.series.get(key), self.best.get(key)
            if not series or best is None or best[0] <= 0:
                continue
            if series[-1][0] > RUNAWAY_TIMES * best[0]:
                found.append((key, series[-1][0], best[0]))
        return found

    def _running_away(self, series: Sequence[tuple[float, float | None]]) -> str | None:
        """An evaluation loss or error, already worse than its best, now several times
        its best and rising at each of the last evaluations a trend needs (runaway)."""
        points = self.rules.divergence_steps
        values = [v for v, _ in series]
        if len(values) <= points:
            return None
        return running_away(values, min(values[:-points]), points)

    def _score_at_best(self, key: str, metrics: Mapping[str, float],
                       judged: Sequence[tuple[str, int]], step: int | None = None) -> bool:
        """Whether a score of the same evaluation (its accuracy beside its loss, or on a
        line of its own at the same step: AST's `mAP: 0.3352` above its `valid_loss:
        0.6949`) is at its best: the model does on unseen data as well as it ever did. (A
        score whose best is 0, a pose model's `Acc: 0.0000` at every evaluation, says
        nothing of that.)"""
        return any(self.best.get(other, (0.0, None))[0] > 0
                   and self._near_best(other, value, 1)
                   for other, value in self._scores_beside(key, metrics, judged, step).items())

    def _scores_beside(self, key: str, metrics: Mapping[str, float],
                       judged: Sequence[tuple[str, int]],
                       step: int | None) -> dict[str, float]:
        """The latest value of each score (higher is better) of the same evaluation as
        `key`: on its record, or on a line of its own at the same step."""
        found = {other: metrics[other] for other, direction in judged
                 if direction > 0 and other != key and math.isfinite(metrics[other])}
        if step is not None:
            found.update((other, self.series[other][-1][0])
                         for other, direction in self._directions.items()
                         if direction > 0 and other != key and other not in found
                         and self._at.get(other) == step and self.series.get(other))
        return found

    def _score_held(self, key: str, metrics: Mapping[str, float],
                    judged: Sequence[tuple[str, int]], step: int | None) -> bool:
        """Whether a score of the same evaluation stands where it stood when the loss
        `key` was at its best, or higher: the loss got worse on what the model gets wrong
        (a WideResNet's test loss 0.63 → 1.22 while its test accuracy went 91.7 → 94.5 %),
        not on what it gets right (SpeedTransformer's validation loss up 9 % while its
        accuracy slipped 0.8648 → 0.8640: the weights are worse)."""
        then = self._scores_then.get(key)
        if not then:
            return False
        now = self._scores_beside(key, metrics, judged, step)
        # (a score that stood at 0, a pose model's `Acc: 0.0000` when its loss was at its
        # best, says nothing of what the model gets right)
        return any(other in then and then[other] > 0 and value >= then[other]
                   and self._near_own_best(other, value) for other, value in now.items())

    def _near_own_best(self, key: str, value: float) -> bool:
        """Whether a score stands within 1 % of its best, or twice its own point-to-point
        noise (an AdamW fine-tune's accuracy 0.8154 against its best 0.8268 has slipped:
        its last weights are past their best)."""
        best, series = self.best.get(key), self.series.get(key)
        if best is None or not series:
            return False
        noise = trends.noise_scale([v for v, _ in series])
        return best[0] - value <= max(_SCORE_SLACK * abs(best[0]), 2 * noise)

    def _gap(self, key: str, value: float, train_loss: float | None,
             direction: int, score_at_best: bool = False) -> list[Signal]:
        """An evaluation loss far above the training loss (see eval_trends); with the same
        evaluation's score at its best (`score_at_best`), the gap stays a notice: the loss
        grew on a few examples the model got wrong more confidently, not on what it gets
        right (TF1 Estimator's bAbI run in sealed-8: eval loss 0.055, 20-38× a training
        loss near 0, accuracy 0.993 of its best 0.994)."""
        if direction > 0:
            return []
        gap = eval_trends.generalisation_gap(key, value, train_loss)
        label = f"{key} gap"
        # Two evaluations in a row: one evaluation far off is a spike, not a gap.
        self._gapped[key] = self._gapped.get(key, 0) + 1 if gap is not None else 0
        if gap is not None and label in self._mild and not self._mild_gap(
                key, value, train_loss, score_at_best):
            # The notice grew: the evaluation left its best, or the gap became a leak's.
            self._mild.discard(label)
            left = train_loss is not None and value < _LEAK_RATIO * train_loss
            return [Reassess(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
                             f"generalisation gap: {gap}" + (f"; {GAP_LEFT_BEST}" if left
                                                             else ""), key=label)]
        if gap is not None and label not in self._raised and self._gapped[key] >= 2:
            self._raised.add(label)
            if self._mild_gap(key, value, train_loss, score_at_best):
                # The evaluation still at its best (a fine-tune whose val loss keeps
                # falling while its train loss falls faster, 11×): memorisation to
                # watch, a notice; the evaluation getting worse is judged by the tests
                # above. Far beyond that (nanoGPT's 0.0015 against 0.85), the training
                # data has leaked into the targets, or the model memorised it: medium.
                self._mild.add(label)
                return [Raise(AnomalyType.EVAL_DEGRADATION,
                              f"generalisation gap: {gap}; {GAP_AT_BEST}", key=label,
                              severity=Severity.LOW)]
            return [Raise(AnomalyType.EVAL_DEGRADATION, f"generalisation gap: {gap}",
                          key=label)]
        if gap is None and label in self._raised and train_loss is not None:
            self._raised.discard(label)
            return [Resolve(AnomalyType.EVAL_DEGRADATION,
                            f"{key} back within {eval_trends.GAP_RATIO:g}× the training loss",
                            key=label)]
        return []

    def _mild_gap(self, key: str, value: float, train_loss: float | None,
                  score_at_best: bool = False) -> bool:
        """A gap with the evaluation loss still at its best and short of a leak's, or with
        the evaluation's score beside it at its best."""
        if train_loss is None:
            return False
        # (a score at its best outweighs the ratio: a training loss near 0 makes any
        # ratio large, and the model's results on unseen data are as good as ever)
        return score_at_best or (value < _LEAK_RATIO * train_loss
                                 and self._near_best(key, value, -1))

    def _since_best(self, key: str, series: Sequence[tuple[float, float | None]],
                    direction: int) -> Signal | None:
        """Sparse evaluations worse since their best (eval_after_best). A mild one (the
        latest within `eval_far_from_best` of the best) is a notice: a plateau a little
        above its best is what early stopping is for, and the run may keep its best
        weights. One clearly worse is the usual medium, high if still open at the end
        (the last weights are not the ones to keep); a mild one that grows is raised to
        medium."""
        found = eval_trends.after_best(list(series), direction, self.rules)
        if found is None:
            return None
        reason, clearly = found
        if key in self._raised:
            if clearly and key in self._mild:
                self._mild.discard(key)
                return Reassess(AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
                                f"{key} {reason}", key=key)
            return None
        self._raised.add(key)
        if clearly:
            return Raise(AnomalyType.EVAL_DEGRADATION, f"{key} {reason}", key=key)
        self._mild.add(key)
        return Raise(AnomalyType.EVAL_DEGRADATION, f"{key} {reason}", key=key,
                     severity=Severity.LOW)

    def _near_best(self, key: str, value: float, direction: int) -> bool:
        """Recovered means back within the rule's tolerance of the best evaluation, not
        merely better than the one before."""
        best = self.best[key][0]
        return (best - value) * direction <= abs(best) * self.rules.eval_recovery_tolerance

    def recent(self, count: int) -> dict[str, list[float]]:
        return {key: [value for value, _ in list(series)[-count:]]
                for key, series in self.series.items()}

    def forget_losses(self) -> None:
        """The run's loss is another function from here (a curriculum's switch from Huber
        to weighted MSE): an evaluation loss computed with it starts a curve of its own,
        judged against its own best and first, not the old function's."""
        for key in [k for k in self.series if _LOSS_NAME.search(k)]:
            for held in (self.series, self.best, self._first, self._at, self._evaluations):
                held.pop(key, None)
            self._levels.forget(key)
            self._blockers.drop(key, Why.UNDONE)


def _eval_term(key: str, totals: set[str]) -> bool:
    """Whether an evaluation's loss is a term of a total the run prints too: its name is
    the total's with words before `loss` (`eval_mean_sem_cls_loss`, `eval_mean_loss`)."""
    if not key.endswith("_loss") or not totals:
        return False
    stem = key[:-len("loss")]
    return any(stem[:at + 1] + "loss" in totals
               for at, char in enumerate(stem[:-1]) if char in "_/")


def _train_counterpart(metrics: Mapping[str, float], train_loss: float | None) -> float | None:
    """The training loss to set an evaluation's beside: the one measured alongside it in
    the same record (nanoGPT's `train loss` of its estimate), else the newest one."""
    for key, value in metrics.items():
        if "train" in key and "loss" in key and math.isfinite(value):
            return value
    return train_loss


class ThroughputRule:
    """Throughput far below the run's own early baseline."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._samples: list[float] = []
        self._baseline: float | None = None  # once the first samples are in, for good
        self._raised = False
        self._by_shape = StallWatch()

    def observe(self, point: Observation) -> Sequence[Signal]:
        value = point.throughput
        if value is None or not math.isfinite(value) or value <= 0:
            return []
        samples = self._samples
        samples.append(value)
        keep = self.rules.slow_baseline_samples
        if len(samples) > keep + 50:
            del samples[keep : keep + 10]  # keep the baseline and the recent past
        if self._baseline is None and len(samples) >= keep:
            self._baseline = mr.baseline_median(samples, self.rules)
        reason = mr.evaluate_throughput(samples, self.rules, self._baseline,
                                        short_ok=not point.measured)
        if reason is None and not point.measured:
            reason = self._by_shape.stalled(point.metrics, value, self.rules)
        if reason is not None:
            self._raised = True
            return [Raise(AnomalyType.SLOW_THROUGHPUT,
                          f"slow throughput: {reason} ({point.throughput_unit})")]
        if self._raised:
            self._raised = False
            return [Resolve(AnomalyType.SLOW_THROUGHPUT, "throughput recovered")]
        return []


_SCALED_DOWN = 0.25  # a loss scale cut twice below 1 (see `LossScaleRule._on_scale`)


class LossScaleRule:
    """fp16 dynamic loss scaling: a scale that collapses to (almost) nothing, a long
    cascade of halvings, or skipped steps that keep pace with the steps themselves."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._last: float | None = None
        self._halvings = 0
        self._skips: deque[tuple[int, float]] = deque(maxlen=rules.loss_scale_skip_window)

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        scale = point.metrics.get("loss_scale")
        # (a negative scale is no scale: Megatron prints `loss scale: -1.0` beside `grad
        # norm: 0.000` when DeepSpeed's engine owns the optimizer and scales on its own)
        if scale is not None and math.isfinite(scale) and scale >= 0:
            out.extend(self._on_scale(scale))
        skipped = point.metrics.get("skipped_steps")
        if skipped is not None and point.step is not None:
            out.extend(self._on_skips(point.step, skipped))
        return out

    def _on_scale(self, scale: float) -> list[Signal]:
        last, self._last = self._last, scale
        floor = self.rules.loss_scale_floor
        if scale <= floor:
            return [Raise(AnomalyType.LOSS_SCALE,
                          f"the fp16 loss scale fell to {scale:g}: every step overflows and "
                          f"is skipped")]
        if scale <= 8 * floor:
            return [Raise(AnomalyType.LOSS_SCALE,
                          f"the fp16 loss scale is down to {scale:g}, a few halvings from its "
                          f"floor ({floor:g})", key="near-floor", severity=Severity.HIGH)]
        out: list[Signal] = []
        if scale <= _SCALED_DOWN and (last is None or last > _SCALED_DOWN):
            # Below 1 the loss is scaled down, not up: its gradients overflow fp16 on their
            # own. A run that sits at 1 may dip to 0.5 now and then (fairseq's 2018 runs:
            # `setting loss scale to: 0.5`, healthy); one cut twice below 1 and on (CoVoST
            # at 0.25, then 0.125, while its training loss climbed back) is blowing up,
            # whatever the halvings' count says.
            out.append(Raise(AnomalyType.LOSS_SCALE,
                             f"the fp16 loss scale fell to {scale:g}, below 1: the "
                             f"gradients overflow fp16 even scaled down, so the loss or its "
                             f"gradients are blowing up", key="below-one",
                             severity=Severity.HIGH))
        elif scale >= 1 and last is not None and last < 1:
            out.append(Resolve(AnomalyType.LOSS_SCALE, f"the loss scale is back to {scale:g}",
                               key="below-one"))
        # Printed values are rounded (0.0625 then 0.062): only a real cut counts; and a
        # scale still in the thousands is calibrating (DeepSpeed starts at 2^16).
        if last is not None and scale < last * 0.75 and scale < 1024:
            self._halvings += 1
            if self._halvings >= self.rules.loss_scale_halvings:
                return [*out, Raise(AnomalyType.LOSS_SCALE,
                                    f"the fp16 loss scale was cut {self._halvings} times in a "
                                    f"row (now {scale:g}): the loss or its gradients keep "
                                    f"overflowing", key="cascade", severity=Severity.MEDIUM)]
            return out
        if last is not None and scale > last * 1.5 and scale > 16 * floor:
            self._halvings = 0
            how = f"the loss scale grew again to {scale:g}"
            return [*out, Resolve(AnomalyType.LOSS_SCALE, how),
                    Resolve(AnomalyType.LOSS_SCALE, how, key="near-floor"),
                    Resolve(AnomalyType.LOSS_SCALE, how, key="cascade")]
        return out

    def _on_skips(self, step: int, skipped: float) -> list[Signal]:
        self._skips.append((step, skipped))
        if self._skips.maxlen is None or len(self._skips) < self._skips.maxlen:
            return []
        (first_step, first_skipped), (last_step, last_skipped) = self._skips[0], self._skips[-1]
        steps = last_step - first_step
        if steps <= 0:
            return []
        if last_skipped - first_skipped >= steps:
            return [Raise(AnomalyType.LOSS_SCALE,
                          f"every one of the last {steps} steps was skipped for overflow "
                          f"(skipped={last_skipped:g} at step {last_step})", key="skips")]
        return [Resolve(AnomalyType.LOSS_SCALE, "steps are no longer being skipped",
                        key="skips")]


# The registered rules, applied in this order to every record with metrics.
METRIC_RULES: tuple[Callable[[RuleSettings], MetricRule], ...] = (
    NonFiniteRule,
    LossRule,
    EpochBlowUpRule,
    CollapseRule,
    AnyLossBlownUpRule,
    BottomlessLossRule,
    GradNormRule,
    LrScheduleRule,
    LrConfigRule,
    EvalRule,
    ThroughputRule,
    DataWaitRule,
    LossScaleRule,
    NotLearningRule,
    ExplorationRule,
    MetricFloorRule,
    PsnrFloorRule,
    ChanceRule,
    PerplexityChanceRule,
    ChanceStreakRule,
    PreferenceChanceRule,
    EvalChanceRule,
    DetectorChanceRule,
    InvertedRankingRule,
    CorrelationChanceRule,
    ErrorRateCeilingRule,
    ShrunkenEpochRule,
    QValueRule,
    ConfidentlyWrongRule,
    SaturatedOutputRule,
    SlowClimbRule,
    NoPositiveRule,
    MajorityClassRule,
    ConstantAnswerRule,
    SeparationFloorRule,
    UniformOutputRule,
    OneClassRecallRule,
    NeverLearnedRule,
    StaleBestRule,
    BestUnreachedRule,
    FlatScoreRule,
    FlatFitnessRule,
    GrowingGradRule,
    FrozenPlayerRule,
    SaturatedGameRule,
    ReturnCollapseRule,
    PosteriorCollapseRule,
    BelowMeanRule,
    ImpossibleMetricRule,
)


# The rules whose verdict rests on the run's own history (its best evaluation, its first
# loss): a new run in the same log has a history of its own.
_JUDGED_AGAINST_ITS_PAST: tuple[type[MetricRule], ...] = (
    LossRule, EvalRule, NotLearningRule, StaleBestRule, BestUnreachedRule, FlatScoreRule,
    FlatFitnessRule, PerplexityChanceRule, SlowClimbRule, AnyLossBlownUpRule,
    CorrelationChanceRule, ErrorRateCeilingRule, ShrunkenEpochRule, CollapseRule,
    ReturnCollapseRule)


@dataclass
class RuleSet:
    """One instance of every registered rule, for one run."""

    rules: RuleSettings
    alerts: tuple[UserAlert, ...] = ()  # the user's own, checked after the built-in rules
    instances: list[MetricRule] = field(default_factory=list)
    # The rules an isolated point (picked out of a long history) may feed.
    _pointwise: list[MetricRule] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        self.instances = [make(self.rules) for make in METRIC_RULES]
        if self.alerts:
            self.instances.append(UserAlertRule(self.alerts))
        self._pointwise = [rule for rule in self.instances if not rule.windowed]

    def observe(self, point: Observation, sparse: bool) -> list[Signal]:
        signals: list[Signal] = []
        for rule in self._pointwise if sparse else self.instances:
            found = rule.observe(point)
            if found:
                signals.extend(found)
        return signals

    def renew(self, kind: type[MetricRule]) -> None:
        """Start a rule afresh (a new stage of the run, with a loss of its own level)."""
        for index, rule in enumerate(self.instances):
            if isinstance(rule, kind):
                self.instances[index] = fresh = kind(self.rules)  # type: ignore[call-arg]
                if not fresh.windowed:
                    self._pointwise = [r for r in self.instances if not r.windowed]

    def new_run(self) -> None:
        """A new run began in the same log (a launch appended after one that finished,
        the next model of a script that trains several in turn): the rules that judge a
        run against its own past start afresh, so the new run's start is not read as a
        fall from the last run's best evaluation or a loss that has stopped moving."""
        for kind in _JUDGED_AGAINST_ITS_PAST:
            self.renew(kind)

    def put_back(self, rule: MetricRule) -> MetricRule | None:
        """Put a rule set aside earlier back in place of its kind's present instance (a
        training resumed after another in the same log); returns the one it replaces."""
        for index, present in enumerate(self.instances):
            if type(present) is type(rule):
                self.instances[index] = rule
                return present
        return None

    def find(self, kind: type[MetricRule]) -> MetricRule | None:
        return next((r for r in self.instances if isinstance(r, kind)), None)

"""A run that is not learning: a loss that has not moved beyond its noise over a
meaningful share of the run, the same loss to many digits on every step, or a learning
rate or gradient norm of exactly 0 throughout after warm-up. A log too short for the
noise to be known is judged on its few points (no_progress), as are a loss of exactly 0
that nothing else contradicts and a reward that stays at 0. A finished run that never
learned is not GO (the catalogue makes it high at the end)."""

from __future__ import annotations

import functools
import itertools
import math
import re
import statistics
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.metric_names import GOAL_FIGURE, is_eval_metric, sampled_policy
from babysit.model import AnomalyType, Severity
from babysit.rules import last_digit, no_progress, trends
from babysit.rules.exploration import EXPLORATION
from babysit.rules.last_digit import significant_digits
from babysit.rules.metric_floor import quality_keys
from babysit.rules.replayed_epochs import EpochReplay
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal

_LEVEL_WIDTH = 5  # points in a level (the start's and the latest)
_BOTH_ZERO_POINTS = 3  # points with lr and grad norm both exactly 0, from the first
# Points in a row with a loss of exactly 0 and a throughput of exactly 0: no data.
_NO_DATA_POINTS = 5
_MID_RUN_ZERO_POINTS = 2  # rates of exactly 0 on every point of an excerpt from mid-run
_RETURN_POINTS = 100  # an RL run's logged episodes before a flat return speaks
_RETURN_POINTS_FROM_START = 20  # ... where they span the run from its start
_RETURN_POINTS_WHOLE_RUN = 10  # ... from its start to the end of its plan
_SPARSE_SPAN = 100  # (to a hundred times its first step)
# A return whose latest step is this many times its first was seen from the run's start.
_FROM_START_SHARE = 10
# The share of its announced plan a run whose return never rose has spent, from its start,
# that makes it a broken run rather than a slow one.
_PLAN_SPENT = 0.4
_NOISE_POINTS = 100  # the losses the noise is measured over
# ... and over which a fall is confirmed as learning: a hundred points' estimate of the
# noise runs low now and then, and over a thousand points of a flat loss (MMTAfrica's
# M2M100 at 30.5 ± 0.1 for 113,500 steps) one such stretch meets a held best that dipped
# by luck below a start that was high by luck.
_LONG_NOISE_POINTS = 2000
_GOAL_FAR = 100  # times the run's own desired error: a loss held there is stuck
_TOTAL_RISE = 0.2  # a summed reward risen by this share of its first level has learned
# Not a score of the model's predictions, though `quality_keys` may take it for one
# (`bf16_mfu` holds `f1`): the hardware's utilisation.
_NOT_SCORE = lazy_re.compile(r"mfu|flops?|util|bf16|fp16|fp8|tok", re.IGNORECASE)
# A loss whose noise (3σ) exceeds this share of its start level could not show a fall
# to half of it: its flatness says nothing.
_POWERLESS = 0.5
_EVAL_LEVEL = 3  # evaluations in an evaluated return's level
_RETURN_WIDTHS = (5, 10, 20)  # points in a return's level, by how many the run has
_HELD = 3  # levels in a row a best must hold: the lowest single level is noise's extreme
# Points a short log's loss needs when they span only a handful of steps: a healthy run's
# first five steps wander about their start (LitGPT 3.724 → 3.731, an mmseg run 1.757 →
# 1.856) before they fall.
_FEW_STEPS_POINTS = 7
_FEW_STEPS_RISE = 0.01
_SHORT_EPOCHS = 4  # epochs a short log's few points span: many steps each
_ZERO_LOSS_POINTS = 3  # losses of exactly 0 from the first that say none is computed
_COLLAPSE_FROM = 0.1  # a loss at least this high before it fell to exactly 0 in one step
_COLLAPSED_POINTS = 5  # and logged points at exactly 0 since
_CONVERGED_FALL = 10.0  # a loss identical this many times below its first: at a minimum
_FLAT_WHOLE_POINTS = 40  # points a loss flat from its start, scores low beside it, is high



@functools.lru_cache(maxsize=256)
def _eval_return_key(names: tuple[str, ...]) -> str | None:
    """An evaluation's return among a record's names (`eval/mean_reward`), asked once per
    set of names (a log prints the same few)."""
    return next((k for k in names if ("reward" in k or "return" in k) and is_eval_metric(k)),
                None)

class NotLearningRule:
    """A run that is not learning: a loss that has not moved beyond its noise over a
    meaningful share of the run, a loss identical to many digits on every step, or a
    learning rate or gradient norm of exactly 0 on every logged point after warm-up."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._first: list[float] = []  # the first few losses: where the run started
        self._recent: deque[float] = deque(maxlen=max(rules.not_learning_points, 5))
        self._best: float | None = None
        self._goal: float | None = None  # the error the run means to reach (see note_goal)
        self._goal_window: deque[float] = deque(maxlen=_LEVEL_WIDTH)
        self._goal_points = 0
        self._noise: deque[float] = deque(maxlen=_NOISE_POINTS)
        self._long_noise: deque[float] = deque(maxlen=_LONG_NOISE_POINTS)
        self._levels: deque[float] = deque(maxlen=_HELD)
        self._count = 0
        self._start_known: bool | None = None
        self._same = 0  # consecutive steps with the very same loss
        self._lowest = math.inf  # the lowest loss `_identical` has seen
        self._same_printed = 0  # ... as printed, whatever its digits
        self._last: float | None = None
        self._lr_points = 0
        self._lr_zero = 0  # points at exactly 0 since the warm-up allowance
        self._lr_mid_run = False  # the first rate was logged past the run's start
        self._grad_points = 0
        self._grad_zero = 0
        self._both_zero = 0  # points with lr and grad norm both 0, from the first (-1: not)
        self._no_data = 0  # points in a row with a loss and a throughput both exactly 0
        self._return_key: str | None = None  # a return the policy earns, when no loss
        self._return_points = 0
        self._return_start: list[float] = []  # its first values (up to the widest level)
        self._return_recent: deque[float] = deque(maxlen=200)
        # its best level for each width of level (a median of 5, 10 or 20 in a row)
        self._return_best: dict[int, float] = {}
        self._surrogate = False  # the run's loss is an RL learner's surrogate
        self._signs_seen = 0  # the loss's signs seen: 1 negative, 2 positive, 3 both
        self._rewarded = False  # a reward or return printed beside the loss
        self._return_first_step: int | None = None  # the step of its first value
        # The agent's experience counter (frames, timesteps): its first and latest count.
        self._played: tuple[float, float] | None = None
        self._return_broken = False  # the flat return was judged a broken run
        # The run's evaluation return (`eval/mean_reward`): its first value and its best.
        self._eval_return: tuple[float, float] | None = None
        self._eval_recent: deque[float] = deque(maxlen=_EVAL_LEVEL)
        self._raised: set[str] = set()
        self._learned = False
        self._loss_key: str | None = None  # a loss under a name of its own, when no known one
        self._short: list[float] = []  # a short log's losses, all of them
        self._first_step: int | None = None
        self._first_epoch: float | None = None  # the first record's epoch
        self._losses = 0  # finite losses seen
        self._zero_losses = 0  # of them exactly 0, while every one has been
        self._zero_grads = 0  # of those, with a grad norm printed beside it, exactly 0 too
        self._nonfinite = 0  # non-finite losses before any finite one
        self._first_nonfinite: int | None = None  # the step of the first of them
        self._from_start = False  # and the log begins at the run's start
        self._first_print = False  # or at its first print, far from step 0
        self._finite_seen = False  # a finite value of the run's own loss (not a fallback's)
        self._signs: dict[str, float] = {}  # other learning metrics: their first value
        self._signs_moved = False
        self._rewards = 0  # reward points seen
        self._zero_rewards = 0
        # A quality score's values (AUROC, accuracy, dice): one that clearly rose is
        # learning, whatever a noisy loss shows.
        self._quality: dict[str, list[float]] = {}
        self._parts: dict[str, list[int]] = {}  # a reward function's [points, zeros]
        self._parts_last: tuple[object, ...] = ()  # the last record they were read from
        # The summed reward's first and latest points (see `_total_rose`), and the parts
        # found to be bonuses the policy earns without.
        self._totals_first: list[float] = []
        self._totals_recent: deque[float] = deque(maxlen=_LEVEL_WIDTH)
        self._parts_done: set[str] = set()
        self._totals_seen = 0
        # An agent's exploration rate (`Epsilon:1.0000` annealed to 0) beside its loss:
        # the loss is a value or TD loss whose targets move with the policy, and it need
        # not fall while the agent learns (an A3C trader's `Loss:` 70 → 72 over 50 epochs
        # as its portfolio grew). Its flatness says nothing; the return's rules judge.
        self._exploration: float | None = None
        self._explores = False
        self._names_without_loss: set[tuple[str, ...]] = set()  # looked at, no loss in them
        self._interleaved = False  # a record without the loss came since the last loss
        self._few_steps = False  # the flat loss was judged on points a few steps apart
        self._digit_tail: deque[float] = deque(maxlen=rules.not_learning_identical)
        self._digit_judged = False  # the last-digit finding was made (once per run)
        self._digit_level: float | None = None  # the level it was made at
        self._replay = EpochReplay()  # an epoch that repeats the one before, loss for loss

    def observe(self, point: Observation) -> Sequence[Signal]:
        out: list[Signal] = []
        if not point.advanced:
            # A record at the step a bar already gave (the bar first, the trainer's dict
            # after it): the dict's rate and norm are still this step's.
            # A GRPO log's dicts may all follow the bar's last redraw, at its step.
            return [*self._zeros(point), *self._same_step(point), *self._reward_parts(point)]
        out.extend(self._zeros(point))
        # (noted from any record: PPO may print its surrogate on lines of their own,
        # `surrogate=-0.0085, entropy= 0.176, loss=-0.0085`, its return on others)
        self._surrogate = self._surrogate or no_progress.surrogate_loss(point.metrics)
        if not self._surrogate:
            # A loss of both signs beside the return the agent earns (a hand-written
            # REINFORCE loop's `Training Loss: -0.0060`, later `0.0089`, over `Total
            # reward: 5.0`, each on lines of their own): the policy gradient's
            # surrogate, no likelihood.
            self._rewarded = self._rewarded or any(
                ("reward" in k or "return" in k) for k in point.metrics)
            if point.loss is not None and math.isfinite(point.loss):
                self._signs_seen |= 1 if point.loss < 0 else 2 if point.loss > 0 else 0
            self._surrogate = self._signs_seen == 3 and self._rewarded
        out.extend(self._reward(point))
        out.extend(self._flat_return(point))
        out.extend(self._far_from_goal(point))
        value = self._loss(point)
        self._interleaved = value is None
        if value is None or not math.isfinite(value):
            if value is not None:
                out.extend(self._never_finite(point))
            return out
        self._losses += 1
        self._finite_seen = self._finite_seen or point.loss is not None
        self._watch_signs(point)
        self._watch_quality(point)
        if any(not math.isfinite(v) for v in point.metrics.values()):
            # A loss of 0 beside a NaN is Hugging Face's filtered NaN: the NaN rule's.
            self._signs_moved = True
        if value == 0 and self._zero_losses == self._losses - 1:
            self._zero_losses += 1
            if point.grad_norm == 0 and self._zero_grads == self._zero_losses - 1:
                self._zero_grads += 1
            return out + self._zero_loss()
        out.extend(self._collapsed_to_zero(value))
        if self._start_known is None:
            # (or its first epoch, in a log that counts epochs and no step: GRU4Rec's
            # `Epoch: 1/Loss:0.942/…`; never a record that says it is deep into its
            # epochs, whatever its step: an excerpt from epoch 42 whose records are
            # counted from 1)
            self._start_known = (point.step is not None
                                 and point.step <= self.rules.divergence_start_steps
                                 and (point.epoch is None or point.epoch <= 1)) \
                or (point.step is None and point.epoch is not None and point.epoch <= 1)
        out.extend(self._identical(value, every_point=self._since_first()))
        out.extend(self._replayed(point, value))
        out.extend(self._last_digit(value))
        target = point.target_steps
        # "Over a meaningful share of the run": 49 steps of a planned 1000 are too few.
        early = target is not None and point.step is not None and \
            point.step < self.rules.not_learning_share * target
        self._note_exploration(point)
        # (a reinforcement learner's surrogate loss is no measure of learning: its
        # return is judged instead, see `_flat_return`)
        out.extend(self._flat(value, judge=not early and not self._explores
                              and not self._surrogate))
        if self._first_step is None:
            self._first_step = point.step
        if self._first_epoch is None:
            self._first_epoch = point.epoch
        if self._count < self.rules.not_learning_points and self._start_known:
            # A handful of optimizer steps says nothing: the few points must span many.
            # (or many epochs, in a log that counts no step: each is a pass over the data)
            spanned = (point.step is not None and self._first_step is not None
                       and point.step - self._first_step >= self.rules.not_learning_short_steps) \
                or (point.step is None and point.epoch is not None
                    and self._first_epoch is not None
                    and point.epoch - self._first_epoch >= _SHORT_EPOCHS)
            out.extend(self._short_log(value, judge=not early and spanned
                                       and not self._explores and not self._surrogate,
                                       few_steps=not early and not spanned
                                       and not self._surrogate))
        return out

    def _note_exploration(self, point: Observation) -> None:
        """Whether the record carries an exploration rate that has moved (an RL agent's
        epsilon annealing; a constant `epsilon: 1e-05` is an optimizer's)."""
        if self._explores:
            return
        for key, value in point.metrics.items():
            if EXPLORATION.fullmatch(key) and math.isfinite(value) and 0 <= value <= 1:
                if self._exploration is not None and value != self._exploration:
                    self._explores = True
                self._exploration = value
                return

    def _never_finite(self, point: Observation) -> list[Signal]:
        """A loss non-finite on every logged point from the run's start (NaN from the
        first batch): the model never learned anything, whatever else the run does. The
        NaN itself is the nan-inf rule's; this says the run has nothing to show. The log
        must begin at the run's start (its first point within the first steps); a log that
        prints no step needs as many points as a flat loss."""
        if self._finite_seen or "never finite" in self._raised:
            return []
        self._nonfinite += 1
        if self._nonfinite == 1:
            self._first_nonfinite = point.step
        if self._nonfinite == 2:
            first = self._first_nonfinite
            self._from_start = first is not None and first <= self.rules.divergence_start_steps
            # `200, 400, …`: no further from 0 than from the next point, its first print.
            self._first_print = first is not None and point.step is not None \
                and point.step > first and first <= point.step - first
        if self._from_start:
            needed = self.rules.not_learning_zero_points
        elif self._first_nonfinite is None or self._first_print:
            # No step to place the log by, or a first print far from step 0: as many points
            # as a flat loss needs.
            needed = self.rules.not_learning_points
        else:
            return []  # an excerpt that begins mid-run
        if self._nonfinite < needed:
            return []
        self._raised.add("never finite")
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the loss has been non-finite on every one of the "
                      f"{self._nonfinite} logged points from the run's start: the model never "
                      f"learned", key="never finite", severity=Severity.HIGH)]

    def _same_step(self, point: Observation) -> list[Signal]:
        """A step printed twice (bar and summary) is one step; but a loss printed to
        many digits once per epoch at a bar's step that never moves (the same step
        each epoch, other records between) is a new point for the identical test."""
        value = self._loss(point)
        if value is None:
            self._interleaved = True
            return []
        if not (self._interleaved and math.isfinite(value) and significant_digits(value) >= 7):
            return []
        self._interleaved = False
        self._losses += 1
        return self._identical(value, every_point=self._since_first())

    def _since_first(self) -> bool:
        """Whether the losses before this one repeat one value since the log's first or
        second (the first point of a run may still be its first update's: Keras 1's
        `loss: 1.9112` in epoch 1, then `loss: 1.9105 - acc: 0.5378` in every epoch after)."""
        return self._same + 1 >= self._losses - 2

    def _loss(self, point: Observation) -> float | None:
        if point.loss is not None:
            return point.loss
        if self._finite_seen:
            # The run's loss was read under its own name: a record without it is another
            # series (an epoch's mean `train_loss` between the per-step `loss` prints),
            # never a point of the same curve.
            return None
        if self._loss_key is None:
            names = tuple(point.metrics)
            if names in self._names_without_loss:
                return None
            if sampled_policy(point.metrics):
                # (a policy trained on its own samples: its `loss` is a surrogate, its
                # reward says whether it learns; see `metric_names.sampled_policy`)
                self._names_without_loss.add(names)
                return None
            self._loss_key = no_progress.fallback_loss_key(names)
            if self._loss_key is None and len(self._names_without_loss) < 256:
                self._names_without_loss.add(names)
        return no_progress.latest(point.metrics, self._loss_key)

    def _watch_signs(self, point: Observation) -> None:
        if self._signs_moved:
            return
        for key in no_progress.learning_signs(point.metrics, self._loss_key or "loss"):
            value = point.metrics[key]
            if not math.isfinite(value) or key == self._loss_key:
                continue
            first = self._signs.setdefault(key, value)
            if abs(value - first) > 1e-6 * max(abs(first), 1e-12):
                self._signs_moved = True

    def _watch_quality(self, point: Observation) -> None:
        if self._learned:
            return
        for key in quality_keys(point.metrics):
            if _NOT_SCORE.search(key):
                continue
            value = point.metrics[key]
            values = self._quality.setdefault(key, [])
            if math.isfinite(value) and len(values) < 4 * _NOISE_POINTS:
                values.append(value)

    def _scores_poorly(self) -> bool:
        """Whether the run has a quality score and every one stands at half its scale or
        below (a log that opens mid-run on a model at `accuracy:0.9972`, its loss flat at
        0.007, learned before the log began, whatever the loss does in it)."""
        levels = [(trends.level(values, _LEVEL_WIDTH), max(values))
                  for values in self._quality.values() if values]
        return bool(levels) and all(level <= (50.0 if top > 1.0 else 0.5)
                                    for level, top in levels)

    def _quality_rose(self) -> str | None:
        """A quality score (higher is better) whose latest level rose beyond its noise
        and by a tenth of its start above where it started: the model learns the task."""
        for key, values in self._quality.items():
            if len(values) < 2 * _LEVEL_WIDTH:
                continue
            start = trends.level(values[:_LEVEL_WIDTH], _LEVEL_WIDTH)
            now = trends.level(values, _LEVEL_WIDTH)
            if start > 0 and trends.beyond_noise(now - start, start, trends.noise_scale(values),
                                                 3.0, 0.1):
                return f"{key} rose from {start:.4g} to {now:.4g}"
        return None

    def _zero_loss(self) -> list[Signal]:
        """A loss of exactly 0 on every point since the log began: no loss is computed
        (or the printed one is not the objective, which other metrics then show)."""
        # (three points are enough for a loss: a preference loss printed `loss=0.000` at
        # each of a DPO run's three prints is a margin saturated from the first batch)
        if self._zero_losses < min(self.rules.not_learning_zero_points, _ZERO_LOSS_POINTS) \
                or self._signs_moved:
            return []
        if self._zero_grads == self._zero_losses:
            # The grad norm printed beside it is exactly 0 every time too (BGE-M3's unified
            # fine-tune, `{'loss': 0.0, 'grad_norm': 0.0, …}` from the first print): no
            # gradient reaches a weight, so nothing can change however long it runs.
            return self._raise_once("zero loss", Severity.BLOCKER,
                                    f"not learning: the loss and the grad norm are both "
                                    f"exactly 0 on every one of the {self._zero_losses} "
                                    f"logged points: no loss is being computed and no "
                                    f"gradient reaches the weights (an empty or masked-out "
                                    f"batch, labels that are all ignored, a loss term "
                                    f"switched off)")
        return self._raise_once("zero loss", Severity.HIGH,
                                f"not learning: the loss is exactly 0 on every one of the "
                                f"{self._zero_losses} logged points and nothing else moves: "
                                f"no loss is being computed (an empty or masked-out batch, "
                                f"labels that are all ignored, a loss term switched off)")

    def _collapsed_to_zero(self, value: float) -> list[Signal]:
        """A loss that fell from `_COLLAPSE_FROM` or more to exactly 0 between two logged
        points and has been exactly 0 on `_COLLAPSED_POINTS` of them since (Mini-Gemini's
        `{'loss': 1.4138, …}`, then `{'loss': 0.0, …}` at every step): no objective a
        model learns falls to nothing in one step; the loss stopped being computed (labels
        all masked or ignored, a NaN the trainer zeroes, an overflow). Not while anything
        else non-finite is printed beside it (the NaN rule's story)."""
        if value != 0 or self._signs_moved:
            if value != 0:
                self._zero_run, self._before_zero = 0, value
            return []
        self._zero_run += 1
        if self._zero_run < _COLLAPSED_POINTS or self._before_zero < _COLLAPSE_FROM \
                or "no data" in self._raised:
            return []  # (a loop over no data at all says more: see `_no_data_seen`)
        return self._raise_once("zero loss", Severity.BLOCKER,
                                f"not learning: the loss fell from {self._before_zero:.4g} to "
                                f"exactly 0 between two logged points and has been exactly 0 "
                                f"on each of the {self._zero_run} since: no loss is being "
                                f"computed (labels all masked or ignored, a NaN the trainer "
                                f"zeroes, an overflow)")

    _zero_run = 0  # logged losses of exactly 0 in a row, after one that was not
    _before_zero = 0.0  # the loss logged just before them

    def _raise_once(self, key: str, severity: Severity, description: str) -> list[Signal]:
        """The finding `key`, unless it is open already."""
        if key in self._raised:
            return []
        self._raised.add(key)
        return [Raise(AnomalyType.NOT_LEARNING, description, key=key, severity=severity)]

    def _short_log(self, value: float, judge: bool, few_steps: bool = False) -> list[Signal]:
        """A log too short for the noise-judged test: judged on its few points, from
        the first (the run's start) on. Points that span only a handful of steps say
        something only when the loss ends no lower than it began (Turi Create's ten
        iterations, 5.26 → 5.62 → 5.40): a notice while the run goes on, and the verdict
        on a run that finished so (a finished run that never learned is not GO)."""
        self._short.append(value)
        if not judge and not few_steps:
            return []
        found = None
        # Over a handful of steps, only while the latest level sits above the start beyond
        # the points' noise and by a hundredth of it: a loss that went up, not one
        # wandering about where it began.
        start, now = self._short[0], trends.level(self._short, 3)
        above = trends.beyond_noise(now - start, start, trends.noise_scale(self._short), 3.0,
                                    _FEW_STEPS_RISE)
        if judge or (above and len(self._short) >= _FEW_STEPS_POINTS):
            found = no_progress.short_plateau(self._short, self.rules.not_learning_short_fall)
        if found is not None and "flat" not in self._raised:
            self._raised.add("flat")
            self._few_steps = not judge
            if not judge:
                found = f"{found}, over only {len(self._short)} logged steps"
            return [Raise(AnomalyType.NOT_LEARNING, found, key="flat")]
        if self._few_steps and now < start and "flat" in self._raised:
            self._raised.discard("flat")
            self._few_steps = False
            return [Resolve(AnomalyType.NOT_LEARNING,
                            f"the loss fell below where it started ({value:.4g})", key="flat")]
        if found is None and "flat" in self._raised and len(self._short) >= 5 and \
                min(self._short[1:]) < self._short[0] * (1 - self.rules.not_learning_short_fall):
            self._raised.discard("flat")
            return [Resolve(AnomalyType.NOT_LEARNING, f"the loss fell to {value:.4g}",
                            key="flat")]
        return []

    def note_goal(self, desired: float) -> None:
        """The error the run said it means to train down to (its stop criterion)."""
        self._goal = desired

    def _far_from_goal(self, point: Observation) -> list[Signal]:
        """The figure the run's goal names (its loss, or its `error`: FANN's `Desired
        error: 0.001`, then `Current error: 0.4797` for 900,000 epochs) held still, to a
        hundredth, over its last `_LEVEL_WIDTH` points, at more than `_GOAL_FAR` times the
        goal: the optimiser is stuck far from it, not converging on it."""
        if self._goal is None:
            return []
        value = point.loss
        if value is None:
            value = next((v for k, v in point.metrics.items()
                          if GOAL_FIGURE.search(k) and not is_eval_metric(k)), None)
        if value is None or not math.isfinite(value):
            return []
        self._goal_points += 1
        window = self._goal_window
        window.append(value)
        if "goal" in self._raised:
            if value < 0.5 * min(window):
                self._raised.discard("goal")
                return [Resolve(AnomalyType.NOT_LEARNING, f"the loss fell to {value:.4g}",
                                key="goal")]
            return []
        if self._goal_points < 2 * _LEVEL_WIDTH or len(window) < _LEVEL_WIDTH:
            return []
        low, high = min(window), max(window)
        if low <= _GOAL_FAR * self._goal or high - low > 0.01 * low:
            return []
        self._raised.add("goal")
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the loss has held at {value:.4g} over its last "
                      f"{len(window)} points, {value / self._goal:.0f}× the error the run "
                      f"set out to reach ({self._goal:.4g}): stuck far from its goal",
                      key="goal", severity_at_end=Severity.BLOCKER)]

    def _reward(self, point: Observation) -> list[Signal]:
        key = no_progress.reward_key(point.metrics)
        if key is None:
            return []
        out = self._reward_parts(point)
        if "reward" in self._raised:
            return out
        value = point.metrics[key]
        if not math.isfinite(value):
            return []
        self._rewards += 1
        self._zero_rewards += value == 0
        if self._rewards == 1:
            self._first_reward_step = point.step
        found = no_progress.stuck_reward(self._rewards, self._zero_rewards,
                                         self.rules.not_learning_points // 2)
        if found is None:
            return out
        self._raised.add("reward")
        # Nothing earned over a whole run watched from its start: the policy it delivers
        # earns nothing either (a blocker at the end, as a return that never rose is).
        first = self._first_reward_step
        whole = first is not None and point.step is not None \
            and first * _FROM_START_SHARE <= point.step
        return [*out, Raise(AnomalyType.NOT_LEARNING, f"{key}: {found}", key="reward",
                            severity_at_end=Severity.BLOCKER if whole else None)]

    _first_reward_step: int | None = None

    def _reward_parts(self, point: Observation) -> list[Signal]:
        """One reward function of several exactly 0 on (almost) every step while their
        sum moves on the others: the policy earns nothing of that part."""
        out: list[Signal] = []
        keys = no_progress.reward_parts(point.metrics)
        if not keys:
            return out
        seen_as = (point.step, *sorted(point.metrics.items()))
        if seen_as == self._parts_last:
            return out  # the same record printed twice
        self._parts_last = seen_as
        rose = self._total_rose(point)
        for key in keys:
            value = point.metrics[key]
            if not math.isfinite(value):
                continue
            if f"reward {key}" in self._raised:
                if rose is not None:
                    # The policy earns more in all while this part stays at 0: a bonus it
                    # does without (a strict format match), not a task it cannot learn.
                    self._raised.discard(f"reward {key}")
                    self._parts_done.add(key)
                    out.append(Resolve(AnomalyType.NOT_LEARNING,
                                       f"the total reward rose ({rose}): {key} at 0 is a part "
                                       f"the policy earns without", key=f"reward {key}"))
                continue
            if key in self._parts_done or rose is not None:
                continue
            seen = self._parts.setdefault(key, [0, 0])
            seen[0] += 1
            seen[1] += value == 0
            found = no_progress.stuck_reward(seen[0], seen[1],
                                             self.rules.not_learning_points // 2)
            if found is not None:
                self._raised.add(f"reward {key}")
                out.append(Raise(AnomalyType.NOT_LEARNING, f"{key}: {found}",
                                 key=f"reward {key}"))
        return out

    def _total_rose(self, point: Observation) -> str | None:
        """`first → latest` when the summed reward's latest level (mean of its last
        `_LEVEL_WIDTH` points) has risen above its first level by `_TOTAL_RISE` of it (and
        0.05 at least); else None."""
        key = no_progress.reward_key(point.metrics)
        value = point.metrics.get(key) if key is not None else None
        if value is None or not math.isfinite(value):
            return None
        if len(self._totals_first) < _LEVEL_WIDTH:
            self._totals_first.append(value)
        self._totals_recent.append(value)
        self._totals_seen += 1
        if self._totals_seen < 3 * _LEVEL_WIDTH:
            return None  # (the first level and the latest apart by a level at least)
        first = sum(self._totals_first) / len(self._totals_first)
        latest = sum(self._totals_recent) / len(self._totals_recent)
        if latest - first > max(0.05, _TOTAL_RISE * abs(first)):
            return f"{first:.3g} → {latest:.3g}"
        return None

    def _flat_return(self, point: Observation) -> list[Signal]:
        """A return (reward, score) that has not risen beyond its noise over many points
        (an RL run logs one per episode): judged once there are `_RETURN_POINTS`, and
        resolved once it rises. A notice while the run goes on, unless the agent has
        played millions of frames from the run's start (`no_progress.long_experience`):
        then a blocker, the run broken rather than slow."""
        self._note_eval_return(point)
        key = self._return_key or no_progress.return_key(point.metrics)
        if key is None:
            return []
        # A policy-gradient or value learner's loss (PPO's `train/loss` beside its
        # `policy_gradient_loss` and `value_loss`) is a surrogate whose targets move
        # with the policy: it says nothing of learning, the return does.
        if point.loss is not None and not self._surrogate:
            return []  # a run with a training loss is judged by it
        self._return_key = key
        value = point.metrics.get(key)
        if value is None or not math.isfinite(value):
            return []
        self._return_points += 1
        if self._return_points == 1:
            self._return_first_step = point.step
        self._note_played(point)
        if len(self._return_start) < _RETURN_WIDTHS[-1]:
            self._return_start.append(value)
        recent = self._return_recent
        recent.append(value)
        replayed = self._replayed_return(key, value)
        if replayed:
            return replayed
        for width in _RETURN_WIDTHS:
            if len(recent) >= width:
                level = statistics.median(itertools.islice(recent, len(recent) - width, None))
                self._return_best[width] = max(self._return_best.get(width, level), level)
        needed = self._return_points_needed(point.step, point.target_steps)
        # (judged every ten points; at the plan's end whatever the count)
        if self._return_points < needed or _RETURN_WIDTHS[0] not in self._return_best \
                or (self._return_points % 10 and needed != _RETURN_POINTS_WHOLE_RUN):
            return []
        # Flat only when flat at each width of level the run allows (up to 20 points):
        # five points catch a rise early in the run, which a wide first level would
        # absorb; a return that swings between two outcomes (a maze solved, +23, or not,
        # -250) shows its rise only in the share of episodes won, which five points in a
        # row cannot measure.
        widest = min(_RETURN_WIDTHS[-1], self._return_points // 10)
        found = None
        for width in _RETURN_WIDTHS:
            if width > max(widest, _RETURN_WIDTHS[0]) or width not in self._return_best:
                break
            found = no_progress.flat_return(self._return_start[:width], list(recent),
                                            self._return_best[width], self._return_points,
                                            self.rules.not_learning_short_fall, width)
            if found is None:
                break
        if found is not None and self._evaluation_learned():
            found = None  # the evaluated policy got better: it learned (see below)
        broken = (self._played_long() or self._plan_spent(point)) if found is not None \
            else None
        if found is not None and "return" not in self._raised:
            self._raised.add("return")
            self._return_broken = broken is not None
            return [Raise(AnomalyType.NOT_LEARNING, f"{key}: {found}"
                          + (f", {broken}" if broken else ""), key="return",
                          severity=Severity.BLOCKER if broken else None,
                          severity_at_end=self._return_end_severity(point.step))]
        if broken is not None and not self._return_broken:
            self._return_broken = True
            return [Reassess(AnomalyType.NOT_LEARNING, Severity.BLOCKER,
                             f"{key} is still flat {broken}", key="return")]
        if found is None and "return" in self._raised:
            self._raised.discard("return")
            self._return_broken = False
            return [Resolve(AnomalyType.NOT_LEARNING, f"{key} rose to {value:.4g}",
                            key="return")]
        return []

    def _note_eval_return(self, point: Observation) -> None:
        key = _eval_return_key(tuple(point.metrics))
        value = point.metrics.get(key) if key is not None else None
        if value is not None and math.isfinite(value):
            # Its best as a level of a few evaluations: one lucky episode is no policy
            # that learned (ARS's 11116 once among returns of 1,600-6,500).
            self._eval_recent.append(value)
            level = statistics.median(self._eval_recent)
            first, best = self._eval_return or (value, level)
            self._eval_return = (first, max(best, level))

    def _evaluation_learned(self) -> bool:
        """Whether the run's evaluation return rose well above its first (by as much
        again as its size): the deterministic policy it evaluates learned, whatever its
        exploring rollouts' return shows (SB3's `eval/mean_reward` 35.2 → 157 while
        `rollout/ep_rew_mean` wandered between 70 and 114)."""
        if self._eval_return is None or (self._return_key is not None
                                         and is_eval_metric(self._return_key)):
            return False  # (the return judged is the evaluation's own)
        first, best = self._eval_return
        return best - first >= max(abs(first), 1e-9)

    def _note_played(self, point: Observation) -> None:
        """The agent's experience counter (frames, timesteps) beside the return: its
        first and latest count."""
        key = no_progress.experience_key(point.metrics)
        count = point.metrics.get(key) if key is not None else None
        if count is not None and math.isfinite(count):
            self._played = (self._played[0] if self._played else count, count)

    def _plan_spent(self, point: Observation) -> str | None:
        """Why a flat return is a broken run: watched from the run's start (its first
        point a tenth of the way or less), it has spent `_PLAN_SPENT` of the plan the run
        announced without rising (a SAC run's return at -440 on HalfCheetah, worse than a
        random policy, over 96 of its 200 episodes): what is left is no more likely to
        turn it than what was spent."""
        first, step, target = self._return_first_step, point.step, point.target_steps
        if first is None or step is None or not target or first * _FROM_START_SHARE > target \
                or step < _PLAN_SPENT * target:
            return None
        return f"over {step} of the {target} steps planned, from the run's start"

    def _played_long(self) -> str | None:
        """Why a flat return is a broken run: its agent has played enough experience from
        the run's start (see `no_progress.long_experience`)."""
        if self._played is None:
            return None
        return no_progress.long_experience(*self._played)

    def _replayed_return(self, key: str, value: float) -> list[Signal]:
        """A return identical to its last of many digits on `not_learning_identical`
        episodes in a row: the agent replays one trajectory, step for step, so it neither
        explores nor changes its policy (a Q-learning game's `Total rewards in episode 73
        is 3.799999999999999 total number of steps are 3626`, then the same return every
        episode, 49 steps each). A blocker, as a loss frozen to its last digit is: the run
        burns compute on a policy that no longer moves. A return printed with few digits
        (CartPole's capped `500.0`, Pong's `-21.0`) repeats at a ceiling or floor on its
        own: left to the flat-return rule."""
        recent = self._return_recent
        need = self.rules.not_learning_identical
        if "replayed" in self._raised:
            if value != recent[-2]:
                self._raised.discard("replayed")
                return [Resolve(AnomalyType.NOT_LEARNING, f"{key} changed to {value:.6g}",
                                key="replayed")]
            return []
        if len(recent) < need or significant_digits(value) < 7 \
                or any(recent[-i] != value for i in range(2, need + 1)):
            return []
        self._raised.add("replayed")
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: {key} is exactly {value!r} on {need} episodes in a "
                      f"row: the agent replays the same trajectory (no exploration, a "
                      f"policy that no longer changes)", key="replayed",
                      severity=Severity.BLOCKER)]

    def _return_points_needed(self, step: int | None, target: int | None = None) -> int:
        """Points before a flat return speaks: fewer where they reach from the run's start
        to a hundred times as far (a long run logged sparsely, or cut into windows: its
        whole course is there to see; the first sixty episodes of a run logged at each are
        not), and fewer still where they reach from its start (a tenth of the way or
        less) to the end of its plan: the whole run is there, however sparsely it printed
        (ML-Agents' summary every 50,000 of 500,000 steps, `Mean Reward: -198.986` then
        -192.98 … -191.63 to the last)."""
        first = self._return_first_step
        if first is not None and step is not None and target and step >= target \
                and first * _FROM_START_SHARE <= step:
            return _RETURN_POINTS_WHOLE_RUN
        if first is not None and step is not None and first * _SPARSE_SPAN <= step:
            return _RETURN_POINTS_FROM_START
        return _RETURN_POINTS

    def _return_end_severity(self, step: int | None) -> Severity | None:
        """A return that never rose over a whole run, watched from its start (its first
        point a tenth of the way or less to its latest): at the end, the policy it
        delivers is no better than the one it began with, which nobody can use (a
        blocker). Over an excerpt from mid-run the same flatness may be a converged
        policy's: the catalogue's severity."""
        first = self._return_first_step
        if first is None or step is None or first * _FROM_START_SHARE > step:
            return None
        return Severity.BLOCKER

    def _replayed(self, point: Observation, value: float) -> list[Signal]:
        """An epoch whose losses are, batch for batch, the epoch before's (see
        `replayed_epochs`): the weights are not changing, as with an identical loss."""
        turned = self._replay.observe(point.step, point.epoch, value)
        if turned is None:
            return []
        if turned:
            return [Raise(AnomalyType.NOT_LEARNING, self._replay.describe(point.step),
                          key="replayed-epoch", severity=Severity.BLOCKER)]
        return [Resolve(AnomalyType.NOT_LEARNING, "the losses no longer repeat the epoch "
                        "before's", key="replayed-epoch")]

    def _identical(self, value: float, every_point: bool = False) -> list[Signal]:
        # 0 is what Hugging Face prints for a NaN loss it filtered (the NaN rule's story),
        # and a loss printed with few digits (0.0008) repeats once it has converged.
        # Printed to eight digits, a frozen loss may still wobble in the last one.
        last = self._last
        same = last is not None and (value == last or (
            significant_digits(value) >= 7 and abs(value - last) <= 1e-6 * abs(value)))
        self._same = self._same + 1 if same and significant_digits(value) >= 4 else 0
        self._last = value
        need = self.rules.not_learning_identical
        if every_point:  # the same from the log's first loss on: a short log may say so
            need = min(need, self.rules.not_learning_identical_short)
        lowest, self._lowest = self._lowest, min(self._lowest, value)
        if self._same + 1 >= need and "identical" not in self._raised:
            self._raised.add("identical")
            first = self._first[0] if self._first else None
            if first is not None and value > 0 and first >= _CONVERGED_FALL * value \
                    and value <= lowest * (1 + 1e-6):
                # At the lowest the run reached, far below where it began: an optimiser at
                # its minimum (SciPy's L-BFGS-B after Adam in a physics-informed network,
                # `Loss: 0.882377` on its last evaluations, then `Optimization terminated`),
                # or weights no longer updated after they learned: a remark, not a block.
                return [Raise(AnomalyType.NOT_LEARNING,
                              f"the loss is exactly {value!r} on {self._same + 1} logged steps "
                              f"in a row, at the lowest the run reached ({first:.4g} at its "
                              f"start): converged, or the weights are no longer updated",
                              key="identical", severity=Severity.LOW)]
            return [Raise(AnomalyType.NOT_LEARNING,
                          f"not learning: the loss is exactly {value!r} on {self._same + 1} "
                          f"logged steps in a row (no batch changes it: the weights or the "
                          f"data are not changing)", key="identical", severity=Severity.BLOCKER)]
        # Printed with three digits, the same from the run's first epoch to its tenth
        # (GRU4Rec's TOP1 loss, `0.942` on each of ten epochs of 70-90 minutes): a loss
        # that short converges only after it fell, and this one never moved.
        self._same_printed = self._same_printed + 1 \
            if last is not None and value == last and significant_digits(value) >= 3 else 0
        if self._start_known and self._same_printed + 1 >= need \
                and self._same_printed + 1 >= self._losses \
                and "identical" not in self._raised:
            self._raised.add("identical")
            return [Raise(AnomalyType.NOT_LEARNING,
                          f"not learning: the loss reads {value!r} on each of its "
                          f"{self._same_printed + 1} logged points from the run's start (as "
                          f"printed, it never moved)", key="identical")]
        if self._same == 0 and self._same_printed == 0 and "identical" in self._raised:
            self._raised.discard("identical")
            return [Resolve(AnomalyType.NOT_LEARNING, f"the loss changed to {value:.6g}",
                            key="identical")]
        return []

    def _last_digit(self, value: float) -> list[Signal]:
        """A loss that moves by one unit of its last printed digit at most, on as many
        points in a row as an identical one needs, and has not fallen since the start
        (see last_digit): a notice, the verdict on a run that finished so."""
        tail = self._digit_tail
        tail.append(value)
        need = self.rules.not_learning_identical
        if len(tail) < need:
            return []
        # Where the noise-judged flat test can speak (a log placed at the run's start,
        # with points enough), it is that test's: one finding per flat loss. (Asked
        # first: the digits of ten values are costly to weigh at every record.)
        placed = self._start_known and self._count >= self.rules.not_learning_points
        level = None if placed or self._digit_judged or "identical" in self._raised \
            else last_digit.within_last_digit(list(tail)[-need:])
        if level is not None and not self._loss_fell():
            self._digit_judged = True
            self._digit_level = level
            self._raised.add("last digit")
            return [Raise(AnomalyType.NOT_LEARNING,
                          f"not learning: the loss has stayed at {level:.6g}, moving by one "
                          f"unit of its last printed digit at most, on {need} logged points in "
                          f"a row (no batch changes what the model computes)",
                          key="last digit")]
        if "last digit" in self._raised and (self._loss_fell() or self._left_digit_level(value)):
            # Learning shown (a wobble of two units is not): withdrawn for good.
            self._raised.discard("last digit")
            return [Resolve(AnomalyType.NOT_LEARNING, f"the loss fell to {value:.6g}",
                            key="last digit")]
        return []

    def _flat(self, value: float, judge: bool = True) -> list[Signal]:
        rules = self.rules
        if self._learned:
            return []  # a run that has learned has learned; later trouble is another rule's
        if abs(value) > rules.loss_blowup:
            return []  # numbers blown up (1e31) are the divergence rule's, flat or not
        self._count += 1
        self._recent.append(value)
        self._noise.append(value)
        self._long_noise.append(value)
        if len(self._first) < _LEVEL_WIDTH:
            self._first.append(value)
            return []
        now = trends.level(list(self._recent), _LEVEL_WIDTH)
        # The best is a level held for a few points: over 160 noisy epochs the lowest
        # single median of five sits well below the loss's true level by luck alone, and
        # a flat loss would be called learned.
        self._levels.append(now)
        held = max(self._levels)
        self._best = held if self._best is None else min(self._best, held)
        if not self._start_known or self._count < rules.not_learning_points or not judge:
            return []
        start = trends.level(self._first, _LEVEL_WIDTH)
        # Over a long stretch: twenty points' estimate is low now and then, and exactly
        # then the best's luck would look like learning.
        sigma = trends.noise_scale(list(self._noise))
        if trends.beyond_noise(start - self._best, start, sigma, 3.0,
                               rules.not_learning_min_fall) \
                and trends.beyond_noise(start - self._best, start,
                                        trends.noise_scale(list(self._long_noise)), 3.0,
                                        rules.not_learning_min_fall):
            self._learned = True
            if "flat" in self._raised:
                return [Resolve(AnomalyType.NOT_LEARNING, f"the loss fell to {now:.4g}",
                                key="flat")]
            return []
        better = self._quality_rose()
        if better is not None:
            self._learned = True
            if "flat" in self._raised:
                return [Resolve(AnomalyType.NOT_LEARNING, f"learning: {better}", key="flat")]
            return []
        rose = trends.beyond_noise(now - start, start, sigma, 3.0, rules.not_learning_min_fall)
        if start > 0 and 3.0 * sigma > _POWERLESS * start:
            # So noisy (one batch of a different dataset at each printed step) that not
            # even a fall to half its start would show: no fall seen is no evidence.
            return []
        if not rose and "flat" not in self._raised:
            self._raised.add("flat")
            return [Raise(AnomalyType.NOT_LEARNING,
                          f"not learning: over {self._count} logged points the loss has not "
                          f"moved beyond its noise from where it started ({start:.4g} → "
                          f"{now:.4g}, σ≈{sigma:.2g})", key="flat")]
        if not rose and "flat" in self._raised and not self._flat_long \
                and self._count >= _FLAT_WHOLE_POINTS and self._scores_poorly():
            # Still flat from the run's first point (`_start_known`) over many more points,
            # and a quality score of the run low beside it (a distillation run's `loss:
            # 0.226` … `0.229` over all fifty epochs, its evaluated accuracy at a tenth
            # throughout): judged high, and so a blocker if the run finishes this way
            # (`core.run`, never learned at the end) — what it delivers is its
            # initialisation. A flat loss alone stays high at the end: it may have fallen
            # inside the first epoch, before the log's first point.
            self._flat_long = True
            return [Reassess(AnomalyType.NOT_LEARNING, Severity.HIGH,
                             f"still flat after {self._count} logged points from the run's "
                             f"start ({start:.4g} → {now:.4g})", key="flat")]
        return []

    _flat_long = False  # the flat loss was judged high for its length

    def _no_data_seen(self, point: Observation) -> list[Signal]:
        """A loss of exactly 0 at a throughput of exactly 0, point after point: the loop
        runs over nothing (an empty data loader, a filter that drops every sample) and
        averages an empty sum — `Epoch 12, Loss 0.0000, Speed 0.00 tok/s`. Whatever the run
        goes on to print, it trains nothing: a blocker, resolved once data flows again."""
        if point.loss is None or point.throughput is None:
            return []
        if point.loss == 0 and point.throughput == 0:
            self._no_data += 1
        elif point.throughput > 0:
            self._no_data = 0
            if "no data" in self._raised:
                self._raised.discard("no data")
                return [Resolve(AnomalyType.NOT_LEARNING, "data flows again: the throughput "
                                "is above 0", key="no data")]
        if self._no_data >= _NO_DATA_POINTS:
            return self._raise_once("no data", Severity.BLOCKER,
                                    f"not learning: the loss and the throughput have both been "
                                    f"exactly 0 on {self._no_data} logged points in a row: the "
                                    f"loop processes no data (an empty data loader, a filter or "
                                    f"a path that leaves no samples), so nothing is trained")
        return []

    def _zeros(self, point: Observation) -> list[Signal]:
        out: list[Signal] = []
        warmup = self.rules.not_learning_warmup_points
        if point.lr is not None and math.isfinite(point.lr):
            if self._lr_points == 0:
                self._lr_mid_run = point.step is not None \
                    and point.step > self.rules.divergence_start_steps
            if self._lr_mid_run:
                warmup = 0  # an excerpt from mid-run: no warm-up from 0 in view
            self._lr_points += 1
            if self._lr_points > warmup and self._lr_zero >= 0:  # -1: it moved, for good
                self._lr_zero = self._lr_zero + 1 if point.lr == 0 else -1
        if point.grad_norm is not None and math.isfinite(point.grad_norm) \
                and point.metrics.get("loss_scale", 0.0) >= 0:
            # (not beside a negative loss scale: Megatron prints `loss scale: -1.0 | grad
            # norm: 0.000` when DeepSpeed's engine steps the optimizer and reports neither)
            self._grad_points += 1
            if self._grad_points > warmup and self._grad_zero >= 0:
                self._grad_zero = self._grad_zero + 1 if point.grad_norm == 0 else -1
        if point.lr is not None and point.grad_norm is not None and self._both_zero >= 0:
            # Both exactly 0 at once, from the log's first point on: no coincidence of
            # rounding, the optimizer is doing nothing (a sparse log has few points).
            self._both_zero = self._both_zero + 1 \
                if point.lr == 0 and point.grad_norm == 0 else -1
        if self._both_zero >= _BOTH_ZERO_POINTS and "zero updates" not in self._raised \
                and not self._loss_fell():
            self._raised.add("zero updates")
            out.append(Raise(AnomalyType.NOT_LEARNING,
                             f"not learning: the learning rate and the grad norm are both "
                             f"exactly 0 on every one of the {self._both_zero} logged points: "
                             f"no weight changes (a learning rate schedule that never starts, "
                             f"or frozen parameters)", key="zero updates",
                             severity=Severity.HIGH))
        elif self._both_zero < 0 and "zero updates" in self._raised:
            self._raised.discard("zero updates")
            out.append(Resolve(AnomalyType.NOT_LEARNING, "the weights are updated again",
                               key="zero updates"))
        out.extend(self._no_data_seen(point))
        for name, run in (("learning rate", self._lr_zero), ("grad_norm", self._grad_zero)):
            need = self.rules.not_learning_zero_points
            if name == "learning rate" and self._lr_mid_run and run == self._lr_points:
                # An excerpt from mid-run whose every rate is exactly 0 (Megatron's
                # `learning rate: 0.000E+00` at iterations 110 and 120): no warm-up and no
                # rounding to wait out; two points with a loss that has not fallen say it.
                need = min(need, _MID_RUN_ZERO_POINTS)
            if run >= need and name not in self._raised and "zero updates" not in self._raised \
                    and not self._loss_fell():
                self._raised.add(name)
                out.append(Raise(AnomalyType.NOT_LEARNING,
                                 f"not learning: the {name} has been exactly 0 on every one "
                                 f"of {run} logged points after warm-up: no weight changes",
                                 key=name, severity=Severity.HIGH))
            elif run < 0 and name in self._raised:
                self._raised.discard(name)
                out.append(Resolve(AnomalyType.NOT_LEARNING, f"the {name} is no longer 0",
                                   key=name))
        return out

    def _left_digit_level(self, value: float) -> bool:
        """The loss fell below the level the last-digit finding was made at by more than
        `not_learning_min_fall` of it, hundreds of units of its last digit: the model's
        output does change. (A running mean over an epoch moves by one unit a print, as
        a frozen loss wobbles: sealed-12's tmux capture of a Transformer run, `Loss:
        4.6090` climbing one unit at a time, then down to 4.37 epochs later.)"""
        level = self._digit_level
        return level is not None and level - value > abs(level) * self.rules.not_learning_min_fall

    def _loss_fell(self) -> bool:
        """The loss fell well beyond its noise since the first point: the weights do
        change, whatever the log prints (a rate printed to four decimals, `lr:0.0000`,
        during a warm-up from 1e-6)."""
        if self._learned:
            return True
        losses = list(self._recent)
        if len(self._first) < 2 or len(losses) < 3:
            return False
        start = self._first[0]
        now = trends.level(losses, 3)
        return trends.beyond_noise(start - now, start, trends.noise_scale(losses), 3.0,
                                   self.rules.not_learning_short_fall)

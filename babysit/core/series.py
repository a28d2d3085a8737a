"""MetricSeries: where the run is (step, planned total, epoch) and what its metrics say.

Records arrive in log order. The series keeps the latest value of every metric, picks
the keys the run uses for its loss, learning rate and gradient norm, and runs the
registered metric rules over each record. It keeps only bounded windows, so watching
a month-long run costs the same memory as watching a short one.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace

from babysit import lazy_re
from babysit.config import RuleSettings
from babysit.core.epoch_steps import EpochSteps
from babysit.core.nested_loops import NestedLoops
from babysit.metric_names import (
    GRAD_NORM_KEYS,
    LOSS_KEYS,
    LR_KEYS,
    eval_direction,
    first_present,
    is_eval_metric,
    sampled_policy,
    step_time_key,
    throughput_key,
)
from babysit.model import EventKind, Record
from babysit.parsing.events import NEXT_REPETITION
from babysit.rules.eval_chance import EvalChanceRule
from babysit.rules.exploration import ExplorationRule
from babysit.rules.learning_rules import NotLearningRule
from babysit.rules.loss_parts import is_term
from babysit.rules.metric_floor import MetricFloorRule
from babysit.rules.objective_names import objective_key
from babysit.rules.stream import EvalRule, LossRule, LrScheduleRule, Observation, RuleSet, Signal
from babysit.user_alerts import UserAlert

MEASURED_UNIT = "steps/s (measured)"
STEP_TIME_UNIT = "steps/s (from the time per step)"
TIMESTAMP_UNIT = "steps/s (from the log's timestamps)"
# A loss this share of the run's first one or more, right after the step went back to
# the start, is a new run's from scratch.
_NEW_RUN_SHARE = 0.8
# ... or, the counter back at 1, this many times the loss the loop before it ended on.
_RESTART_ABOVE = 1.2
_PER_CALL_TOTALS = 3  # different totals of completed passes: each call counts its own
# Whole epochs another training must count between a training set aside and its resume.
_EPOCHS_BETWEEN = 2


# The weight of a loss's term printed beside it (`alpha`, `beta`, `kl_weight`, `beta_kl`,
# `lambda_gp`, `recon_coef`), a split's prefix allowed; not the optimiser's settings
# (`weight_decay`, Adam's betas are never printed per record), nor a score named a
# coefficient (`dice_coef`, `jaccard_coef`, `matthews_corrcoef`: figures, no weights).
_LOSS_WEIGHT = lazy_re.compile(r"^(?:(?:eval|val|valid|test|train)[/_])?(?:alpha|beta|lambda|lam|"
                               r"kl_?(?:weight|beta|coef|coeff|scale)|beta_?kl|w_kl|lambda_\w+|"
                               r"(?!\w*(?:dice|jaccard|iou|corr|pearson|spearman|kappa|gini|r2)_?"
                               r"coeff?$)\w+_(?:weight|coef|coeff|lambda))$")

# A loss-term weight this far from its value when the loss rule began makes another total.
_REWEIGHTED = 0.25


@functools.lru_cache(maxsize=256)
def _loss_weights(names: tuple[str, ...]) -> tuple[str, ...]:
    """The loss-term weights among a record's names (a log prints a few shapes of record:
    matched once per shape, not on every record)."""
    return tuple(key for key in names if _LOSS_WEIGHT.match(key))


def _best_summary(metrics: Mapping[str, float]) -> bool:
    """A record of best-so-far figures only (`Best test Acc: 0.763880`): what a training
    function prints as it returns, its run summed up."""
    return bool(metrics) and all(key.startswith("best") for key in metrics)


@dataclass(frozen=True)
class StepChange:
    """How one record moved the step: forward, back (a restart from a checkpoint or
    from scratch), or not at all."""

    advanced: bool = False
    went_back: bool = False


_STILL = StepChange()
_STEPLESS_EPOCHS = 5  # epochs moved on with no step moving: the step is no counter of the run
# Records at most between two best-so-far records of a script that prints its best after
# every epoch (its training line, a mean, an evaluation or two).
_BEST_EVERY_EPOCH = 6
_ADVANCED = StepChange(advanced=True)
_WENT_BACK = StepChange(went_back=True)


class MetricSeries:
    def __init__(self, rules: RuleSettings, target_steps: int | None = None,
                 alerts: tuple[UserAlert, ...] = ()) -> None:
        self.step: int | None = None
        self.target_steps = target_steps
        self._target_fixed = target_steps is not None
        self._outgrown = 0  # the largest total the run trained past: not its plan
        self._pass_totals: set[int] = set()  # the totals of passes that reached their end
        # The loss-term weights when the loss rule last started over (`_reweighted`).
        self._weights_then: dict[str, float] = {}
        self.epoch: float | None = None
        self.total_epochs: int | None = None
        self.metrics: dict[str, float] = {}
        self.loss_key: str | None = None
        self._train_key: str | None = None  # a total by another name, for evaluations only
        self.lr_key: str | None = None
        self.grad_key: str | None = None
        self.throughput_unit: str | None = None
        self._throughput_key: str | None = None
        self._step_time: tuple[str, float] | None = None  # a time per step and its scale
        self.lr_schedule: str | None = None  # the configured scheduler, when known
        self.advances = 0  # records that moved the step forward, ever
        self.restarts_seen = 0  # times the step counter went back
        self.new_epoch = False  # an epoch or stage began; whoever reads it clears it
        # The epoch last counted against its plan (`Epoch [300/300]`, not a summary's
        # `best RMSE 23.56 (Epoch 125)` after it), and the whole epochs between the last
        # two so counted: a loop printing every 40th epoch trains up to 39 past its last
        # print.
        self.planned_epoch: float | None = None
        # Where the latest whole epoch began (epoch, step), and whether the steps were seen
        # to count from 0 (see `_note_epoch_start`).
        # (epoch, its first step, more records of it seen), and the epoch's before it
        self._epoch_began: tuple[int, int, bool] | None = None
        self._epoch_before: tuple[int, int, bool] | None = None
        self.counts_from_zero = False
        self.epoch_gap = 1
        self._epoch_steps = EpochSteps()  # the steps an epoch takes (`epoch_steps`)
        self._primary_rank: int | None = None
        self._primary_series: str | None = None
        self._rules = RuleSet(rules, alerts)
        self._start_steps = rules.divergence_start_steps  # steps a run's start spans
        self._first_loss: float | None = None  # the run's first loss, at its start
        self._back_to_start = False  # the step went back to the start just now
        self._restarted_at_one = False  # ... to its first count, 0 or 1, just now
        self._last_names: frozenset[str] = frozenset()  # the names of the loss's last record
        self._count_restarted = False  # ... said by the step counter itself
        self.new_runs = 0  # new runs from scratch seen in the same log (see `_new_run`)
        # The loss rule of a training the epoch went back from, and the epoch it reached.
        self._set_aside: tuple[int, LossRule] | None = None
        self._epochs_since_aside = 0  # the new epochs another training counted since
        # The log said a run finished (`Training complete`, an early stop); training
        # after that, from a new start, is a new run's (see _new_run_from).
        self._said_finished = False
        self._finished_epoch: float | None = None  # the epoch it was said at
        # A best-so-far record came a few records after the one before: the script prints
        # its best after every epoch (SignGraph's `Best_dev: 172.73, …`), and it ends
        # nothing from then on (one after a whole model's training still does: models
        # trained in turn, each closing on `Best test Acc: 0.769365`).
        self._best_restated = False
        self._since_best: int | None = None  # records since the last best-so-far record
        self._last_timed: float | None = None  # the log's own time of the last step
        self._rate_anchor: tuple[float, int] | None = None  # (time, step) rates start from
        self._timed_gaps: deque[float] = deque(maxlen=20)
        self.vocab_size: int | None = None  # said by the run (ln of it: a random guess's loss)
        self.configured_lr: float | None = None  # the learning rate its config or CLI gives
        self.patience: int | None = None  # the early stop's patience its config gives
        self._patience_then: str | None = None  # the verdict as the last new run began
        self._trained_since_new_run = True
        self._advanced = True  # the last record moved the step (or had none)
        # A pipeline that prints only its stages went on past its training stage
        # (parsing/stage_milestones): training babysit saw return, without a step.
        self.passed_training_stage = False
        self._nested = NestedLoops()  # an inner loop's counter starting each round again
        # The whole epoch and the step last seen, and the epochs moved on since the step
        # last moved (see `_stepless_epochs`).
        self._step_still: tuple[int | None, int | None, int] = (None, None, 0)
        self._stale_step: int | None = None  # that standing step, no counter of the run

    @property
    def saw_training(self) -> bool:
        # (a summary of the best figures alone, `Stopping. Best val: 9.9 at epoch 3`,
        # names a result babysit never saw made; an evaluation's own figures, MLPerf's
        # `eval_accuracy` before its `run_stop`, are the trained model's)
        return self.step is not None or self.passed_training_stage \
            or any(not key.startswith("best") for key in self.metrics)

    def is_primary(self, record: Record) -> bool:
        """Rank 0 (the lowest rank seen) speaks for the run; other ranks' events count,
        their metrics do not (each rank prints its own, often identical, losses). So does
        the first of several series interleaved in one log (a sweep's runs, an agent's
        workers): each is a training of its own, and mixed they make no curve."""
        if record.series:
            if self._primary_series is None:
                self._primary_series = record.series
            if record.series != self._primary_series:
                return False
        if record.rank is None:
            return True
        if self._primary_rank is None or record.rank < self._primary_rank:
            self._primary_rank = record.rank
        return record.rank == self._primary_rank

    def absorb(self, record: Record) -> tuple[StepChange, list[Signal]]:
        """Apply one primary-rank record: the step change it made and the rules' signals."""
        if not self._target_fixed:
            self._plan(record)
        if record.total_epochs is not None:
            self.total_epochs = record.total_epochs
        if record.metrics and self._said_finished \
                and (self.loss_key is None or self.loss_key in record.metrics):
            # Training after the log said the run finished: a new run's, if its loss
            # is back where a run starts (a final evaluation's figures are not) — not
            # the next epoch of the same run, which a test pass after each epoch only
            # seemed to end (the PyTorch quickstart's `Test Error:` block after epoch 1,
            # then `Epoch 2`): a run that is not learning has its loss where it began.
            # (Only a record of the loss: another evaluation's after the test says nothing.)
            self._said_finished = False
            self._back_to_start = not (
                record.epoch is not None and self._finished_epoch is not None
                and math.isfinite(record.epoch)
                and math.floor(record.epoch) > math.floor(self._finished_epoch))
        if record.epoch is not None and self.epoch is not None \
                and record.epoch == math.floor(self.epoch) < self.epoch:
            # The whole epoch's own summary after its batches, numbered as the epoch it
            # closes (DINO's and DeiT's `{"train_loss": 4.46, …, "epoch": 0}` after
            # `Epoch: [0/302] [1350/1351]`): no step back to a new stage.
            record = replace(record, epoch=self.epoch)
        if record.epoch is not None:
            if record.total_epochs is not None and math.isfinite(record.epoch):
                if self.planned_epoch is not None \
                        and math.floor(record.epoch) > math.floor(self.planned_epoch):
                    self.epoch_gap = math.floor(record.epoch) - math.floor(self.planned_epoch)
                self.planned_epoch = record.epoch
            if self.epoch is not None and math.floor(record.epoch) > math.floor(self.epoch):
                self.new_epoch = True
                self._resume_set_aside(record.epoch)
            elif self.epoch is not None and record.epoch < self.epoch - 0.5:
                # The epoch went back with no step to say so (a new run in the same log,
                # a resume whose dicts carry no step): the schedule starts again, and
                # the loss is judged against the new stage's own level.
                rule = self._rules.find(LrScheduleRule)
                if isinstance(rule, LrScheduleRule):
                    rule.restart()
                self._set_aside_loss(self.epoch)
                self._renew_loss()
                # Back to the first epoch: a new run, if its loss is a new start's too.
                self._back_to_start = record.epoch <= 1
            self.epoch = record.epoch
        change = _STILL
        rate: float | None = None
        if record.step is not None and record.step == self._stale_step:
            record = replace(record, step=None)  # the standing step, repeated
        self._advanced = record.step is None or record.step != self.step
        if record.step is not None and record.step != self.step:
            if self.step is not None and record.step < self.step:
                self.restarts_seen += 1
                change = _WENT_BACK
                # Back to the start: a new run in the same log (the next config of a
                # grid search) or only an epoch's counter starting again; its loss says
                # which (see _observe).
                self._back_to_start = record.step <= self._start_steps < self.step
                # (from its very first count: not a figure that wanders below the start)
                self._count_restarted = self._back_to_start and record.step <= 1
                # (a counter of its own, no epoch beside it: an epoch's batches starting
                # again are placed by their epoch, or say it)
                # (and the same names as the loss's last record: the loop itself begun again,
                # not a distillation's `iter = 0000, loss = 1.19` after its evaluation
                # nets' `train loss = 0.000178` lines)
                self._restarted_at_one = record.step <= 1 and record.epoch is None \
                    and frozenset(record.metrics) == self._last_names
            else:
                self.advances += 1
                change = _ADVANCED
                rate = self._timed(record.time, record.step)
            self.step = record.step
            self._note_epoch_start(record)
            if record.epoch is not None and record.total_epochs is not None \
                    and record.metrics and math.isfinite(record.epoch):
                self._epoch_steps.seen(record.step, record.epoch)
        if any(e.kind is EventKind.NEW_STAGE and e.detail == NEXT_REPETITION
               for e in record.events):
            self._new_run()  # a fold's header: the next of several trainings (`headers`)
        elif record.metrics and self._nested.repeat_began(record.metrics):
            self._new_run()  # the next of several trainings in one log (`nested_loops`)
        elif record.metrics and self._nested.round_began(record.metrics):
            self._renew_loss()  # a new round of a nested loop: a loss of its own level
        elif record.metrics and self._nested.stage_began(record.metrics):
            # the next stage (a continual learner's task): a loss of its own level, and
            # whether it moves is judged within it
            self._renew_loss()
            self._rules.renew(NotLearningRule)
        signals = self._observe(record) if record.metrics else []
        if change is _ADVANCED and rate is not None:
            signals += self._timestamp_rate(rate)
        if any(event.kind is EventKind.COMPLETED for event in record.events):
            self._said_finished = True
            self._finished_epoch = record.epoch if record.epoch is not None else self.epoch
        elif record.metrics and _best_summary(record.metrics):
            if self._since_best is not None and self._since_best <= _BEST_EVERY_EPOCH:
                self._best_restated = True
            self._since_best = 0
            self._said_finished = self._said_finished or not self._best_restated
        elif record.metrics and self._since_best is not None:
            self._since_best += 1
        if self.loss_key is not None and self.loss_key in record.metrics:
            self._last_names = frozenset(record.metrics)  # (the last record of the loss's)
        return change, signals

    def _new_run_from(self, loss: float, before: float | None = None) -> None:
        """After the step went back to the start, a loss back near the run's first one
        (0.80 again, after 0.45) is a new run from scratch, judged against its own
        level, not the last run's best; a loss near where it was (an epoch's batch
        counter starting again) goes on being judged as before."""
        if self._first_loss is None and (
                self.step <= self._start_steps if self.step is not None
                else self.epoch is not None and self.epoch <= 1):
            self._first_loss = loss
        restarted, self._restarted_at_one = self._restarted_at_one, False
        if restarted and before is not None and before > 0 \
                and loss >= _RESTART_ABOVE * before:
            # Its counter back at 1, far above where the loop before it ended, however
            # short that loop was (scikit-learn's MLP refitted on a new target each batch,
            # `Iteration 1, loss = 17706.6` after the last fit's `Iteration 24, loss =
            # 13480.8`): a new fit at its own level, not a spike of the one before.
            self._back_to_start = False
            self._new_run()
            return
        if not self._back_to_start:
            return
        self._back_to_start = False
        first = self._first_loss
        if first is not None and ((first > 0 and loss >= _NEW_RUN_SHARE * first)
                                  or first == 0 < loss):
            # (a first run whose loss printed 0 — a loss term off, or below the
            # resolution it was printed at, `Train loss: 0.000..` — and a new one whose
            # loss is not: the new run's own figures, not the old one's zeros, say
            # whether it learns)
            self._new_run()

    def _new_run(self) -> None:
        """A new run from scratch in the same log: every rule that judges the run
        against its own past judges the new one against its own."""
        if self._trained_since_new_run:  # (a second test pass leaves the first's verdict)
            self._patience_then = self._patience_verdict()
        self._trained_since_new_run = False
        self._rules.new_run()
        self._renew_loss()
        self.new_runs += 1

    def _set_aside_loss(self, reached: float) -> None:
        """Keep the loss rule of the training the epoch just went back from, with the
        epoch it reached, should a later record resume that training's count."""
        rule = self._rules.find(LossRule)
        if isinstance(rule, LossRule) and rule.seen_losses:
            self._set_aside = (math.floor(reached), rule)
            self._epochs_since_aside = 0

    def _resume_set_aside(self, epoch: float) -> None:
        """A count that jumps forward to the epoch after the one a training set aside had
        reached resumes that training, not a new one: a script whose log holds several
        trainings appended (an autoencoder's epochs 0-79, a classifier's 0-19, then
        `[Train] Epoch: 80, Loss:0.000954`) continued the first from its checkpoint. Its
        loss is judged against the level that training left off at, so a resume that
        comes back hundreds of times higher (a checkpoint not loaded, a state reset) is a
        jump, not a fresh start's level."""
        if self._set_aside is None or self.epoch is None:
            return
        reached, rule = self._set_aside
        between = self._epochs_since_aside
        self._epochs_since_aside += 1
        # (a training of its own between them, whole epochs long: not one record whose
        # epoch is counted otherwise, a fraction of the run, between two of the first's)
        if math.floor(epoch) == reached + 1 and self.epoch + 1 < reached \
                and between >= _EPOCHS_BETWEEN:
            self._set_aside = None
            self._rules.put_back(rule)
            self._back_to_start = False  # (the count went on: no new run's start)

    def _reweighted(self, metrics: Mapping[str, float]) -> bool:
        """Whether a loss-term weight moved by a quarter or more since the loss rule last
        started over. A weight annealed a little every step (a KL weight warmed linearly
        over the run) starts it over a few dozen times, each further apart, not on every
        record: the rule keeps stretches long enough to judge."""
        keys = _loss_weights(tuple(metrics))
        if not keys:
            return False
        then = self._weights_then
        moved = any(key in then and abs(metrics[key] - then[key])
                    > _REWEIGHTED * max(abs(then[key]), abs(metrics[key]))
                    for key in keys)
        if moved or any(key not in then for key in keys):
            then.update((key, metrics[key]) for key in keys)
        return moved

    def objective_changed(self) -> None:
        """The run said its loss is another function from here (a new stage's loss, its
        terms reweighted): the loss rule judges the new curve against its own level, not
        the old one's best (MACE's 0.0016 before its SWA stage, 9.2 after); so are the
        evaluation losses computed with it."""
        self._renew_loss()
        eval_rule = self._rules.find(EvalRule)
        if isinstance(eval_rule, EvalRule):
            eval_rule.forget_losses()

    def _renew_loss(self) -> None:
        self._rules.renew(LossRule)
        loss_rule = self._rules.find(LossRule)
        if isinstance(loss_rule, LossRule) and self.vocab_size is not None:
            loss_rule.note_vocab(self.vocab_size)

    def _plan(self, record: Record) -> None:
        """Take the record's planned total unless the run has already trained past it.
        A total below a step already reached (an epoch's batches, an inner loop's or a
        data pass's counter: step 121,400 of a `6,175` said at start-up) was never the
        run's plan; it is refused from then on, whichever line repeats it."""
        if record.target_withdrawn:
            self.target_steps = None
        if self._stepless_epochs(record):
            # The epochs move on and the step does not: the step and its total were a
            # bar's that the run's own lines no longer follow (Ultralytics' `0/1426` drawn
            # before its table, whose rows say epochs only). No plan in steps, then.
            self._outgrown = max(self._outgrown, self.target_steps or 0)
            self.target_steps = None
            self._stale_step, self.step = self.step, None
        candidate = record.target_steps
        if candidate is not None and self._per_call(record.step, candidate):
            self.target_steps = None
            return
        if candidate is not None and candidate > self._outgrown:
            self.target_steps = candidate
        reached = record.step if record.step is not None else self.step
        if self.target_steps is not None and reached is not None \
                and reached > self.target_steps:
            self._outgrown = max(self._outgrown, self.target_steps)
            self.target_steps = None

    def _stepless_epochs(self, record: Record) -> bool:
        """Whether the run's epochs have moved on `_STEPLESS_EPOCHS` times while its
        step stood still at 0, where a bar drawn before anything else left it (records
        may repeat the last step they know). A step that moved once is the run's,
        however its epochs are said."""
        epoch = record.epoch
        if epoch is None:
            return False
        step = record.step if record.step is not None else self.step
        whole = math.floor(epoch)
        last_epoch, last_step, count = self._step_still
        if step != last_step:
            count = 0
        elif last_epoch is not None and whole > last_epoch:
            count += 1
        self._step_still = (whole, step, count)
        return count >= _STEPLESS_EPOCHS and step == 0 and self.target_steps is not None \
            and not self._target_fixed

    def _per_call(self, step: int | None, total: int) -> bool:
        """Whether the totals the run counts to belong to each call, not to the run:
        passes that each reach their own end with three different totals or more
        (Keras `fit` called once per data chunk: 64/64, 68/68, 16/16…). Two are a
        training pass and an evaluation's, or a relaunch with a new plan."""
        totals = self._pass_totals
        if len(totals) < _PER_CALL_TOTALS and step is not None and step == total \
                and not any(total % each == 0 and total > each > 1 for each in totals):
            # (a total that a pass's total divides is the run's plan reached, its epochs
            # times their batches: an OGB script's `Training batch: 1029/1029` each epoch,
            # then its 50th epoch's last at 51450 of 51450, after a data set's processing
            # bar of its own, `41127/41127`)
            totals.add(total)
        return len(totals) >= _PER_CALL_TOTALS

    def _observe(self, record: Record) -> list[Signal]:
        metrics = record.metrics
        seen_names = metrics.keys() <= self.metrics.keys()
        if not seen_names:  # a name not seen before
            self._pick_keys(metrics, counted=record.step is not None
                            and record.target_steps is not None)
        before = self.metrics.get(self.loss_key) if self.loss_key else None
        if self._reweighted(metrics):
            # The record prints the weights of its loss's terms, and one moved (a JT-VAE's
            # `Alpha: 20.000, Beta: 0.028, Loss: 6.63` after `Alpha: 0.000, Beta: 0.020,
            # Loss: 5.43`, its property and KL terms annealed in): the total is another
            # function from here, its rise no divergence and its evaluation no decline.
            self.objective_changed()
        self.metrics.update(metrics)
        loss = metrics.get(self.loss_key) if self.loss_key else None
        if loss is not None and math.isfinite(loss):
            self._new_run_from(loss, before)
        elif self._back_to_start and self.loss_key is None and (self.step is None or (
                self._count_restarted and seen_names and self._train_key is None
                and (record.epoch is None or record.epoch <= 1))):
            # Back to the first epoch in a log that prints no training loss and no step
            # (only its evaluations: `Epoch 1 validation loss: 11.887651` after `Epoch 5
            # …`): no loss to tell a resume from a new start, and a log of epochs that
            # starts its count again is a new launch, judged on its own. So is a round
            # count back at its start with no training figure and no epoch moving on
            # beside it, in the names it counted with (XGBoost's `[1] train-rmse:7.1
            # validation-rmse:7.08` after `[1000]`: the next of several fits, one per
            # target or fold; not a summary table restating the run under names of its
            # own).
            self._back_to_start = False
            self._new_run()
        self._count_restarted = False
        if (self.loss_key or self._train_key) in metrics:
            self._trained_since_new_run = True
        train_key = self.loss_key or self._train_key
        train = self.metrics.get(train_key) if train_key else _sum_of_terms(metrics)
        point = Observation(
            step=self.step,
            metrics=metrics,
            loss=loss,
            lr=metrics.get(self.lr_key) if self.lr_key else None,
            grad_norm=metrics.get(self.grad_key) if self.grad_key else None,
            throughput=self._throughput(metrics),
            throughput_unit=self.throughput_unit or "",
            train_loss=train if train is not None and math.isfinite(train) else None,
            target_steps=self.target_steps,
            lr_schedule=self.lr_schedule,
            vocab_size=self.vocab_size,
            configured_lr=self.configured_lr,
            advanced=self._advanced,
            epoch=record.epoch,
        )
        return self._rules.observe(point, record.sparse)

    def _throughput(self, metrics: Mapping[str, float]) -> float | None:
        if self._throughput_key is not None:
            return metrics.get(self._throughput_key)
        if self._step_time is not None:
            key, scale = self._step_time
            took = metrics.get(key)
            if took is not None and math.isfinite(took) and took > 0:
                return 1.0 / (took * scale)
        return None

    def _timestamp_rate(self, rate: float) -> list[Signal]:
        """Steps per second between two timestamped steps, for a log that prints no rate
        and no time per step of its own (so that `--once` on a finished log still sees
        its throughput fall)."""
        if self.throughput_unit not in (None, TIMESTAMP_UNIT, MEASURED_UNIT):
            return []
        self.throughput_unit = TIMESTAMP_UNIT
        return self._rules.observe(Observation(step=self.step, metrics={}, throughput=rate,
                                               throughput_unit=TIMESTAMP_UNIT), sparse=False)

    def note_facts(self, facts: Mapping[str, float]) -> None:
        """What the run said about itself that the rules use (its vocabulary, the
        learning rate it is configured with)."""
        lr = facts.get("configured_lr")
        if lr is not None:
            self.configured_lr = lr
        patience = facts.get("patience")
        if patience is not None:
            self.patience = int(patience)
        desired = facts.get("desired_error")
        if desired is not None:
            learning = self._rules.find(NotLearningRule)
            if isinstance(learning, NotLearningRule):
                learning.note_goal(desired)
        vocab = facts.get("vocab_size")
        if vocab is not None and vocab >= 2 and vocab == int(vocab):
            self.vocab_size = int(vocab)
            rule = self._rules.find(LossRule)
            if isinstance(rule, LossRule):
                rule.note_vocab(self.vocab_size)

    def _pick_keys(self, metrics: Mapping[str, float], counted: bool = False) -> None:
        # A run that names its loss otherwise is judged by it all the same: a
        # cross-entropy or a perplexity (OpenNMT's `xent`, `ppl`) for spikes and
        # divergence; a total by another name (`tot_loss`, `all_loss`) only as the
        # training loss an evaluation is set against: a cascade's stages may share one
        # log with no line between them (MTCNN's P-, R- and O-Net), and a total's jump
        # between two of them is no spike of the run's.
        if self.loss_key is None and self._train_key is None and sampled_policy(metrics):
            # A policy trained on its own samples (TRL's GRPO: `'loss': -0.0263` beside
            # `reward`, `completions/mean_length`, `clip_ratio/…`): its `loss` is a
            # surrogate about 0, up and down as the advantages fall, no objective that
            # falls as the policy learns; its reward says. Not judged as a loss.
            named = None
        else:
            named = first_present(LOSS_KEYS, metrics)
        if named is not None and self.loss_key is not None and self.loss_key != named \
                and self.loss_key not in LOSS_KEYS and "loss" not in self.loss_key.lower():
            # A figure taken for the objective for want of a loss (a bare `train`: the
            # dataset's size printed before training, `{'train': 40058, 'test': 12032}`)
            # gives way to a loss by name once one is printed.
            self.loss_key, self._first_loss = named, None
            self._renew_loss()
        if named is None and sampled_policy(metrics):
            pass
        else:
            self.loss_key = self.loss_key or named \
                or objective_key(metrics, whole_only=True, totals=False, by_function=counted)
            if self.loss_key is None and self._train_key is None:
                self._train_key = objective_key(metrics, whole_only=True)
        self.lr_key = self.lr_key or first_present(LR_KEYS, metrics)
        self.grad_key = self.grad_key or first_present(GRAD_NORM_KEYS, metrics)
        if self._throughput_key is None:
            found = throughput_key(metrics)
            if found is not None:
                self._throughput_key, self.throughput_unit = found
                self._step_time = None
            elif self._step_time is None:
                self._step_time = step_time_key(metrics)
                if self._step_time is not None:
                    self.throughput_unit = STEP_TIME_UNIT

    def measured_rate(self, steps_per_second: float) -> list[Signal]:
        """Throughput measured between polls, for logs that print none of their own."""
        # The run's own figures (a rate, a time per step, its timestamps) come first.
        if self.throughput_unit not in (None, MEASURED_UNIT):
            return []
        self.throughput_unit = MEASURED_UNIT
        return self._rules.observe(Observation(step=self.step, metrics={},
                                               throughput=steps_per_second,
                                               throughput_unit=MEASURED_UNIT, measured=True),
                                   sparse=False)

    def _timed(self, written: float | None, step: int | None) -> float | None:
        """Note when a step was written; returns the steps per second since the
        previous timestamped step, when both are known."""
        if written is None:
            return None
        rate = None
        if self._last_timed is not None and written >= self._last_timed:
            self._timed_gaps.append(written - self._last_timed)
        self._last_timed = written
        anchor = self._rate_anchor
        # Measured from the last step whose time differed (stamps to the second put
        # many steps on one time), over at least a second.
        if anchor is None or step is None or step < anchor[1] or written < anchor[0]:
            self._rate_anchor = (written, step) if step is not None else None
        elif written - anchor[0] >= 1.0:
            rate = (step - anchor[1]) / (written - anchor[0])
            self._rate_anchor = (written, step)
        return rate

    def logged_cadence(self) -> float | None:
        """The run's usual seconds between progress lines, from its own timestamps."""
        if len(self._timed_gaps) < 3:
            return None
        return statistics.median(self._timed_gaps)

    def _note_epoch_start(self, record: Record) -> None:
        """Whether the step counts from 0, told by where a whole epoch begins: a loop that
        numbers both from 0 begins epoch e at step e × K, K the steps an epoch (a BERT
        pretraining loop's `epoch:9 step:12663/14070`, 1407 steps an epoch, ending at
        `step:14069/14070`, its last); one counting either from 1 does not. An epoch's
        first record is its beginning only when more records of it follow (Keras numbers
        the record that ends an epoch with that epoch: `epoch 2` at step 2 × K is its last)."""
        epoch = record.epoch
        if record.step is None or epoch is None or not math.isfinite(epoch):
            return
        whole = math.floor(epoch)
        began = self._epoch_began
        if began is not None and began[0] == whole:
            if not began[2] and record.step > began[1]:
                self._epoch_began = (whole, began[1], True)
                self._judge_origin()
            return
        if began is not None and began[2]:
            self._epoch_before = began
        self._epoch_began = (whole, record.step, False) if epoch.is_integer() else None

    def _judge_origin(self) -> None:
        """With two epochs in a row seen from their first records, whether the steps
        count from 0 (see `_note_epoch_start`)."""
        before, began = self._epoch_before, self._epoch_began
        if before is None or began is None or began[0] != before[0] + 1 \
                or began[1] <= before[1]:
            return
        per_epoch = began[1] - before[1]
        self.counts_from_zero = began[0] >= 1 and began[1] == began[0] * per_epoch \
            and before[1] == before[0] * per_epoch

    def reached_target(self, counted_from_zero: bool = False, interval: int = 1) -> bool:
        """The planned steps are done (a run counting from 0 ends at target − 1). A run
        that prints every `interval` steps is done at its last print before the plan's
        end, once the loop is seen past it (the caller passes an interval only then):
        the next print would come past the plan (gluoncv's `Epoch 119 iteration
        0180/0187`, every 20 iterations, of 120 epochs, then the epoch's validation:
        iterations 181-186 ran unprinted)."""
        done = (self.step + 1 if counted_from_zero or self.counts_from_zero else self.step) \
            if self.step is not None else None
        return done is not None and self.target_steps is not None \
            and done + max(interval, 1) - 1 >= self.target_steps

    def planned_epochs_done(self) -> bool:
        """The last planned epoch trained to its last step, the plan in steps read from
        where the epoch counter turned over (`epoch_steps`: `Epoch: 20/20... Step: 2780`,
        139 steps an epoch, is the plan's end though no total of steps was announced)."""
        if self.step is None or self.epoch is None or not self.total_epochs \
                or not self._epoch_steps.final_epoch(self.epoch, self.total_epochs):
            return False
        last = self._epoch_steps.last_step(self.total_epochs)
        return last is not None and self.step >= last

    def recent_losses(self, count: int) -> list[float]:
        rule = self._rules.find(LossRule)
        return rule.recent(count) if isinstance(rule, LossRule) else []

    def recent_evals(self, count: int) -> dict[str, list[float]]:
        rule = self._rules.find(EvalRule)
        return rule.recent(count) if isinstance(rule, EvalRule) else {}

    def main_eval(self) -> tuple[str, float, int] | None:
        """The run's main evaluation metric now: (key, value, direction), the first eval
        metric it reported with a direction."""
        rule = self._rules.find(EvalRule)
        if not isinstance(rule, EvalRule) or not rule.series:
            return None
        key = next(iter(rule.series))
        value = self.metrics.get(key)
        # (the direction the rule judged it by, as main_eval_values)
        direction = rule.direction_of(key) or eval_direction(key)
        return (key, value, direction) if value is not None and direction else None

    def eval_best(self, key: str) -> tuple[float, int | None] | None:
        """An evaluation metric's best value over the whole run and the step it came at
        (kept past the rule's window)."""
        rule = self._rules.find(EvalRule)
        return rule.best.get(key) if isinstance(rule, EvalRule) else None

    def best_at(self, step: int) -> list[str]:
        """The evaluation metrics whose best so far came at this step (a checkpoint the
        run kept there was chosen by one of them)."""
        rule = self._rules.find(EvalRule)
        if not isinstance(rule, EvalRule):
            return []
        return [key for key, (_, at) in rule.best.items() if at == step]

    def stopped_by_patience(self) -> str | None:
        """Why the run's evaluations end as its configured early stop ends them (see
        `_patience_verdict`), judged on the run before a test pass that read as a new
        one (an evaluation counted from epoch 0 again, no training after it)."""
        found = self._patience_verdict()
        if found is None and not self._trained_since_new_run:
            return self._patience_then
        return found

    def _patience_verdict(self) -> str | None:
        """Why the run's evaluations end as its configured early stop ends them: the best
        of one of its evaluation metrics exactly `patience` evaluations back (or one more,
        a counter that stops past it) and none since as good (FMLP-Rec's `patience=10`,
        its best NDCG@10 at epoch 56 and its last epoch 66). None otherwise."""
        rule = self._rules.find(EvalRule)
        patience = self.patience
        if patience is None or not isinstance(rule, EvalRule):
            return None
        for key, series in rule.series.items():
            direction = rule.direction_of(key)
            values = [value for value, _ in series]
            if not direction or len(values) < patience + 1:
                continue
            worse = [-direction * value for value in values]
            best_at = min(range(len(worse)), key=worse.__getitem__)
            after = len(worse) - 1 - best_at
            if after in (patience, patience + 1) \
                    and all(w > worse[best_at] for w in worse[best_at + 1:]):
                return (f"{key} last improved {after} evaluations before the last, and the "
                        f"run's early stop waits {patience} (its configured patience): the "
                        f"loop ended as its early stop ends it")
        return None

    def main_eval_values(self) -> tuple[str, list[float], int] | None:
        """The run's main evaluation metric's recent values (the rule's window), in
        order, and its direction; None when it has none."""
        rule = self._rules.find(EvalRule)
        if not isinstance(rule, EvalRule) or not rule.series:
            return None
        # (a metric named for its split first: a bare `ssim` may be a loss term's weight
        # or a training figure, BasicSR's `lambda_ssim`, `l_ssim`, beside `eval/psnr`)
        key = next((k for k in rule.series if is_eval_metric(k) and rule.direction_of(k)),
                   next(iter(rule.series)))
        # (the direction the rule judged it by: a PSNR, an SSIM are scores too)
        direction = rule.direction_of(key) or eval_direction(key)
        return (key, [value for value, _ in rule.series[key]], direction) if direction \
            else None

    def eval_gave_back(self, key: str) -> tuple[float, float] | None:
        """(share of its gain given back, drop as a share of its best) of an evaluation
        metric at its latest (`EvalRule.gave_back`)."""
        rule = self._rules.find(EvalRule)
        return rule.gave_back(key) if isinstance(rule, EvalRule) else None

    def first_eval_held_best(self) -> tuple[str, float, int, int | None] | None:
        """(key, its first value, evaluations made, the first's step) when the main
        evaluation's first seen is still its best (`EvalRule.first_held_best`)."""
        main = self.main_eval_values()
        rule = self._rules.find(EvalRule)
        if main is None or not isinstance(rule, EvalRule):
            return None
        held = rule.first_held_best(main[0])
        return (main[0], *held) if held is not None else None

    def evals_collapsed_at_end(self) -> list[tuple[str, float, float]]:
        """The evaluations that ran away and end far above their best
        (`EvalRule.collapsed_at_end`)."""
        rule = self._rules.find(EvalRule)
        return rule.collapsed_at_end() if isinstance(rule, EvalRule) else []

    def loss_rise_over_best(self) -> float | None:
        """The training loss level's rise over its best (see `LossRule.rise_over_best`)."""
        rule = self._rules.find(LossRule)
        return rule.rise_over_best() if isinstance(rule, LossRule) else None

    def loss_relapsed_at_end(self) -> str | None:
        """Why the run ended with its loss undone after resolved divergences
        (`LossRule.relapsed_at_end`), or None."""
        rule = self._rules.find(LossRule)
        return rule.relapsed_at_end() if isinstance(rule, LossRule) else None

    def exploration_still_random(self) -> tuple[str, bool] | None:
        """Why the run's agent still acts mostly at random (rules/exploration), and
        whether it never acted otherwise; or None."""
        rule = self._rules.find(ExplorationRule)
        return rule.still_random() if isinstance(rule, ExplorationRule) else None

    def score_floor_at_end(self) -> str | None:
        """Why a finished run's held-out score never left its floor (rules/metric_floor),
        or why its last evaluation scores a uniform guess (rules/eval_chance); None
        otherwise."""
        rule = self._rules.find(MetricFloorRule)
        found = rule.floor_at_end() if isinstance(rule, MetricFloorRule) else None
        if found is None:
            guess = self._rules.find(EvalChanceRule)
            found = guess.guess_at_end() if isinstance(guess, EvalChanceRule) else None
        return found

    def lr_peak(self) -> float | None:
        rule = self._rules.find(LrScheduleRule)
        return rule.peak if isinstance(rule, LrScheduleRule) else None


def _sum_of_terms(metrics: Mapping[str, float]) -> float | None:
    """The training loss of a record that prints only its terms (ALBEF's `train_loss_itm`
    and `train_loss_ita`, no total): their sum, for an evaluation to be set against. None
    where it prints none."""
    terms = [v for k, v in metrics.items() if "loss" in k.lower() and is_term(k)]
    return sum(terms) if terms else None

"""Rules over the training loss: spikes and divergence (a run that is not learning is
`learning_rules`).

Each judges the loss against the run's own noise (`trends`): a level (the median of the
last few points) compared with a reference, and a change that must exceed both a
multiple of the run's robust scale and a minimum relative size. Severity follows what
the change means for the run, not how fast it came.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules import metric_rules as mr
from babysit.rules import no_progress, trends
from babysit.rules.early_jump import few_point_jump, jumps_from_start
from babysit.rules.epoch_means import EpochMeans
from babysit.rules.eval_names import evaluation_direction
from babysit.rules.loss_parts import LossParts, is_term
from babysit.rules.phases import PhaseWatch
from babysit.rules.runaway import RUNAWAY_TIMES, running_away
from babysit.rules.signals import Observation, Raise, Reassess, Resolve, Signal
from babysit.rules.whole_run import WholeRun

_LEVEL_WIDTH = 5  # points in a level once the run has logged enough of them
_SHORT_RUN = 10  # fewer logged points than this: a short or sparse run
# Fewer than this, a climb at each of the last points is the trend itself (a level of five
# lags it by half its width, and a dozen points hold no noise estimate to wait for).
_SPARSE_RUN = 20
# A level falling back towards the run's start gets there within this many points at its
# present pace, or it is not coming back (see `_coming_back`).
_BACK_WITHIN = 30
_SHIFT_POINTS = 8  # the recent stretch a sustained shift is measured over
_LONG_CLIMB = 10  # points in a row each above the one before: a climb at any level
_NOISE_POINTS = 200
_RANGE_POINTS = 500
_NOISE_EVERY = 50  # points between measures of the noise while nothing is rising
_BLOWN_UP = 1000.0  # a level this many times the lowest loss reached: blown up
# A spike this many times where the run started, and a point after it higher still: the
# loss exploded and went on climbing (divergence, whatever the level shows yet).
_EXPLODED = 100.0
# A loss past −1e8 that reaches a hundred times where it first passed it: still blowing up,
# not a likelihood overshooting (a mixture density's NLL wandering −1.5e8, −6.5e7, −1.8e9).
_RUNAWAY_GROWTH = 100.0
# A loss past −1e8 this many times the size of the prints just before it jumped there at
# once: blown up, not an objective without a floor drifting down.
_ORDERS_JUMP = 1e6
_MAX_TERMS_UP = 8  # terms followed as blown up at once (a bound on what is kept)


class EvalWitness:
    """The run's main validation metric, kept to ask whether it shares a rise of the
    training loss (a curriculum or a data mix makes the training loss rise by design
    while the model keeps improving)."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.direction = 0
        self.latest: float | None = None
        self.reference: float | None = None  # its value when the training loss was best
        self.since_reference = 0  # evaluations since then

    def observe(self, point: Observation) -> None:
        if self.key is None:
            # (by name, wherever the evaluation's mark sits: `val_loss`, `acc_test`, a
            # federated run's `Averaged Test Accuracy`)
            self.key = next((k for k in point.metrics if evaluation_direction(k)), None)
            if self.key is None:
                return
            self.direction = evaluation_direction(self.key)
        value = point.metrics.get(self.key)
        if value is None or not math.isfinite(value) or value == self.latest:
            return  # the same evaluation printed twice is one evaluation
        self.latest = value
        if self.reference is None:
            self.reference = value
        self.since_reference += 1

    def train_best(self) -> None:
        """The training loss reached a new best: validation is measured from here."""
        self.reference, self.since_reference = self.latest, 0

    def shares(self, tolerance: float) -> bool:
        """Whether validation got worse too since the best training loss."""
        if self.reference is None or self.latest is None or self.since_reference == 0:
            return False
        return (self.reference - self.latest) * self.direction > abs(self.reference) * tolerance

    def improved(self, tolerance: float) -> bool:
        """Whether validation got better since the best training loss, by more than
        `tolerance` of its value then."""
        if self.reference is None or self.latest is None or self.since_reference == 0:
            return False
        return (self.latest - self.reference) * self.direction > abs(self.reference) * tolerance

    def unshared(self, tolerance: float) -> str | None:
        """Why validation does not share the rise (it held or improved since the best
        training loss), or None when it does or cannot tell."""
        if self.reference is None or self.latest is None or self.since_reference == 0:
            return None
        worse = (self.reference - self.latest) * self.direction
        if worse > abs(self.reference) * tolerance:
            return None
        verb = "improved" if worse < 0 else "held"
        return (f"{self.key} {verb} meanwhile ({self.reference:.4g} → {self.latest:.4g}): "
                f"the rise is not shared by validation (a curriculum or a data mix can do "
                f"this by design)")


def _as_notice(signal: Signal) -> Signal:
    """A raise or a reassessment capped at MEDIUM, during the run and at its end."""
    if isinstance(signal, Raise):
        return replace(signal, severity=Severity.MEDIUM, severity_at_end=Severity.MEDIUM)
    if isinstance(signal, Reassess) and signal.severity.rank > Severity.MEDIUM.rank:
        return replace(signal, severity=Severity.MEDIUM)
    return signal


# A value learner's TD loss within this many times its return's square is the returns'
# scale, not the Q-values diverging (see `LossRule.observe`).
_TD_SCALE = 10.0
_TD_RETURNS = 20  # the returns it is measured against: the last this many points'

# What a new phase of the objective keeps (see `LossRule._new_phase`).
_KEPT_ACROSS_PHASES = ("rules", "_phases", "_policy_gradient", "_chance_level",
                       "_first_step", "_eval")


# How large a loss that started at exactly 0 must grow before its rise is judged.
_ZERO_START_SIZE = 0.1


class LossRule:
    """Spikes against the recent robust spread, and divergence: a loss level that rose
    beyond the run's noise and a minimum relative size over its best, and stayed there.
    A spike is not reported while the loss is diverging: that is one problem."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        # Each logged term's first size, and the terms blown up now (`_terms_blown`).
        self._term_first: dict[str, float] = {}
        self._terms_up: set[str] = set()
        self._window: deque[float] = deque(maxlen=rules.spike_window)
        self._sorted: list[float] = []  # the same values, kept sorted
        self._whole = WholeRun()  # the run's values from its first (see `relapsed_at_end`)
        self._lrs: deque[float] = deque(maxlen=5)
        self._spiking = False
        self._zero_start = False  # the first loss was exactly 0 (see `_divergence`)
        self._signs_seen = 0  # 1: a value below 0 seen, 2: one at 0 or above (both: 3)
        self._lowest = math.inf  # the lowest loss seen
        self._recovery = math.inf  # a spiked loss has recovered below this
        self._count = 0  # finite losses seen
        self._levels: deque[float] = deque(maxlen=rules.divergence_steps + 2)
        self._start: float | None = None  # the run's first level, when the log begins it
        self._start_checked = False
        self._best: float | None = None  # the lowest level so far
        self._above = 0  # consecutive levels beyond noise and min rise over the best
        self._diverging: Severity | None = None  # the severity of the open divergence
        self._eval = EvalWitness()
        self._parts = LossParts()
        self.note_vocab(rules.vocab_size)
        self._noise: deque[float] = deque(maxlen=_NOISE_POINTS)
        # The levels of a long stretch: the range the loss has held.
        self._history: deque[float] = deque(maxlen=_RANGE_POINTS)
        self._policy_gradient = False  # the loss is a policy-gradient update's surrogate
        # a value learner's latest returns (see `_grows_with_returns`)
        self._return_level: deque[float] = deque(maxlen=_TD_RETURNS)
        self._phases = PhaseWatch()
        self._means = EpochMeans()
        self._last_raw: float | None = None

    def _new_phase(self) -> None:
        """Forget the levels, the noise and the best of the phase before, as a rule made
        afresh would hold them (what was set on the instance over a class default goes
        too); the settings, the vocabulary's chance level, the policy-gradient reading,
        the count of losses seen and the phase watch stay."""
        kept = {name: self.__dict__[name] for name in _KEPT_ACROSS_PHASES
                if name in self.__dict__}
        seen = self.seen_losses
        self.__dict__.clear()
        self.__dict__.update(LossRule(kept["rules"]).__dict__)
        self.__dict__.update(kept)
        # A new phase warms up as a fresh run does (its noise unknown, its first points
        # few); the losses judged before it still count as seen.
        self._before_phase = seen

    @property
    def seen_losses(self) -> int:
        """The finite losses this rule has judged (in every phase of the objective)."""
        return self._count + self._before_phase

    def rise_over_best(self) -> float | None:
        """How far the loss level now stands above its best, as a share of the best (0.2:
        20 % above), for a rise that stays below where the run started and below a random
        guess's loss, and that validation does not share; None otherwise (no level yet, a
        best at or below zero, a loss back above its start, or validation worse too: a
        broken run whatever the share)."""
        if not self._levels or self._best is None or self._best <= 0 or self._above_start \
                or self._eval.shares(self.rules.eval_recovery_tolerance):
            return None
        return self._levels[-1] / self._best - 1

    def relapsed_at_end(self) -> str | None:
        """Why the run ended undone, though every divergence it had was resolved: the loss
        came back near its best only on a point or two (a summed loss's short last window
        of an epoch, NCRF++'s `Instance: 39604` of 104 instances after windows of 500 at
        7e4) and its level, the median of its last points, ended over `RUNAWAY_TIMES` ×
        its best and above where the run started. None otherwise."""
        if self._diverging is not None or self._recovered_peak == -math.inf \
                or self._count < _SHORT_RUN or not self._levels or self._best is None \
                or self._best <= 0:
            return None
        # Far above the best, and far above the run's usual loss (the median of all its
        # points): a noisy loss whose best was one lucky stretch (a video model's batches
        # from three datasets, 0.017-0.21) ends near its usual level.
        usual = self._whole.median() or self._best
        level = self._levels[-1]
        if level <= RUNAWAY_TIMES * max(self._best, usual) \
                or (self._start is not None and level <= self._start):
            return None
        started = "" if self._start is None \
            else f" and above where it started ({self._start:.4g})"
        return (f"divergence: the run ended with its loss level (median of its last points) "
                f"at {level:.4g}, {level / self._best:.3g}× its best level {self._best:.4g}"
                f"{started}: the falls that resolved its rises did not last, and the training "
                f"ended undone")

    def observe(self, point: Observation) -> Sequence[Signal]:
        if not self._policy_gradient and point.metrics:
            self._policy_gradient = no_progress.policy_gradient(point.metrics)
        phase = self._phases.changed(point.metrics) if point.metrics and point.loss is not None \
            else None
        resolved: list[Signal] = []
        if phase is not None:
            # Another objective from here (see `phases`): its loss is judged against its
            # own levels, not the last phase's.
            if self._diverging is not None:
                resolved.append(Resolve(AnomalyType.DIVERGENCE,
                                        f"the run's objective changed ({phase})"))
            self._new_phase()
        self._note_return(point)
        found = self._observe(point)
        if point.loss is not None and point.metrics:
            found = [*found, *self._terms_blown(point)]
        if resolved:
            found = [*resolved, *found]
        if found and not self._policy_gradient and self._grows_with_returns(point):
            # A value learner's TD loss is a mean squared error of its TD errors, which
            # scale with the returns it predicts: PyMARL's VDN at 0.0000 while every
            # episode scored 0, then 0.16 once they scored 0.37. A rise that stays within
            # `_TD_SCALE` times the square of its largest recent return is the returns
            # growing, a notice; the Q-values diverging leave it far behind (QMIX's 5.7e5
            # beside returns of 5):
            # held at a notice, so that the rise is said again once it leaves the scale.
            if self._diverging is not None and self._diverging.rank > Severity.MEDIUM.rank:
                self._diverging = Severity.MEDIUM
            return [_as_notice(s) for s in found]
        if not self._policy_gradient or not found:
            return found
        # A policy-gradient learner's loss (PPO's `train/loss`: its clipped surrogate plus
        # a value loss that scales with the returns) jumps whenever the returns do, a
        # better policy included: a notice, never the alarm; the return says whether the
        # policy learns (learning_rules).
        return [_as_notice(s) for s in found]

    def _terms_blown(self, point: Observation) -> list[Signal]:
        """A logged term of the loss past `loss_blowup` from a modest size, a million times
        smaller or less (bayou's `KL_loss: 13.235`, then `2373605231228486.000` two hundred
        steps on, its headline `loss` falling all the while because it leaves the KL
        out): the model's latent blew up, whatever the total says. Open until the term
        is back within a hundredth of the blow-up size."""
        limit = self.rules.loss_blowup
        out: list[Signal] = []
        for key, value in point.metrics.items():
            if not is_term(key) or not math.isfinite(value) or value == point.loss:
                continue
            if key in self._terms_up:
                if abs(value) < limit / 100:
                    self._terms_up.discard(key)
                    out.append(Resolve(AnomalyType.DIVERGENCE, f"{key} back to {value:.4g}",
                                       key=f"term {key}"))
                continue
            modest = self._term_first.setdefault(key, abs(value))
            if abs(value) > limit and modest * _ORDERS_JUMP < abs(value) \
                    and len(self._terms_up) < _MAX_TERMS_UP:
                self._terms_up.add(key)
                out.append(Raise(AnomalyType.DIVERGENCE,
                                 f"divergence: {key}, a term of the loss, is {value:.3g} from "
                                 f"{modest:.4g} at the run's start: its numbers have blown up, "
                                 f"whatever the total ({point.loss:.4g}) says",
                                 key=f"term {key}", severity=Severity.BLOCKER))
        return out

    def _note_return(self, point: Observation) -> None:
        """Keep a value learner's latest returns, every point (see `_grows_with_returns`)."""
        if point.loss is None or not point.metrics \
                or not no_progress.value_learner(point.metrics):
            return
        key = no_progress.return_key(point.metrics)
        value = point.metrics.get(key) if key is not None else None
        if value is not None and math.isfinite(value):
            self._return_level.append(value)

    def _grows_with_returns(self, point: Observation) -> bool:
        """Whether the point is a value learner's whose loss stays within the scale its
        latest returns give it (see `observe`)."""
        if point.loss is None or not self._return_level \
                or not no_progress.value_learner(point.metrics):
            return False
        # The largest return lately seen: the targets its TD errors are measured against
        # come from the replayed episodes, the best of them included.
        level = max(abs(v) for v in self._return_level)
        return level != 0 and abs(point.loss) <= _TD_SCALE * level * level

    def _observe(self, point: Observation) -> Sequence[Signal]:
        if point.lr is not None and math.isfinite(point.lr):
            self._lrs.append(point.lr)
        if point.metrics:
            self._eval.observe(point)
        value = point.loss
        if value is None or not math.isfinite(value):
            return []
        if self._last_raw == value:
            # The same value printed again (a bar's postfix lagging a step, a summary
            # line): one point. A loss truly identical step after step is the
            # not-learning rule's.
            return []
        self._last_raw = value
        if not self._start_checked:
            self._start_checked = True
            # (a log that prints no step begins the run when its first record is in the
            # first epoch: a Keras CSVLogger's file from its header row)
            self._start_known = point.step <= self.rules.divergence_start_steps \
                if point.step is not None else point.epoch is not None and point.epoch <= 1
        self._parts.observe(point.metrics, value)
        if self._first_step is None:
            self._first_step = point.step if point.step is not None else -1
        out: list[Signal] = []
        was_mean = self._means.running_mean
        fed = self._means.feed(point.epoch, value)
        if self._means.running_mean and not was_mean and self._spiking:
            # The jump was an epoch's first batches, before its mean settled.
            self._spiking = False
            out.append(Resolve(AnomalyType.LOSS_SPIKE,
                               "the loss shown is each epoch's running mean, which starts "
                               "again at every epoch: judged an epoch at a time from here"))
        for judged in fed:
            out.extend(self._judge(judged))
        return out

    def _judge(self, value: float) -> list[Signal]:
        """One point of the loss's trend: a spike, a recovery, divergence."""
        out: list[Signal] = []
        spike = mr.evaluate_spike(self._sorted, value, self.rules)
        early: str | None = None
        # Only in a log that begins mid-run (an excerpt, a resume): the first prints from
        # a run's start jump about on their own (1.7-3× in healthy logs' first steps).
        first_step = -1 if self._first_step is None else self._first_step
        if spike is None and not self._spiking and (
                first_step > self.rules.divergence_start_steps
                or jumps_from_start(self._window, value)):
            early = few_point_jump(list(self._window), value, self.rules.spike_min_points)
            if early is not None:
                spike = (early, max(self._window) * (1 + self.rules.spike_min_rise))
        if spike is not None and not self._spiking and not self._jumped(value):
            spike = None  # a climb, not a jump: the divergence rule's to judge
        if spike is not None and not self._spiking \
                and self._parts.unshared(self.rules.spike_min_rise, jump=True) is not None:
            spike = None  # the total's weights moved, not the model (see loss_parts)
        if spike is not None and self._diverging is None:
            reason, threshold = spike
            if not self._spiking:
                # Recovered means back to where the loss was just before the spike, not
                # merely under the (wider) detection threshold.
                before = list(self._window)[-5:]
                lvl = max(before) if before else threshold
                self._recovery = min(threshold, lvl + abs(lvl) * self.rules.spike_min_rise)
            if self._spiking and self._early_spike and early is None:
                # The run has since logged enough to know its noise, and the loss is
                # still far above it: the notice becomes the catalogue's alarm.
                self._early_spike = False
                out.append(Reassess(AnomalyType.LOSS_SPIKE, Severity.HIGH,
                                    f"loss spike: {reason}"))
            else:
                if not self._spiking:
                    self._early_spike = early is not None
                out.append(Raise(AnomalyType.LOSS_SPIKE,
                                 f"loss spike: {reason}{self._lr_note()}",
                                 severity=Severity.MEDIUM if self._early_spike else None))
            if not self._spiking:
                self._spike_value = value
            self._spiked_for = self._spiked_for + 1 if self._spiking else 0
            self._spiking = True
        elif self._spiking and value < self._recovery:
            self._spiking = False
            out.append(Resolve(AnomalyType.LOSS_SPIKE, f"loss back to {value:.4g}"))
        elif self._spiking:
            self._spiked_for += 1  # points the loss has stayed up since its spike
        if len(self._window) == self._window.maxlen:
            del self._sorted[bisect.bisect_left(self._sorted, self._window[0])]
        self._window.append(value)
        self._noise.append(value)
        bisect.insort(self._sorted, value)
        self._whole.add(value)
        self._count += 1
        out.extend(self._divergence(value))
        return out

    def _jumped(self, value: float) -> bool:
        """A spike is a jump: the value far above the last few points, by more than the
        run's point-to-point noise allows (a loss wandering slowly up a band for fifty
        points also ends far above the window's median, without any jump)."""
        window = self._window
        last = max(window[-i] for i in range(1, min(3, len(window)) + 1))
        return value - last > self.rules.spike_k * trends.noise_scale(list(window))

    # --- divergence ----------------------------------------------------------------------

    def _divergence(self, value: float) -> list[Signal]:
        rules = self.rules
        if self._start is None and self._start_known:
            self._start = value  # the loss the run started from
        if value > rules.loss_blowup:
            return self._raise_or_reassess(
                Severity.BLOCKER, f"loss is {value:.3g}: the numbers have blown up")
        if self._runaway:
            # Open until the loss is back within a hundredth of that size: a run that
            # reached −1e9 and now prints −6e7 has not come back.
            if value < -rules.loss_blowup / 100:
                return self._still_running_away(value)
            self._runaway = False
            self._diverging = None
            return [Resolve(AnomalyType.DIVERGENCE, f"loss back to {value:.4g}")]
        if value < -rules.loss_blowup:
            self._runaway = True
            self._runaway_first = value
            before = list(self._window)[-4:-1]
            if before and max(abs(v) for v in before) * _ORDERS_JUMP < -value:
                # From a modest size to past −1e8 in one print (EESEN's CTC objective
                # −8.7 then −8.6e29, its token accuracy 97 % → 19 %): no objective without
                # a floor drifts that way; the numbers blew up.
                return self._raise_or_reassess(
                    Severity.BLOCKER, f"loss is {value:.3g}, from {before[-1]:.4g} the "
                                      f"print before: the numbers have blown up")
            # A loss that may be negative by design (the NLL of a continuous density, a
            # critic's) runs away downwards when its objective has no floor: a variance
            # collapsing to 0, a critic without a penalty. Only an absurd size says so.
            return self._raise_or_reassess(
                Severity.HIGH, f"loss is {value:.3g}: it runs away towards −∞ (an objective "
                               f"with no floor: a likelihood whose variance collapses, an "
                               f"unconstrained critic)")
        if self._count == 1:
            self._zero_start = value == 0.0
        self._signs_seen |= 1 if value < 0 else 2
        self._lowest = min(self._lowest, value)
        if self._count < 3 or (self._zero_start and abs(value) < _ZERO_START_SIZE):
            # (a loss that starts at exactly 0 is 0 by construction at the start — a
            # policy's surrogate, a KL to the reference model: Tunix GRPO's `training
            # loss: 0.000000`, then 0.000013 by step 8 — and its rise measures no fit;
            # only a size that matters, or the numbers blowing up, says anything)
            return []
        window = self._window
        if value < 0 and (_ascending_to_zero(window) or (
                self._signs_seen == 1 and value > self._lowest / _NEGATED_SHRINK)):
            # A negative objective climbing towards 0 by ever smaller steps is a
            # likelihood being maximised, printed as a cost (Theano's RBM pre-training:
            # `cost -85.22`, -52.69, -48.42, -45.45, -43.05): learning's curve upside down.
            # A loss that diverges speeds up as it climbs. Nor is a figure below 0 on every
            # print from the first that climbed to a tenth of its lowest or nearer 0: an
            # error negated, falling by orders of magnitude (pytorch-tabnet's early `train`
            # column is the negated MSE, -44154 up to -112 as it learns); a likelihood
            # that worsens moves by a fraction (a Kalman model's -109 back to -69).
            return []
        short = self._count < _SHORT_RUN
        width = 3 if short else _LEVEL_WIDTH
        now = statistics.median([window[-i] for i in range(1, min(width, len(window)) + 1)])
        levels = self._levels
        levels.append(now)
        self._history.append(now)
        need = 2 if short else rules.divergence_steps
        # The best is the lowest level *held* for `need` points: the lowest single
        # level of a long noisy plateau is an outlier of its own, and measuring from it
        # would call the plateau's ordinary wander a rise.
        held = max(levels[-i] for i in range(1, need + 1)) if len(levels) >= need else now
        if self._best is None or held < self._best:
            self._best = held
            self._eval.train_best()
        best = self._best
        least = rules.divergence_min_rise * (2 if short else 1)
        # The cheap test first: most points of a healthy run are nowhere near a rise
        # (every test below needs at least this much over the best).
        rising = now - best > abs(best) * least
        if self._above == 0 and self._lasting == 0 and self._diverging is None \
                and self._count - self._sigma_at >= (5 if rising else _NOISE_EVERY):
            # The noise is measured outside an excursion: a loss that explodes
            # (5 → 23 → 401 → 3.6e6) must not count its own climb as noise, so it is
            # taken before this point and held while the level stays up. Over a long
            # stretch (`_noise`): a short window's estimate is low now and then, and
            # exactly then a wander would look like a rise.
            earlier = list(self._noise)[:-1]
            self._sigma = trends.noise_scale(earlier)
            # The scale a level moves by on its own: the noise of single points, times
            # how slowly the series wanders (a smoothed loss drifting within a band).
            self._level_sigma = self._sigma * trends.persistence(earlier, self._sigma)
            self._sigma_at = self._count
        sigma = self._level_sigma
        # Few points say little about the noise: a short run needs twice the rise.
        bar = near = trends.threshold(best, sigma, rules.divergence_noise_k, least)
        judged = self._count >= 4
        if not short:
            # Against the best, only a large rise counts (the lowest level of a long
            # noisy run is an outlier of its own); smaller ones by the shift test.
            bar = trends.threshold(best, sigma, rules.divergence_noise_k,
                                   rules.divergence_level)
        self._above = self._above + 1 if judged and now - best > bar else 0
        # A smaller shift counts when it is sustained: the median of the last points
        # against the median of the stretch before them, judged by the noise of a
        # difference of two medians (σ·1.25·√(1/n₁ + 1/n₂)), so that averaging over
        # the points makes a lasting 3σ shift stand out where one level cannot.
        shifted = judged and (rising or self._lasting > 0) and self._shifted(self._sigma, least)
        self._lasting = self._lasting + 1 if shifted else 0
        falling = len(self._levels) > need and now < self._levels[-need - 1]
        self._track_above_start(now, sigma, self._coming_back(now, need) if falling else False)
        # However long the run, a loss that rose at every one of its last `_LONG_CLIMB`
        # points, by twice the least rise over the climb, is a trend no noise makes: a
        # translation model's epoch loss 2.073 → 2.533 over its last twenty epochs, each
        # above the one before (an LR schedule gone wrong), never near 2× its best.
        climb = self._climb_length()
        long = climb >= _LONG_CLIMB and value - self._window[-climb - 1] \
            > abs(self._window[-climb - 1]) * 2 * least
        self._long_climb = long
        # A loss that jumped above its start before a level could be taken (a fine-tune
        # at 3.75, then 11.7, 15.0, and 7.7 ever after) has its best up there: near it
        # is no recovery while the start stays far below.
        settled_above = self._above_start > need and self._start is not None \
            and 0 < self._start < best - near
        if self._diverging is not None:
            self._excursion_peak = max(self._excursion_peak, value)
            # Back near its best (this point, not only the level: the level lags).
            if value <= best + near and not long and not settled_above:
                self._diverging = None
                self._above = self._above_start = self._lasting = 0
                self._recovered_peak = max(self._recovered_peak, self._excursion_peak)
                self._excursion_peak = -math.inf
                return [Resolve(AnomalyType.DIVERGENCE, f"loss fell again to {value:.4g}")]
            severity, why = self._severity(need)
            if severity is not self._diverging:
                self._diverging = severity
                return [Reassess(AnomalyType.DIVERGENCE, severity, why)]
            return []
        if self._lasting >= need:
            self._above = max(self._above, self._lasting)
        full = self._climbing(least, rules.divergence_steps + 2)
        # A short excerpt has fewer points to climb over: a rise at each of its last
        # `need` + 1 points counts once the climb has left the run's own noise (4σ
        # measured before it) behind, not on its size alone (a TF2 Object Detection
        # loss 1.20 → 1.77 → 2.16 → 2.37 after six points within 1.19-1.44).
        brief = short and sigma > 0 and value - best > bar and self._climbing(least, need + 2)
        if long:
            self._above = max(self._above, climb)
        if (full and (self._count < _SPARSE_RUN or value - best > bar)) or brief:
            # Too few points for a level to catch up or for the noise to be known: a
            # loss that rose at every one of its last points, by a large total, is the
            # trend itself (6.37 → 6.60 → 7.31 → 9.12 → 10.24 in a five-line excerpt).
            # So is a long run's loss climbing at each of its last points to far above
            # its best at the end of the log (1.30 → 1.60 → 4.73 → 12.6 → 14.6), before
            # the level has caught up with it.
            self._above = max(self._above, need)
        # Back above where the run started (or above a random guess's loss) and staying
        # there is a divergence whatever the noise tests say: its consequence decides.
        climbed = self._above_start > need
        # A spike the next point rose above again is no bad batch that passes: the loss
        # is climbing from it (MindYOLO's `lcls` 3.90 → 8705 → 15800 under loss-scale
        # overflow), and the divergence need not wait for the spike to last.
        waiting = self._spiking and self._spiked_for < need and value <= self._spike_value
        if self._spiking and not waiting and self._exploded(value):
            climbed = True  # two points in a row orders of magnitude up: no noise does that
        if (self._above < need and not climbed) or (falling and not settled_above) or waiting \
                or (value <= best + near and not long and not settled_above):
            # Not yet; or the level (or this very point) is already coming back down;
            # or a spike that has not recovered, which is already this excursion's story
            # (until the loss has stayed up for as long as a divergence needs: then it
            # never came back, and the run diverged from that jump).
            return []
        severity, why = self._severity(need)
        if severity is Severity.LOW and self._above < 3 * need:
            return []  # a rise validation does not share is worth a notice once it lasts
        if settled_above and now <= best + near:
            return self._raise_or_reassess(
                severity, f"the loss level (median of the last {width} points) is "
                          f"{now:.4g}, {now / (self._start or 1.0):.2g}× its start; {why}")
        if now <= best + near:
            # The climb itself, its level not caught up yet (a sparse log's last points).
            rose = list(self._window)[-max(self.rules.divergence_steps + 2, climb + 1):]
            return self._raise_or_reassess(
                severity, f"the loss rose at each of its last {len(rose)} points "
                          f"({' → '.join(f'{v:.4g}' for v in rose)}), "
                          f"{_above(value, best)} its best level "
                          f"{best:.4g}, before a level of {width} points could show it; "
                          f"{why}")
        return self._raise_or_reassess(
            severity, f"the loss level (median of the last {width} points) rose to {now:.4g} "
                      f"from its best {best:.4g} and stayed there for "
                      f"{max(self._above, self._above_start)} logged "
                      f"points, beyond the run's noise (σ≈{sigma:.2g}); {why}")

    def _exploded(self, value: float) -> bool:
        """The spike and the point after it, higher still, both `_EXPLODED` times the
        level the run started from (its best held level, for a log that begins mid-run):
        the loss did not come back from its jump, it went on up."""
        reference = self._start if self._start is not None else self._best
        return reference is not None and reference > 0 \
            and self._spike_value > _EXPLODED * reference and value > self._spike_value

    def _climbing(self, least: float, width: int) -> bool:
        """The last `width` values each above the one before, the last above the first
        by `least` of it."""
        window = self._window
        if len(window) < width:
            return False
        tail = [window[i] for i in range(len(window) - width, len(window))]
        return all(b > a for a, b in pairwise(tail)) \
            and tail[-1] - tail[0] > abs(tail[0]) * least

    def _climb_length(self) -> int:
        """How many of the last values in a row were each above the one before."""
        window = self._window
        rises = 0
        for i in range(len(window) - 1, 0, -1):
            if not window[i] > window[i - 1]:
                break
            rises += 1
        return rises

    def _shifted(self, sigma: float, least: float) -> bool:
        """The last `_SHIFT_POINTS` values sit above the ones before them by more than
        the noise of the difference of their medians allows, and by `least` of them."""
        window = list(self._window)
        recent, before = window[-_SHIFT_POINTS:], window[:-_SHIFT_POINTS]
        if len(before) < _SHIFT_POINTS or sigma <= 0:
            return False
        base = trends.level(before, len(before))
        now = trends.level(recent, _SHIFT_POINTS)
        # Medians of points that follow each other closely (a smoothed loss wandering
        # slowly) vary far more than those of independent points: the spread of the
        # values against that of their changes tells how much (for AR(1) noise,
        # σ_changes = σ_values·√(1-φ)), and the effective number of points shrinks by
        # (1-φ)/(1+φ).
        inflate = trends.persistence(before, sigma)
        noise = 1.2533 * max(sigma, trends.spread(before)) * inflate * \
            math.sqrt(1 / len(before) + 1 / _SHIFT_POINTS)
        if not trends.beyond_noise(now - base, base, noise, self.rules.divergence_noise_k,
                                   least):
            return False
        # And above the range the loss has held since it first came near its best: a
        # loss that wanders slowly within a band (a smoothed fine-tune loss, 0.42-0.65)
        # shifts between stretches all the time, but a divergence leaves its range.
        history = list(self._history)[:-_SHIFT_POINTS]
        best = self._best if self._best is not None else base
        near = next((i for i, lvl in enumerate(history) if lvl <= best + abs(best) * least),
                    None)
        if near is None:
            return True
        return now > max(history[near:]) + sigma

    def _coming_back(self, now: float, need: int) -> bool:
        """Whether the level, falling, would be back at the run's start within
        `_BACK_WITHIN` points at the pace of its last `need` (a spike draining away); a
        loss that settled far above its start and drifts down by a few hundredths a point
        (8.5 → 7.7 over twenty points, started at 3.75) is not coming back."""
        start = self._start
        if start is None or now <= start:
            return True
        pace = (self._levels[-need - 1] - now) / need
        return pace > 0 and (now - start) / pace <= _BACK_WITHIN

    def _track_above_start(self, now: float, sigma: float, falling: bool) -> None:
        """Count the levels in a row that sit above where the run started (or above a
        random guess's loss) and are not coming back down (`falling`: back soon)."""
        start, chance, k = self._start, self._chance_level, self.rules.divergence_noise_k
        above = (start is not None and trends.beyond_noise(
            now - start, start, sigma, k, self.rules.divergence_blocker_rise)) or \
            (chance is not None and now > chance + sigma)
        self._above_start = self._above_start + 1 if above and not falling else 0

    def _still_running_away(self, value: float) -> list[Signal]:
        """A loss already past −1e8 that grows by two more orders of magnitude: whatever
        the objective, nothing that settles does that; the numbers are blowing up as
        surely as a loss past +1e8 (a TF1 captcha CNN's `loss = -25622784000.0000`, then
        -1.4e12, then -1.2e13, one predicted string for the whole batch). A blocker."""
        first = self._runaway_first
        if value > _RUNAWAY_GROWTH * first:
            return []
        return self._raise_or_reassess(
            Severity.BLOCKER, f"loss is {value:.3g}, {value / first:.3g}× the {first:.3g} "
                              f"it had first run away to: the numbers are blowing up "
                              f"towards −∞")

    def _raise_or_reassess(self, severity: Severity, description: str) -> list[Signal]:
        if self._diverging is None:
            self._diverging = severity
            return [Raise(AnomalyType.DIVERGENCE, f"divergence: {description}",
                          severity=severity)]
        if severity.rank > self._diverging.rank:
            self._diverging = severity
            return [Reassess(AnomalyType.DIVERGENCE, severity, description)]
        return []

    def _severity(self, need: int) -> tuple[Severity, str]:
        """How much a rise matters: a notice when validation does not share it; a
        blocker once the loss has stayed above where the run started, or above what
        a model guessing at random scores (ln of the vocabulary), without coming back
        for one point more than a divergence needs; otherwise high. A blocker stays one
        until the loss is back near its best."""
        unshared = self._eval.unshared(self.rules.eval_recovery_tolerance) \
            or self._parts.unshared(self.rules.divergence_min_rise)
        if unshared is not None:
            # (a climb at every point for `_LONG_CLIMB` points that validation merely held
            # through is a doubt on the result; one it improved through is a curriculum's
            # or a data mix's, by design)
            held = not self._eval.improved(self.rules.eval_recovery_tolerance)
            return (Severity.HIGH if self._long_climb and held else Severity.LOW), unshared
        if self._diverging is Severity.BLOCKER:
            return Severity.BLOCKER, "still far above its best"
        lowest = self._sorted[0] if self._sorted else 0.0
        if lowest > 0 and self._levels and self._levels[-1] > _BLOWN_UP * lowest:
            # Orders of magnitude above anything the run had reached (0.14 → 2e5): no
            # schedule or noise does that; the weights have blown up, wherever the log
            # began and however few points it holds.
            return Severity.BLOCKER, (
                f"it sits {self._levels[-1] / lowest:.3g}× above the lowest loss the run "
                f"reached ({lowest:.4g}): the weights have blown up")
        best = self._best
        runaway = running_away(self._window, best, need) \
            if best is not None else None
        if runaway is not None and self._levels[-1] <= self._recovered_peak:
            # A height the loss has climbed to before and come back from (a full-batch
            # multi-environment PINN whose loss leaves 0.05 for 1-2 every few hundred
            # epochs and returns): the run's own wander, alarming but not yet undone.
            runaway = None
        if runaway is not None:
            # Whatever the run learned before the log began is being undone, wherever
            # the excerpt starts (runaway).
            return Severity.BLOCKER, f"it has been {runaway}: the training is running away"
        if self._above_start > need:
            chance = self._chance_level
            if self._start is not None and self._levels[-1] > self._start:
                return Severity.BLOCKER, (
                    f"it has stayed above where the run started ({self._start:.4g}) for "
                    f"{self._above_start} logged points without coming back: the training "
                    f"has undone itself")
            if chance is not None:
                return Severity.BLOCKER, (
                    f"it has stayed above ln(vocabulary) = {chance:.4g}, what a model "
                    f"guessing at random scores, for {self._above_start} logged points")
        return Severity.HIGH, "still rising or holding"

    _chance_level: float | None = None
    _long_climb = False  # the latest point ends a climb of `_LONG_CLIMB` rises or more
    _before_phase = 0  # finite losses judged in the phases before this one
    _start_known = False
    _sigma = 0.0
    _level_sigma = 0.0
    _sigma_at = 0  # the point the noise was last measured at
    _above_start = 0
    _runaway = False  # the loss ran away towards −∞
    _runaway_first = 0.0  # the loss when it first ran away past −1e8
    _spiked_for = 0  # points since the open spike, the loss still up
    _spike_value = math.inf  # the loss the open spike was raised at
    _excursion_peak = -math.inf  # the highest loss of the open divergence
    _recovered_peak = -math.inf  # the highest loss of a divergence the run came back from
    _early_spike = False  # the open spike was judged on too few points (a notice)
    _first_step: int | None = None  # the step of the log's first loss (-1: none printed)
    _lasting = 0  # consecutive levels beyond a lower bar, for a shift that lasts

    def note_vocab(self, vocab_size: int | None) -> None:
        """The model's vocabulary: ln(vocab) is the loss of a uniform guess."""
        if vocab_size is not None and vocab_size > 1:
            self._chance_level = math.log(vocab_size)

    def recent(self, count: int) -> list[float]:
        return list(self._window)[-count:]

    def _lr_note(self) -> str:
        """A spike right after the learning rate went up may be a planned schedule
        change (a warm restart) or an LR bug; the log cannot tell which, so say it."""
        if len(self._lrs) < 2:
            return ""
        low = min(self._lrs)
        if low > 0 and self._lrs[-1] > 1.5 * low:
            return (f"; it follows a learning-rate increase {low:.3g} → {self._lrs[-1]:.3g} "
                    f"(expected only if that is a planned warm restart)")
        return ""


_ASCENT_POINTS = 4  # the last points a likelihood's ascent is judged over
_ASCENT_EASING = 1.1  # each step up at most this many times the one before


_NEGATED_SHRINK = 10.0  # a negative figure this many times nearer 0 than its lowest


def _ascending_to_zero(window: Sequence[float]) -> bool:
    """Whether the last points are all below 0 and each above the one before by no more
    than the step before it (easing towards 0): a likelihood maximised, not a loss
    diverging."""
    if len(window) < _ASCENT_POINTS:
        return False
    tail = [window[i] for i in range(len(window) - _ASCENT_POINTS, len(window))]
    steps = [b - a for a, b in pairwise(tail)]
    return tail[-1] < 0 and min(steps) > 0 \
        and all(later <= _ASCENT_EASING * earlier for earlier, later in pairwise(steps))


def _above(value: float, best: float) -> str:
    """How far a value stands above a best level, as a share of it where it has one (a
    policy loss's best is often exactly 0: then by how much)."""
    if best > 0:
        return f"{100 * (value / best - 1):.0f} % above"
    return f"{value - best:.4g} above"

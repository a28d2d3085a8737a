"""Pure evaluators over metric series. Each returns a short explanation when its
rule fires, or None. None of them keep state or look at the clock."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from itertools import pairwise

from babysit.config import RuleSettings
from babysit.model import line_value
from babysit.rules import eval_trends, throughput_trends

# Scale factor that makes the median absolute deviation estimate the standard
# deviation of normally distributed noise.
_MAD_TO_SIGMA = 1.4826


def nonfinite_metrics(metrics: Mapping[str, float]) -> list[str]:
    """Names of metrics whose value is NaN or ±Inf."""
    return [k for k, v in metrics.items() if not math.isfinite(v)]


def evaluate_spike(ordered: Sequence[float], value: float,
                   rules: RuleSettings) -> tuple[str, float] | None:
    """A loss far above its recent robust spread. `ordered` is the recent window
    sorted ascending (the caller keeps it sorted, so the median is a lookup).

    With m the median of the window and s = 1.4826·MAD (a standard deviation that a
    few outliers cannot inflate), the value spikes when it exceeds m + k·s *and*
    rises at least `spike_min_rise` relative to m; the second test keeps a flat,
    nearly noise-free loss from calling every wiggle a spike.

    Returns (explanation, threshold): the loss has recovered once it is back under
    the threshold."""
    if not math.isfinite(value):
        return None
    if len(ordered) < rules.spike_min_points:
        return _explosion(ordered, value) or _short_spike(ordered, value, rules)
    median = sorted_median(ordered)
    if value <= median + abs(median) * rules.spike_min_rise:
        return None  # cheap test first: most points end here
    mad = statistics.median(abs(x - median) for x in ordered)
    sigma = max(_MAD_TO_SIGMA * mad, 1e-12)
    threshold = max(median + rules.spike_k * sigma, median + abs(median) * rules.spike_min_rise)
    if value <= threshold or _within_multiplicative_noise(ordered, value, rules.spike_k):
        return None
    return (f"loss {value:.4g} vs recent median {median:.4g} "
            f"({(value - median) / sigma:.3g} robust σ above, window of {len(ordered)})",
            threshold)


_MULTIPLICATIVE = 0.3  # σ of log10(loss): a factor of two between points is usual


def _within_multiplicative_noise(ordered: Sequence[float], value: float, k: float) -> bool:
    """Whether a positive loss whose noise is multiplicative (a summed CRF NLL swinging
    0.001-1700 from batch to batch, a full-batch multi-task loss jumping 2-5x between
    epochs) is within k of its robust spread measured in orders of magnitude. On a
    linear scale such a loss "spikes" every few dozen points; on a log scale a real spike
    still stands out (0.5 -> 5 on a loss steady to 2 % is a hundred log-σ)."""
    if ordered[0] <= 0 or value <= 0:
        return False
    logs = [math.log10(x) for x in ordered]
    middle = statistics.median(logs)
    sigma = _MAD_TO_SIGMA * statistics.median(abs(x - middle) for x in logs)
    # Only a noise that is multiplicative: a typical factor of two between points or more
    # (the CRF's spread is 0.6 orders of magnitude; a DeepLab loss wandering 0.41-1.82 is
    # 0.18, and its 5.13 after a checkpoint write stays a spike).
    return sigma >= _MULTIPLICATIVE and math.log10(value) - middle <= k * sigma


# A jump this many times the largest loss before it: no noise explains two orders of
# magnitude, so even a log too short to know its noise shows a spike.
_EXPLOSION = 100.0
_LONE_EXPLOSION = 1e4  # the same, after a single point
_LEVEL_SPAN = 2.0  # the points before it within this factor of each other: a level


def _explosion(ordered: Sequence[float], value: float) -> tuple[str, float] | None:
    """A short log's spike: a positive value `_EXPLOSION` times above every one of the
    (at least two) points before it, which held a level (0.62, 1.01, then 225192). Points
    that already climbed (5, 23, 401, then 3.6e6) are a divergence's, not a jump's."""
    if len(ordered) == 1 and ordered[0] > 0 and value > _LONE_EXPLOSION * ordered[0]:
        # One point before says nothing of a level, but four orders of magnitude in
        # one step (0.144, then 25237) is no loss's noise.
        return (f"loss {value:.4g} is {value / ordered[0]:.3g}× the point before it "
                f"({ordered[0]:.4g}): an explosion", _EXPLOSION * ordered[0])
    if len(ordered) < 2:
        return None
    largest = max(abs(ordered[0]), abs(ordered[-1]))
    smallest = min(abs(v) for v in ordered)
    if largest <= 0 or value <= _EXPLOSION * largest or largest > _LEVEL_SPAN * smallest:
        return None
    return (f"loss {value:.4g} is {value / largest:.3g}× the largest of the {len(ordered)} "
            f"points before it ({largest:.4g}): an explosion", _EXPLOSION * largest)


_SHORT_SPIKE_POINTS = 4  # points of a held level before a short log's jump is judged
_SHORT_LEVEL_SPAN = 1.1  # a level: the points before within 10 % of each other


def _short_spike(ordered: Sequence[float], value: float,
                 rules: RuleSettings) -> tuple[str, float] | None:
    """A short log's jump off a level it held: four points or more within 10 % of each
    other (0.0475 … 0.0471 over five epochs), then one above their largest by
    `spike_min_rise` of their median and by `spike_k` times their robust spread (at
    least 1 % of the level: a loss printed to three digits has no spread)."""
    if len(ordered) < _SHORT_SPIKE_POINTS or ordered[0] <= 0 \
            or ordered[-1] > _SHORT_LEVEL_SPAN * ordered[0]:
        return None
    median = sorted_median(ordered)
    mad = statistics.median(abs(x - median) for x in ordered)
    sigma = max(_MAD_TO_SIGMA * mad, 0.01 * median)
    threshold = max(ordered[-1] + rules.spike_k * sigma, median * (1 + rules.spike_min_rise))
    if value <= threshold:
        return None
    return (f"loss {value:.4g} jumped off the level {median:.4g} its {len(ordered)} points "
            f"before held ({100 * (value / median - 1):.0f} % above it)", threshold)


def sorted_median(ordered: Sequence[float]) -> float:
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def evaluate_grad_explosion(previous: Sequence[float], value: float,
                            rules: RuleSettings) -> str | None:
    """grad_norm above an absolute ceiling, or far above the mean of its recent past."""
    if not math.isfinite(value):
        return None
    window = previous if len(previous) <= rules.grad_norm_window \
        else list(previous)[-rules.grad_norm_window:]
    # The absolute ceiling is for a norm that jumps there, not for a model whose norms
    # always run that high (detection heads summing many losses sit near 1000).
    known = len(window) >= 5
    ceiling = rules.grad_norm_max if known else 10 * rules.grad_norm_max
    if value > ceiling and (not known or statistics.median(window) < rules.grad_norm_max / 3):
        return f"grad_norm {value:.4g} > {ceiling:g}"
    if len(window) >= 5:
        mean = sum(window) / len(window)  # the caller keeps only finite values
        if mean > 0 and value > rules.grad_norm_ratio * mean:
            return (f"grad_norm {value:.4g} is {value / mean:.0f}× the mean of the previous "
                    f"{len(window)} values ({mean:.3g})")
    return None


def evaluate_eval_degradation(evals: Sequence[tuple[float, float | None]], direction: int,
                              rules: RuleSettings) -> str | None:
    """An eval metric getting worse beyond its own noise while the training loss
    improved over the same stretch (overfitting, or a broken eval); see eval_trends.
    `evals` holds (eval value, train loss at that time) in order."""
    return eval_trends.degradation(evals, direction, rules)


def evaluate_throughput(samples: Sequence[float], rules: RuleSettings,
                        baseline: float | None = None, short_ok: bool = True) -> str | None:
    """Recent throughput (median of the last `slow_recent_samples`) more than
    `slow_drop` below the baseline (median of the first `slow_baseline_samples`, which
    the caller may pass once it has it) *and* beyond the noise of that difference (the
    baseline samples' robust spread, `slow_noise_k` times). Medians on both sides let
    one slow step (an evaluation, a checkpoint save) pass.

    A short or sparse log (fewer samples than that, at least 3) compares its first
    third with its last: every one of the last third must be that far below, and with
    one sample a side the rate must have fallen at every logged point (85 → 142 →
    202 s per iteration). Its baseline is the slowest of the first third (a progress
    bar's first reading is often far off). Not for rates babysit measured between its
    own polls (`short_ok` False): a few of those say nothing."""
    reason = _medians_throughput(samples, rules, baseline, short_ok)
    if reason is None and short_ok:
        # Few readings, no fast start to fall from: a steady fall (throughput_trends).
        reason = throughput_trends.steady_fall(samples, rules)
    return reason


def _medians_throughput(samples: Sequence[float], rules: RuleSettings,
                        baseline: float | None, short_ok: bool) -> str | None:
    base_n, recent_n = rules.slow_baseline_samples, rules.slow_recent_samples
    count = len(samples)
    if count < base_n + recent_n:
        return _short_throughput(samples, rules) if count >= 3 and short_ok else None
    if baseline is None:
        baseline = baseline_median(samples, rules)
    recent = sorted_median(sorted(samples[-recent_n:]))
    if baseline <= 0 or recent >= baseline * (1 - rules.slow_drop):
        return None
    first = samples[:base_n]
    centre = statistics.median(first)
    spread = _MAD_TO_SIGMA * statistics.median(abs(x - centre) for x in first)
    noise = 1.2533 * spread * math.sqrt(1 / base_n + 1 / recent_n)
    if baseline - recent <= rules.slow_noise_k * noise:
        return None
    return (f"throughput {recent:.3g} is {100 * (1 - recent / baseline):.0f}% below its "
            f"baseline {baseline:.3g}")


def _short_throughput(samples: Sequence[float], rules: RuleSettings) -> str | None:
    per = max(1, len(samples) // 3)
    baseline = min(samples[:per])
    recent = samples[-per:]
    limit = baseline * (1 - rules.slow_drop)
    if baseline <= 0 or max(recent) >= limit:
        return None
    if per == 1 and not all(b <= a for a, b in pairwise(samples)):
        return None
    now = sorted_median(sorted(recent))
    return (f"throughput {now:.3g} is {100 * (1 - now / baseline):.0f}% below where this "
            f"short log began ({baseline:.3g}), falling over all {len(samples)} readings"
            if per == 1 else
            f"throughput {now:.3g} is {100 * (1 - now / baseline):.0f}% below where this "
            f"short log began ({baseline:.3g}; {per} readings a side)")


def baseline_median(samples: Sequence[float], rules: RuleSettings) -> float:
    """The throughput baseline: the median of the first `slow_baseline_samples`."""
    return sorted_median(sorted(samples[: rules.slow_baseline_samples]))


DECAYING_SCHEDULES = frozenset({"linear", "cosine", "polynomial", "inverse_sqrt", "exponential",
                                "cosine_with_min_lr", "warmup_stable_decay", "linear_decay",
                                "cosine_decay", "exponentiallr", "cosineannealinglr",
                                "linearlr", "polynomiallr", "onecyclelr"})


# A rate that fades to 0 this late in a run of known length ends its schedule; earlier,
# the schedule was sized for a shorter run than this one.
_TAIL_SHARE = 0.8
FADED = 0.01  # below this share of its peak before 0: faded, not cut
# ... or a rate that stepped down this many times since its peak, to this share of it or
# less: a decay whose last printed step above 0 is one unit of its last digit (flair's
# `lr: 0.000001` then `lr: 0.000000`, a linear decay from 5e-6 printed to six decimals).
FADED_FALLS = 3
FADED_STEPPED = 0.25


@line_value
class LrTrace:
    """What the learning rate has done so far (kept by the run, O(1) per point)."""

    current: float
    peak: float
    low_after_peak: float  # the lowest value since the peak (== peak if none since)
    zero_run: int  # consecutive logged points at exactly 0
    was_positive: bool
    rising_run: int  # consecutive logged points that went up
    # It reached 0 from below a hundredth of its peak: a decaying schedule's tail, or a
    # rate below the digits it is printed with (`lr: 0.00000` under cosine to 0).
    faded: bool = False
    falls: int = 0  # the times it went down since its peak


def evaluate_lr_schedule(trace: LrTrace, step: int | None, target: int | None,
                         schedule: str | None, rules: RuleSettings) -> str | None:
    """A learning-rate schedule not doing what it should: stuck at 0, a warm-up that
    never ends, or the rate rising again after it started to decay under a schedule
    that only decays."""
    # An lr of 0 from the start is the not-learning rule's; here, one that fell to 0.
    tail = trace.faded and (not target or step is None or step >= _TAIL_SHARE * target)
    if trace.zero_run >= rules.lr_zero_points and trace.was_positive and not tail:
        return (f"learning rate has been 0 for {trace.zero_run} logged points after being "
                f"positive: the weights are not being updated")
    if (target and step is not None and step > rules.lr_warmup_fraction * target
            and trace.rising_run >= rules.lr_zero_points and schedule != "constant"):
        return (f"learning rate still rising at step {step} of {target} "
                f"({trace.current:.3g}): the warm-up never ended (warm-up steps longer than "
                f"the run?)")
    decaying = schedule is not None and schedule.lower() in DECAYING_SCHEDULES
    if (decaying and trace.low_after_peak < trace.peak * 0.95
            and trace.current > trace.low_after_peak * (1 + rules.lr_rise_tolerance)):
        return (f"learning rate rose again to {trace.current:.3g} after decaying to "
                f"{trace.low_after_peak:.3g}, although the schedule is {schedule!r}")
    return None


def evaluate_grad_vanishing(baseline: Sequence[float], recent: Sequence[float],
                            rules: RuleSettings) -> str | None:
    """grad_norm collapsed: the last few values all far below the run's early values
    (or exactly 0), so the model has stopped learning."""
    need = rules.grad_vanish_points
    if len(recent) < need or len(baseline) < need:
        return None
    last = recent[-1]
    if last != 0 and last >= max(baseline) * rules.grad_vanish_ratio:
        return None  # the common case, decided without a median
    early = statistics.median(baseline)
    tail = list(recent)[-need:]
    # Zero from the start is the not-learning rule's; here, a norm that fell to 0.
    if all(x == 0 for x in tail) and any(x > 0 for x in baseline):
        return f"grad_norm has been 0 for {need} logged points: nothing is being learned"
    if early > 0 and all(x < early * rules.grad_vanish_ratio for x in tail):
        return (f"grad_norm vanished: the last {need} values are below "
                f"{rules.grad_vanish_ratio:g}× its early median {early:.3g}")
    return None


def evaluate_grad_collapse(baseline: Sequence[float], recent: Sequence[float]) -> str | None:
    """grad_norm a million times below where it started, two points in a row: the model
    has stopped learning at once (the loss collapsed, or the graph was cut)."""
    if not baseline or len(recent) < 2 or baseline[0] <= 0:
        return None
    floor = baseline[0] * 1e-6
    if recent[-1] <= floor and recent[-2] <= floor:
        return (f"grad_norm collapsed from {baseline[0]:.3g} to {recent[-1]:.3g}: nothing is being "
                f"learned (a loss that fell to zero, labels leaking into the inputs, or a "
                f"detached graph)")
    return None

"""Pure evaluators: each fires on its pattern and stays quiet on noise."""

from __future__ import annotations

import random

from babysit.config import RuleSettings
from babysit.rules import metric_rules as mr

RULES = RuleSettings()


def noisy(n: int, level: float = 2.0, noise: float = 0.02, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [level + rng.gauss(0, noise) for _ in range(n)]


def test_nonfinite_metrics_names_each_bad_metric():
    assert mr.nonfinite_metrics({"loss": 0.0, "grad_norm": float("nan"),
                                 "lr": float("inf")}) == ["grad_norm", "lr"]


def test_spike_far_above_the_robust_spread_fires():
    assert mr.evaluate_spike(sorted(noisy(50)), 6.0, RULES) is not None


def test_ordinary_noise_is_not_a_spike():
    window = sorted(noisy(50, noise=0.05))
    assert all(mr.evaluate_spike(window, x, RULES) is None for x in noisy(200, noise=0.05,
                                                                          seed=2))


def test_flat_loss_needs_a_real_relative_rise_to_spike():
    window = [1.0] * 50  # MAD is zero: any wiggle is "infinitely many sigma" away
    assert mr.evaluate_spike(window, 1.05, RULES) is None
    assert mr.evaluate_spike(window, 1.5, RULES) is not None


def test_spike_needs_enough_history():
    # Three points say nothing of a level; from four on, a jump off a level they held
    # is a short log's spike (issue 24: Keras 1's 0.047 for five epochs, then 0.061).
    assert mr.evaluate_spike([2.0] * 3, 50.0, RULES) is None
    assert mr.evaluate_spike(sorted([2.0, 2.4, 1.9, 2.3, 2.1]), 50.0, RULES) is None


def test_grad_norm_above_the_absolute_ceiling():
    assert "1000" in (mr.evaluate_grad_explosion([1.0] * 20, 1842.0, RULES) or "")


def test_grad_norm_far_above_its_recent_mean():
    assert mr.evaluate_grad_explosion([0.5] * 20, 120.0, RULES) is not None
    assert mr.evaluate_grad_explosion([0.5] * 20, 20.0, RULES) is None


def test_eval_getting_worse_while_train_improves_is_degradation():
    evals = [(1.0, 2.0), (1.1, 1.8), (1.2, 1.6)]
    assert mr.evaluate_eval_degradation(evals, -1, RULES) is not None


def test_eval_worse_on_only_two_evaluations_is_not_yet_degradation():
    assert mr.evaluate_eval_degradation([(1.0, 2.0), (1.1, 1.8)], -1, RULES) is None
    assert mr.evaluate_eval_degradation([(1.2, 2.0), (1.0, 1.9), (1.1, 1.8)], -1, RULES) is None


def test_eval_wobble_below_one_percent_is_not_degradation():
    assert mr.evaluate_eval_degradation([(1.0, 2.0), (1.002, 1.8), (1.004, 1.6)], -1,
                                        RULES) is None


def test_eval_getting_worse_while_train_also_worsens_is_not_degradation():
    evals = [(1.0, 1.5), (1.1, 1.6), (1.2, 1.7)]
    assert mr.evaluate_eval_degradation(evals, -1, RULES) is None


def test_accuracy_falling_counts_as_worse():
    evals = [(0.9, 2.0), (0.85, 1.8), (0.8, 1.6)]
    assert mr.evaluate_eval_degradation(evals, +1, RULES) is not None


def test_throughput_half_of_baseline_is_slow():
    assert mr.evaluate_throughput([100, 102, 98, 101, 99, 45, 44, 46, 47, 43], RULES) is not None
    assert mr.evaluate_throughput([100, 102, 98, 101, 99, 80, 30, 85, 90, 20], RULES) is None


def test_stall_allowance_grows_with_gaps_the_run_already_showed():
    from babysit.core.progress import stall_allowance

    def allowed(**kw: object) -> float:
        base = dict(interval=30, longest_gap=0, cadence=None, cadence_source="", phase="train",
                    longest_phase=0.0, rules=RULES)
        return stall_allowance(**{**base, **kw}).seconds  # type: ignore[arg-type]

    assert allowed() == 60
    assert allowed(longest_gap=600) == 1800
    assert allowed(interval=1) == 60  # cadence not known yet: at least a minute
    assert allowed(interval=1, cadence=6) == 30  # five of its usual gaps
    assert allowed(phase="save") == 900  # a checkpoint being written gets longer
    assert allowed(phase="save", longest_phase=600) == 1800  # ... as long as saves take


def lr(current: float, peak: float | None = None, low: float | None = None, zero_run: int = 0,
       was_positive: bool = True, rising_run: int = 0) -> mr.LrTrace:
    peak = current if peak is None else peak
    return mr.LrTrace(current, peak, low if low is not None else peak, zero_run, was_positive,
                      rising_run)


def test_learning_rate_stuck_at_zero():
    assert "0 for 5" in (mr.evaluate_lr_schedule(lr(0.0, 3e-4, zero_run=5), 100, 1000,
                                                 None, RULES) or "")
    assert mr.evaluate_lr_schedule(lr(0.0, 3e-4, zero_run=4), 100, 1000, None, RULES) is None


def test_warm_up_that_never_ends():
    trace = lr(2e-4, rising_run=8)
    assert "warm-up never ended" in (mr.evaluate_lr_schedule(trace, 600, 1000, None, RULES) or "")
    assert mr.evaluate_lr_schedule(trace, 300, 1000, None, RULES) is None  # still early
    assert mr.evaluate_lr_schedule(trace, 600, None, None, RULES) is None  # length unknown


def test_rising_again_under_a_decaying_schedule():
    trace = lr(2.5e-4, peak=3e-4, low=1e-4)
    assert "rose again" in (mr.evaluate_lr_schedule(trace, 500, 1000, "cosine", RULES) or "")
    # Warm restarts are what cosine_with_restarts does: not judged.
    assert mr.evaluate_lr_schedule(trace, 500, 1000, "cosine_with_restarts", RULES) is None


def test_gradient_norm_vanishing():
    early = [1.0, 0.9, 1.1, 1.0, 0.95]
    assert mr.evaluate_grad_vanishing(early, early + [1e-6] * 5, RULES) is not None
    assert mr.evaluate_grad_vanishing(early, early + [0.0] * 5, RULES) is not None
    assert mr.evaluate_grad_vanishing(early, early + [1e-6] * 4 + [0.5], RULES) is None

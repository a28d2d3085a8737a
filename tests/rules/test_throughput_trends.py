"""Slow throughput with no fast start to fall from (issue 24): a time per iteration that
grows steadily over a short log, and steps that spend most of their time waiting for
data. Line shapes: nanoGPT's `iter N: loss L, time T ms`, a key=value step_time, YOLOX's
loguru `iter_time … data_time …` (YOLOX's trainer.py `after_iter`)."""

from __future__ import annotations

import random

import pytest

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import AnomalyType, Severity
from babysit.parsing.parser import LogParser
from babysit.rules.throughput_trends import data_share, steady_fall
from tests.rules.test_throughput import slow


def nanogpt(times_s: list[float]) -> list[str]:
    return [f"iter {i}: loss {3 - 0.01 * i:.4f}, time {t * 1000:.2f}ms"
            for i, t in enumerate(times_s, 1)]


@pytest.mark.parametrize("count", [10, 20, 30])
def test_time_per_iteration_growing_85_to_202_s_over_a_short_log_is_slow(count: int):
    times = [85 + (202 - 85) * i / (count - 1) for i in range(count)]
    [found] = slow(nanogpt(times))
    assert "falling steadily" in found or "falling over all" in found


def test_a_noisy_flat_time_per_iteration_is_not_slow():
    for seed in range(10):
        rng = random.Random(seed)
        assert slow(nanogpt([100 * rng.uniform(0.7, 1.3) for _ in range(20)])) == []


def test_a_slow_first_few_then_steady_is_not_a_steady_fall():
    # A warm-up: the first readings fast (cached data), then a steady pace.
    rates = [2.0, 1.6, 1.0, 0.98, 1.01, 0.99, 1.0, 1.02, 0.97, 1.0]
    assert steady_fall(rates, RuleSettings()) is None


def test_a_steady_fall_smaller_than_slow_drop_is_not_slow():
    rates = [1.0 - 0.03 * i for i in range(12)]  # 33 % slower at the end
    assert steady_fall(rates, RuleSettings()) is None


def test_a_steady_fall_beyond_slow_drop_is_slow_and_says_so():
    rates = [1.0 / (85 + 13 * i) for i in range(10)]
    reason = steady_fall(rates, RuleSettings())
    assert reason is not None and "falling steadily over its 10 readings" in reason


def yolox(data_s: float, iter_s: float, count: int = 12) -> list[str]:
    rng = random.Random(0)
    return [f"2023-11-27 15:49:{i:02d}.352 | INFO     | yolox.core.trainer:after_iter:256 - "
            f"epoch: 1/300, iter: {10 * i}/14786, mem: 8.8Gb, "
            f"iter_time: {iter_s * rng.uniform(0.9, 1.1):.3f}s, "
            f"data_time: {data_s * rng.uniform(0.9, 1.1):.3f}s, total_loss: 15.1, "
            f"iou_loss: 4.5, lr: 2.287e-09, size: 640, ETA: 54 days, 16:05:33"
            for i in range(1, count + 1)]


def test_steps_that_mostly_wait_for_data_are_slow_throughput():
    [found] = slow(yolox(0.8, 1.05))
    assert "wait on data" in found and "% of each step" in found


def test_steps_with_a_small_data_time_are_not_slow():
    assert slow(yolox(0.01, 0.45)) == []


def test_the_data_and_step_times_are_read_from_a_training_record():
    assert data_share({"data_time": 0.2, "step_time": 0.3}) == (0.2, 0.3)
    assert data_share({"data": 0.26, "time": 0.29}) == (0.26, 0.29)
    assert data_share({"loss": 1.0, "data_time": 0.2}) is None


def test_a_slowdown_that_makes_the_run_miss_its_time_limit_is_high():
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(yolox(0.8, 1.05)))
    [slow_found] = [a for a in run.ledger.anomalies if a.type is AnomalyType.SLOW_THROUGHPUT]
    assert slow_found.severity is Severity.MEDIUM
    run.weigh_slowdown()
    assert run.ledger.anomalies[0].severity is Severity.MEDIUM  # no limit known: medium
    run.ledger.raise_(AnomalyType.DEADLINE, 120, "reaches its TimeLimit at step 4000 of "
                      "4435800", "deadline")
    run.weigh_slowdown()
    [slow_found] = [a for a in run.ledger.anomalies if a.type is AnomalyType.SLOW_THROUGHPUT]
    assert slow_found.severity is Severity.HIGH and "time limit" in slow_found.description

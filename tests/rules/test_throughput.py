"""Slow throughput judged on what the log itself says (a rate, a time per step, its
timestamps), on short logs as on long ones, and against the baseline's own noise."""

from __future__ import annotations

from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from babysit.rules import metric_rules as mr
from tests.rules.test_loss_rules import verdict_of


def slow(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.description for a in run.ledger.anomalies if a.type.value == "slow-throughput"]


def falling(n: int, start: float = 2.0) -> float:
    return start - 0.02 * n


def test_time_per_iteration_growing_85_142_202_s_on_a_sparse_log_is_slow():
    lines = [f"step={s} loss={falling(s):.3f} step_time={t}"
             for s, t in ((1, 85.0), (5, 142.0), (10, 202.0))]
    [found] = slow(lines)
    assert "falling over all 3 readings" in found


def test_one_slow_step_at_the_end_of_a_short_log_is_not_slow_throughput():
    lines = [f"step={s} loss={falling(s):.3f} step_time={t}"
             for s, t in ((1, 85.0), (2, 84.0), (3, 86.0), (4, 200.0))]
    assert slow(lines) == []


def test_a_short_log_whose_first_bar_reading_is_off_is_not_slow():
    # hf_trainer_gemma2 (public): tqdm's first rate 0.86 it/s, then a steady 0.14.
    rates = [0.862, 0.142, 0.144, 0.144, 0.13, 0.147, 0.138, 0.133]
    assert mr.evaluate_throughput(rates, RuleSettings()) is None


def test_a_drop_within_the_baselines_own_noise_is_not_slow():
    rules = RuleSettings()
    noisy = [10.0, 2.0, 12.0, 3.0, 11.0] + [2.5] * 5  # a baseline that swings 2..12
    assert mr.evaluate_throughput(noisy, rules) is None
    steady = [10.0, 10.2, 9.9, 10.1, 10.0] + [4.0] * 5
    assert mr.evaluate_throughput(steady, rules) is not None


def test_a_finished_megatron_log_whose_iterations_slow_down_55_percent_is_flagged_once(
        tmp_path: Path):
    lines = [f" iteration {10 * i:8d}/     200 | elapsed time per iteration (ms): "
             f"{(170.0 if i <= 10 else 380.0) + (i % 3):.1f} | lm loss: {5.0 - 0.01 * i:.6E} |"
             for i in range(1, 21)]
    data = verdict_of(tmp_path, lines)
    assert [a["type"] for a in data["anomalies_detected"]] == ["slow-throughput"]


def test_a_finished_log_slowing_down_by_its_timestamps_alone_is_flagged_once(tmp_path: Path):
    lines, t = [], 0
    for s in range(1, 41):
        t += 2 if s <= 20 else 5  # 0.5 steps/s, then 0.2: 60 % slower
        lines.append(f"2026-11-30 10:{t // 60:02d}:{t % 60:02d} | step {s}/40 | "
                     f"loss={falling(s):.3f}")
    data = verdict_of(tmp_path, [*lines, "Training complete"])
    found = [a for a in data["anomalies_detected"] if a["type"] == "slow-throughput"]
    assert found and "timestamps" in found[0]["description"], data["anomalies_detected"]

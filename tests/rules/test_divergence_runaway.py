"""A divergence whose loss runs away, several times its best held level and rising at
each point, is a blocker wherever the log begins (issue 24, item 1). The shape is
sealed-8's caffe_sphereface_glog_loss_stuck_9_48_then_climbing_13_to_47_running: glog
`Iteration 2100 (1.01467 iter/s, 98.5545s/100 iters), loss = 9.47989` pinned at 9.48
from iteration 2000, 13.4-14.0 by 18900, then 35.8 → 38.8 → 43.7 → 47.7."""

from __future__ import annotations

import math
from pathlib import Path

from babysit.model import AnomalyType, Severity
from tests.rules.test_loss_rules import run_of, verdict_of

_CAFFE = [(2000, 9.47877), (2100, 9.47989), (2200, 9.47797), (2300, 9.48282),
          (18900, 13.4725), (19000, 13.3963), (19100, 13.9681), (19200, 13.8304),
          (23400, 35.8096), (23500, 38.7695), (23600, 43.6644), (23700, 47.6553)]


def glog(points: list[tuple[int, float]]) -> list[str]:
    return [f"I0718 05:26:01.970777 23375 solver.cpp:218] Iteration {step} (1.00034 iter/s, "
            f"99.9662s/100 iters), loss = {loss}" for step, loss in points]


def divergences(points: list[tuple[int, float]]) -> list[tuple[Severity, str]]:
    run = run_of(glog(points))
    return [(a.severity, a.description) for a in run.ledger.anomalies
            if a.type is AnomalyType.DIVERGENCE]


def test_a_loss_running_away_from_a_mid_run_excerpt_is_a_blocker(tmp_path: Path):
    found = divergences(_CAFFE)
    assert found and found[-1][0] is Severity.BLOCKER
    assert "rising at each" in found[-1][1]
    data = verdict_of(tmp_path, glog(_CAFFE))
    assert data["terminal_state"] == "RUNNING"
    assert data["decision"] == "NO-GO", data["summary"]


def test_the_same_rise_that_levels_off_stays_high():
    # 13.4-14 then 30-ish holding, not climbing at each point: a divergence, but one the
    # run may yet come back from (high, as before).
    levelling = [*_CAFFE[:8], (23400, 31.2), (23500, 30.4), (23600, 31.0), (23700, 30.7)]
    found = divergences(levelling)
    assert found and all(severity is Severity.HIGH for severity, _ in found)


def test_a_rise_below_three_times_the_best_stays_high():
    milder = [*_CAFFE[:8], (23400, 20.1), (23500, 21.3), (23600, 22.8), (23700, 24.0)]
    found = divergences(milder)
    assert found and all(severity is Severity.HIGH for severity, _ in found)


def _finished(top: float, val_acc_after: float | None = None) -> list[str]:
    """A run that fell from 10 to 0.23, held there, and stepped up to `top` over its last
    ten logged points before it finished; `val_acc_after`: its validation accuracy once
    the loss rose (0.9 before)."""
    lines = ["max_steps=3000"]
    for s in range(10, 3001, 10):
        value = 0.23 + 9.77 * math.exp(-s / 150) if s <= 2900 else top
        lines.append(f"step {s}/3000 loss {value * (1 + 0.01 * math.sin(s * 1.7)):.4f}")
        if val_acc_after is not None and s % 500 == 0:
            lines.append(f"step {s}/3000 val_acc {0.9 if s <= 2900 else val_acc_after}")
    if val_acc_after is not None:
        lines.append(f"step 3000/3000 val_acc {val_acc_after}")
    return [*lines, "Training complete"]


def _divergence_at_end(tmp_path: Path, lines: list[str]) -> str:
    data = verdict_of(tmp_path, lines)
    [found] = [a for a in data["anomalies_detected"] if a["type"] == "divergence"]
    return found["severity"]


def test_a_small_rise_open_at_the_end_far_below_the_start_is_a_notice(tmp_path: Path):
    # sealed-4's JEPA run: an autoencoder loss 0.232 → 0.279 over its last points, after
    # 1647 at the start: the final weights are somewhat worse than the best, not broken.
    assert _divergence_at_end(tmp_path, _finished(0.28)) == "medium"


def test_a_large_rise_open_at_the_end_is_a_blocker(tmp_path: Path):
    assert _divergence_at_end(tmp_path, _finished(0.8)) == "blocker"


def test_a_small_rise_validation_shares_is_a_blocker(tmp_path: Path):
    # sealed-8's federated run: the training loss 0.42 → 0.59 while test accuracy fell
    # 0.915 → 0.745: the model got worse, not only its training loss.
    assert _divergence_at_end(tmp_path, _finished(0.28, val_acc_after=0.7)) == "blocker"

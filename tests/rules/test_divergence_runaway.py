"""A divergence whose loss runs away, several times its best held level and rising at
each point, is a blocker wherever the log begins (issue 24, item 1). The shape is
sealed-8's caffe_sphereface_glog_loss_stuck_9_48_then_climbing_13_to_47_running: glog
`Iteration 2100 (1.01467 iter/s, 98.5545s/100 iters), loss = 9.47989` pinned at 9.48
from iteration 2000, 13.4-14.0 by 18900, then 35.8 → 38.8 → 43.7 → 47.7."""

from __future__ import annotations

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

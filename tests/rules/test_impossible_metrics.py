"""A share metric outside 0–100 % is a computing error, not a result (issue 24, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.config import RuleSettings
from babysit.model import AnomalyType
from babysit.rules.impossible_metrics import ImpossibleMetricRule
from babysit.rules.signals import Observation
from tests.core.test_endings import once


def _raised(metrics: dict[str, float]) -> list[str]:
    rule = ImpossibleMetricRule(RuleSettings())
    return [s.description for s in rule.observe(Observation(step=1, metrics=metrics))]


@pytest.mark.parametrize("metrics", [{"accuracy": 103.7}, {"val/f1": -0.2},
                                     {"test_acc": 112.65}])
def test_a_share_above_100_percent_or_below_0_is_impossible(metrics: dict[str, float]):
    assert _raised(metrics)


@pytest.mark.parametrize("metrics", [
    {"accuracy": 99.96}, {"accuracy": 0.93},
    {"real_accelerator.py": 222.0},  # a source line a logger printed, not a metric
    {"hellaswag_accuracy": 2486.0},  # nanoGPT's `2486/10042=0.2476`: the count beside it
    {"map_size": 512.5}, {"loss": 130.2}])
def test_in_range_values_counts_and_other_names_are_not(metrics: dict[str, float]):
    assert _raised(metrics) == []


def test_a_finished_run_whose_accuracy_passed_100_percent_is_not_go(tmp_path: Path):
    # The PyTorch quickstart's test loop in a notebook (westdri, sealed-8), dividing by the
    # wrong count: `Accuracy: 103.7%, Avg loss: 0.472968`.
    lines = []
    for epoch in range(1, 6):
        lines += [f"Epoch {epoch}", "-------------------------------",
                  f"loss: {0.9 - epoch * 0.1:.6f}  [   64/60000]",
                  "Test Error: ",
                  f" Accuracy: {100.5 + epoch * 2.4:.1f}%, Avg loss: {0.5 - epoch * 0.03:.6f} "]
    lines.append("Done!")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert AnomalyType.IMPOSSIBLE_METRIC.value in {a["type"] for a in data["anomalies_detected"]}

"""A regression whose R² stays below 0 without rising has learned nothing of its inputs
(issue 24). Line shape: sealed/polymergnn_fold_epoch_tab_cv_finished.log's
`Fold: 1 \t Epoch: 0, \t Train r2: -3.4028 \t Train Loss: 2612889.4521` (healthy: its R²
climbs), with the values of sealed-7's Ludwig run (-0.0603, -0.0442, -0.0530)."""

from __future__ import annotations

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from babysit.rules.below_mean import below_mean


def not_learning(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.key for a in run.ledger.anomalies
            if a.type.value == "not-learning" and not a.resolved]


def folds(r2: list[float]) -> list[str]:
    return [f"Fold: 1 \t Epoch: {50 * e}, \t Train r2: {v} \t Train Loss: {1000 - e:.4f}"
            for e, v in enumerate(r2)]


def test_r2_below_0_on_every_report_and_not_rising_is_not_learning():
    assert not_learning(folds([-0.0603, -0.0442, -0.0530])) == ["r2 train_r2"]


def test_r2_that_starts_negative_and_climbs_is_learning():
    assert not_learning(folds([-3.4028, 0.5001, 0.5978, 0.6949])) == []
    assert below_mean([-3.4, -2.1, -1.0]) is None  # still below 0, but climbing


def test_two_reports_are_too_few():
    assert below_mean([-0.06, -0.05]) is None

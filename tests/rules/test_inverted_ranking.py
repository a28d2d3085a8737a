"""An AUC held far below a coin's 0.5 ranks the classes backwards (issue 24): sealed-15's
LightGBM folds, `valid-1-9's auc: 0.117` at round 5 and lower at every round after, a
script that exits 0 all the same. Lines in LightGBM's shape, made-up values."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def _rounds(aucs: list[float]) -> list[str]:
    return [f"[{5 * (i + 1)}]\ttrain-1-9's auc: {a - 0.01:.6f}\tvalid-1-9's auc: {a:.6f}"
            for i, a in enumerate(aucs)]


def test_an_auc_held_far_below_a_coins_is_a_model_ranking_backwards(tmp_path: Path):
    lines = [*_rounds([0.16 - 0.01 * i for i in range(10)]), "Process finished with exit code 0"]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in data["anomalies_detected"])


def test_an_auc_that_starts_low_and_climbs_past_it_is_no_finding(tmp_path: Path):
    lines = [*_rounds([0.25, 0.28, 0.35, 0.5, 0.62, 0.7, 0.75, 0.78, 0.8, 0.81]),
             "Process finished with exit code 0"]
    data = verdict_of(tmp_path, lines)
    assert not any(a["type"] == "not-learning" for a in data["anomalies_detected"])

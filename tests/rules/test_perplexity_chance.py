"""A language model whose perplexity stays at or above its vocabulary's size predicts no
better than a uniform guess (issue 24). Sealed-12's predictive-coding transformer says
`"vocab_size": 1024` in its config dump, then `Epoch 20/20 | Train Energy: 1.5738 |
Train Perplexity: 279.0503 | Val Energy: 1.5723 | Val Perplexity: 1622.5381` and
`Training completed`: a finished run whose model is worse than chance on held-out text."""

from __future__ import annotations

from pathlib import Path

from babysit.model import AnomalyType
from babysit.rules.perplexity_chance import above_uniform
from tests.rules.test_loss_rules import run_of, verdict_of

_CONFIG = ['2025-11-21 10:49:31,004 - INFO - Config: {', '  "vocab_size": 1024,', '}']


def _epochs(val: list[float]) -> list[str]:
    n = len(val)
    return [f"2025-11-21 10:50:32,935 - INFO - Epoch {e}/{n} | Train Energy: 1.5442 | "
            f"Train Perplexity: {368 - 4.5 * e:.4f} | Val Energy: 1.5232 | "
            f"Val Perplexity: {v:.4f}" for e, v in enumerate(val, 1)]


_WORSE_THAN_CHANCE = [2140.3, 2096.7, 2076.6, 2041.4, 2033.3, 2003.4, 1943.8, 1931.1,
                      1866.3, 1845.4, 1793.0, 1790.2, 1794.2, 1863.8, 1704.5, 1736.9,
                      1638.4, 1699.5, 1670.2, 1622.5]


def test_a_finished_run_whose_validation_perplexity_stays_above_the_vocabulary_is_no_go(
        tmp_path: Path) -> None:
    lines = [*_CONFIG, *_epochs(_WORSE_THAN_CHANCE),
             "2025-11-21 11:09:24,871 - INFO - ========== Training completed =========="]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "SUCCEEDED"
    assert data["decision"] == "NO-GO"
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and "uniform guess" in found[0]["description"]


def test_a_perplexity_that_falls_below_the_vocabulary_is_learning() -> None:
    falling = [2140.0 * 0.8 ** i for i in range(20)]  # below 1024 from the fourth epoch
    assert AnomalyType.NOT_LEARNING not in {
        a.type for a in run_of([*_CONFIG, *_epochs(falling)]).ledger.anomalies
        if not a.resolved}


def test_without_a_vocabulary_nothing_is_said() -> None:
    assert AnomalyType.NOT_LEARNING not in {
        a.type for a in run_of(_epochs(_WORSE_THAN_CHANCE)).ledger.anomalies}
    assert above_uniform([1500.0] * 4, 1024) is None  # too young to judge

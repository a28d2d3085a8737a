"""A loss that explodes at the end of a log (issue 23): the jump is a spike even after a
single earlier point, a spike that never comes back is a divergence too, and a level
orders of magnitude above the lowest loss is a blocker; a loss non-finite from its first
record never learned anything. Lines written for these tests."""

from __future__ import annotations

from babysit.model import AnomalyType, Severity
from tests.rules.test_loss_rules import run_of


def _open(lines: list[str]) -> dict[AnomalyType, Severity]:
    return {a.type: a.severity for a in run_of(lines).ledger.anomalies if not a.resolved}


def test_an_explosion_after_one_point_that_never_comes_back() -> None:
    values = [0.2031, 4.1e4, 9.3e4, 5.2e4, 2.4e5, 6.1e5, 3.3e5, 1.9e6]
    lines = [f"step {1200 + i}: loss = {v:.4f}" for i, v in enumerate(values)]
    found = _open(lines)
    assert found.get(AnomalyType.LOSS_SPIKE) is Severity.HIGH
    assert found.get(AnomalyType.DIVERGENCE) is Severity.BLOCKER


def test_a_spike_that_comes_back_is_no_divergence() -> None:
    values = [0.2031, 4.1e4, 0.21, 0.2, 0.19, 0.2, 0.18, 0.19]
    found = _open([f"step {1200 + i}: loss = {v:.4f}" for i, v in enumerate(values)])
    assert AnomalyType.DIVERGENCE not in found
    assert AnomalyType.LOSS_SPIKE not in found  # resolved


def test_a_long_run_climbing_at_its_last_points_diverged() -> None:
    settled = [2.41 - 0.02 * i for i in range(30)] + [1.83, 1.84, 1.82, 1.83, 1.835]
    values = [*settled, 2.2, 5.9, 13.8, 17.1, 19.5]
    lines = [f"step {i + 1}: loss = {v:.4f}" for i, v in enumerate(values)]
    found = _open(lines)
    # Over 3× its best (1.83) at each of its last points and rising at each: a runaway,
    # a blocker while the run goes on too (rules/runaway.py).
    assert found.get(AnomalyType.DIVERGENCE) is Severity.BLOCKER


def test_a_long_run_with_one_high_point_at_its_end_is_no_divergence() -> None:
    settled = [2.41 - 0.02 * i for i in range(30)] + [1.83, 1.84, 1.82, 1.83, 1.835]
    values = [*settled, 1.84, 1.83, 9.5]
    lines = [f"Epoch {i + 1}/{len(values)} - 3s - loss: {v:.4f}" for i, v in enumerate(values)]
    assert AnomalyType.DIVERGENCE not in _open(lines)


def test_a_loss_nan_from_its_first_record_never_learned() -> None:
    lines = [f"| epoch 1 | {200 * i:5d}/ 9000 batches | lr 1.0 | loss   nan | ppl  nan"
             for i in range(1, 30)]
    found = _open(lines)
    assert found.get(AnomalyType.NAN_INF) is Severity.BLOCKER
    assert found.get(AnomalyType.NOT_LEARNING) is Severity.HIGH


def test_a_short_stretch_of_nan_from_the_first_record_is_only_a_nan() -> None:
    lines = [f"Epoch {i}/50 - loss: nan" for i in range(1, 8)]
    found = _open(lines)
    assert found.get(AnomalyType.NAN_INF) is Severity.BLOCKER
    assert AnomalyType.NOT_LEARNING not in found


def test_a_loss_that_learned_before_its_nan_is_only_a_nan() -> None:
    lines = [f"step {i} loss {v}" for i, v in
             enumerate(["2.3", "2.1", "1.9", "nan", "nan", "nan", "nan", "nan", "nan"])]
    found = _open(lines)
    assert found.get(AnomalyType.NAN_INF) is Severity.BLOCKER
    assert AnomalyType.NOT_LEARNING not in found

"""A learning rate printed as 0 is not always 0 (issue 24): a rate rounded to four
decimals during a warm-up from 1e-6 reads `lr:0.0000` while the loss falls from 1880 to
460; the weights change, so the run is learning. A rate that is 0 and a loss that does
not move still are not learning, and a rate that moves again resolves it."""

from __future__ import annotations

from babysit.model import AnomalyType
from tests.rules.test_loss_rules import run_of


def _open_not_learning(lines: list[str]) -> set[str | None]:
    return {a.key for a in run_of(lines).ledger.anomalies
            if a.type is AnomalyType.NOT_LEARNING and not a.resolved}


def test_a_rate_printed_as_zero_while_the_loss_falls_far_is_a_rounding():
    # YOLO-style warm-up: `lr:0.0000` for the first hundred batches, loss collapsing.
    lines = [f"Epoch:[  0/120],step:[{10 * i:3d}/197],total_loss:{1880 * 0.8 ** i:.4f}|"
             f"lr:0.0000" for i in range(12)]
    assert "learning rate" not in _open_not_learning(lines)
    lines = [f"step={s} loss={3.0 / s:.4f} lr=0 grad_norm={1.0 / s:.3f}" for s in range(1, 12)]
    assert "learning rate" not in _open_not_learning(lines)


def test_a_rate_of_zero_and_a_loss_that_stays_put_is_not_learning():
    lines = [f"step={s} loss={2.303 + 0.002 * (s % 3):.4f} lr=0.0" for s in range(1, 12)]
    assert "learning rate" in _open_not_learning(lines)


def test_a_rate_that_moves_again_resolves_it():
    lines = [f"step={s} loss={2.303 + 0.002 * (s % 3):.4f} lr=0.0" for s in range(1, 9)]
    lines += [f"step={s} loss={2.2 - 0.05 * (s - 9):.4f} lr=0.0001" for s in range(9, 14)]
    assert "learning rate" not in _open_not_learning(lines)


def _hf(points: list[tuple[float, float]]) -> list[str]:
    # A Hugging Face run's bar then its loss dict at the same step.
    lines = []
    for i, (lr, grad) in enumerate(points):
        step = 6 + i
        lines += [f"  2%|▏         | {step}/390 [01:{step:02d}<1:26:53, 13.58s/it]",
                  f"{{'loss': {12.10 - 0.02 * (i % 2):.4f}, 'grad_norm': {grad}, "
                  f"'learning_rate': {lr}, 'epoch': {0.03 * step:.2f}}}"]
    return lines


def test_a_sparse_log_with_rate_and_norm_both_zero_is_not_learning():
    assert "zero updates" in _open_not_learning(_hf([(0.0, 0.0)] * 4))


def test_a_rate_of_zero_with_a_moving_norm_on_a_sparse_log_is_not_yet():
    assert "zero updates" not in _open_not_learning(_hf([(0.0, 1.3), (0.0, 1.1), (0.0, 0.9),
                                                         (0.0, 0.8)]))


def test_rate_and_norm_that_start_moving_resolve_it():
    points = [(0.0, 0.0)] * 3 + [(1e-5, 2.1), (2e-5, 1.9)]
    assert "zero updates" not in _open_not_learning(_hf(points))

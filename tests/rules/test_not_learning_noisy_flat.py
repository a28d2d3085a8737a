"""A noisy loss that never leaves its level over a long run is not learning (issue 24):
the lowest median of five among 160 noisy epochs sits below the true level by luck
alone, and a noise measured over the last twenty points is low now and then; neither
may call a flat loss learned. A loss that truly falls, slowly and as noisily, learned."""

from __future__ import annotations

import random

from babysit.model import AnomalyType
from tests.rules.test_loss_rules import run_of


def _open_not_learning(lines: list[str]) -> set[str | None]:
    return {a.key for a in run_of(lines).ledger.anomalies
            if a.type is AnomalyType.NOT_LEARNING and not a.resolved}


def _noisy(levels: list[float], sd: float, seed: int) -> list[float]:
    draw = random.Random(seed)
    return [level + draw.gauss(0, sd) for level in levels]


def _notebook(losses: list[float]) -> list[str]:
    # A notebook loop's epoch summary: a banner, then the epoch's mean loss.
    lines = []
    for epoch, value in enumerate(losses, 1):
        lines += [f"Epoch {epoch}/{len(losses)}", f"Epoch {epoch} Summary:",
                  f"Average Loss: {value:.6f}"]
    return lines


def test_a_flat_noisy_loss_over_a_long_run_stays_not_learning():
    for seed in range(5):
        losses = _noisy([0.0025] * 160, 0.0002, seed)
        lines = _notebook(losses)
        assert "flat" in _open_not_learning(lines), seed


def test_a_flat_loss_under_other_spellings_too():
    for seed in range(3):
        losses = _noisy([4.2] * 120, 0.3, seed)
        lines = [f"step={10 * s} loss={v:.4f}" for s, v in enumerate(losses, 1)]
        assert "flat" in _open_not_learning(lines), seed


def test_a_slow_noisy_fall_is_learning():
    for seed in range(5):
        losses = _noisy([0.0030 - 0.000006 * i for i in range(160)], 0.0002, seed)
        lines = _notebook(losses)
        assert "flat" not in _open_not_learning(lines), seed


def test_a_per_step_loss_too_noisy_to_show_any_fall_is_not_called_flat():
    """A frame-interpolation run printing one batch every 500 steps, each from a
    different dataset: σ of its changes near its level, so no fall could show."""
    rng = random.Random(3)
    lines = [f"[{500 * i:06d}/50000] SET    | loss {rng.uniform(0.015, 0.2):.4f} | 3.1 it/s"
             for i in range(1, 100)]
    assert _open_not_learning(lines) == set()

"""A binary classifier whose held-out loss never went below ln 2 never learned
(rules/eval_chance: the coin-toss path), on Keras' own epoch lines."""

from __future__ import annotations

import random

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser


def keras_epochs(val: list[tuple[float, float]], total: int = 150) -> list[str]:
    """Keras 3's per-epoch lines: the header, then the bar's last line with the figures."""
    lines = []
    for n, (acc, loss) in enumerate(val, start=1):
        lines.append(f"Epoch {n}/{total}")
        lines.append(f"59/59 ━━━━━━━━━━━━━━━━━━━━ 6s 46ms/step - accuracy: {acc + 0.01:.4f} - "
                     f"loss: {loss + 0.05 - 0.005 * n:.4f} - val_accuracy: {acc:.4f} - "
                     f"val_loss: {loss:.4f}")
    return lines


def blockers(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.description for a in run.ledger.anomalies
            if a.severity.value == "blocker" and a.type.value == "not-learning"]


def coin(points: int, seed: int = 4) -> list[tuple[float, float]]:
    # a validation set of ~400: accuracy wanders ±0.03 round one half, the loss round ln 2
    rng = random.Random(seed)
    return [(0.5 + rng.uniform(-0.03, 0.05), 0.6935 + rng.uniform(0.0, 0.026))
            for _ in range(points)]


def test_every_evaluation_at_a_coins_loss_is_a_run_that_never_learned():
    found = blockers(keras_epochs(coin(22)))
    assert any("no better than a coin" in d and "ln 2" in d for d in found), found


def test_a_few_evaluations_at_a_coins_loss_say_nothing_yet():
    # a healthy binary classifier starts there
    assert not blockers(keras_epochs(coin(8)))


def test_one_evaluation_below_ln_2_is_a_model_that_learned_something():
    points = coin(22)
    points[3] = (0.58, 0.661)
    assert not blockers(keras_epochs(points))


def test_a_model_of_many_classes_at_half_right_is_no_coin():
    # ten classes, half right: its loss is far above ln 2
    assert not blockers(keras_epochs([(0.5 + 0.001 * n, 1.41 - 0.001 * n) for n in range(22)]))


def test_a_binary_classifier_that_learns_is_no_coin():
    points = [(0.5 + 0.02 * n, 0.693 - 0.015 * n) for n in range(22)]
    assert not blockers(keras_epochs(points))

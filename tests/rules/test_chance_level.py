"""Not learning at chance (issue 24): an evaluation accuracy that jumps between the same
few values and never beats its first (one class predicted for everything), and a GAN
whose two losses sit flat at 2·ln 2 and ln 2. Line shapes: the pytorch-deep-learning
notebook's `Epoch: E | train_loss: … | test_acc: …`, DCGAN-tensorflow's
`Epoch:[ e/25] [ i/ 273] time: t, d_loss: X, g_loss: Y`."""

from __future__ import annotations

import math
import random
from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from babysit.rules.chance_level import accuracy_at_chance, gan_at_chance
from tests.rules.test_loss_rules import verdict_of


def not_learning(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.description for a in run.ledger.anomalies if a.type.value == "not-learning"]


def epochs(test_acc: list[float]) -> list[str]:
    rng = random.Random(1)
    return [f"Epoch: {e} | train_loss: {1.3 + rng.uniform(-0.1, 0.2):.4f} | train_acc: "
            f"{0.3 + rng.uniform(-0.05, 0.1):.4f} | test_loss: {1.5 + rng.uniform(-0.3, 0.5):.4f}"
            f" | test_acc: {acc:.4f}" for e, acc in enumerate(test_acc, 1)]


def test_a_finished_classifier_scoring_one_class_share_at_every_epoch_is_not_go(
        tmp_path: Path):
    shares = [0.4375, 0.3125, 0.2500, 0.4375, 0.2500, 0.3125, 0.3125, 0.2500, 0.4375, 0.2500]
    # The notebook's outer tqdm bar, drawn at its start, gives the planned epochs.
    data = verdict_of(tmp_path, ["  0%|          | 0/10 [00:00<?, ?it/s]", *epochs(shares)])
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert "predicts the same class" in data["summary"]


def test_a_classifier_that_improves_past_its_first_evaluation_is_learning():
    assert not_learning(epochs([0.41, 0.55, 0.61, 0.64, 0.64, 0.66, 0.61, 0.67, 0.68, 0.7])) == []


def test_a_converged_accuracy_that_repeats_a_value_is_not_at_chance():
    # A pretrained fine-tune at its plateau from the first epoch: repeats, barely moves.
    assert accuracy_at_chance([0.9081, 0.9081, 0.8977, 0.9081, 0.8977, 0.9081, 0.9081,
                               0.8977]) is None


def test_accuracy_at_chance_needs_eight_evaluations():
    assert accuracy_at_chance([0.54, 0.2, 0.2, 0.54, 0.26, 0.2, 0.2]) is None
    assert accuracy_at_chance([0.54, 0.2, 0.2, 0.54, 0.26, 0.2, 0.2, 0.26]) is not None


def dcgan(d_of, g_of, count: int = 300) -> list[str]:
    return [f"[{i + 1:8d}] Epoch:[ {i // 273:1d}/25] [{i % 273:4d}/ 273] time: {0.75 * i:.4f}, "
            f"d_loss: {d_of(i):.8f}, g_loss: {g_of(i):.8f}" for i in range(count)]


def test_a_gan_whose_losses_sit_at_2_ln_2_and_ln_2_is_not_learning():
    rng = random.Random(0)
    lines = dcgan(lambda i: 2 * math.log(2) + rng.uniform(-0.01, 0.01),
                  lambda i: math.log(2) + rng.uniform(-0.005, 0.005))
    [found] = not_learning(lines)
    assert "discriminator is at chance" in found


def test_a_gan_whose_losses_swing_is_not_at_chance():
    rng = random.Random(0)
    lines = dcgan(lambda i: rng.uniform(0.3, 1.6), lambda i: rng.uniform(0.7, 4.0))
    assert not_learning(lines) == []


def test_a_gan_near_chance_only_at_its_start_is_not_flagged():
    assert gan_at_chance([1.386] * 10 + [0.5] * 40, [0.693] * 10 + [2.5] * 40) is None

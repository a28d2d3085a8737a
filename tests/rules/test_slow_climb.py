"""A loss that creeps up over a long run to several times its best level is a divergence,
however slowly it climbed: its own climb inflates the noise the loss rule measures, so the
level is judged on medians of long blocks instead (a peptide RNN-VAE's `loss_vae` from 0.08
to 0.5 over 200k iterations)."""

from __future__ import annotations

import random

from babysit.model import AnomalyType, Severity
from tests.rules.test_loss_rules import run_of


def _iters(losses: list[float], recon: list[float] | None = None) -> list[str]:
    # A hand-written PyTorch loop's progress line, in its real shape.
    recon = recon or [v * 0.8 for v in losses]
    pairs = enumerate(zip(losses, recon, strict=True))
    return [f"ITER {500 * i} TRAINING (phase 1). loss_vae: {v:.4f}; loss_recon: {r:.4f}; "
            f"loss_kl: 220.0000; Grad_norm: 5.0e-01 " for i, (v, r) in pairs]


def _divergence(lines: list[str]) -> list[Severity]:
    return [a.severity for a in run_of(lines).ledger.anomalies
            if a.type is AnomalyType.DIVERGENCE and not a.resolved]


def _creep(points: int, rng: random.Random) -> list[float]:
    # Down to 0.1 in the first fifth, then a slow climb to about 0.5, noisy throughout.
    fall = [3.0 * 0.9 ** i + 0.1 for i in range(points // 5)]
    rest = points - len(fall)
    climb = [0.1 + 0.4 * i / rest for i in range(rest)]
    return [v * rng.uniform(0.6, 1.5) for v in fall + climb]


def test_a_loss_that_creeps_to_several_times_its_best_has_diverged():
    rng = random.Random(4)
    assert _divergence(_iters(_creep(400, rng))) == [Severity.HIGH]


def test_a_noisy_level_loss_has_not():
    rng = random.Random(4)
    losses = [3.0 * 0.9 ** i + 0.1 for i in range(80)] + [0.1] * 320
    assert _divergence(_iters([v * rng.uniform(0.5, 2.0) for v in losses])) == []


def test_a_total_whose_terms_held_climbed_by_its_weights():
    # The total rises (an annealed weight on a term not logged) while the logged term
    # falls: not the model's fit getting worse.
    rng = random.Random(4)
    total = _creep(400, rng)
    recon = [0.5 * 0.995 ** i + 0.05 for i in range(400)]
    assert _divergence(_iters(total, recon)) == []


def test_a_level_that_doubled_from_one_block_to_the_next_jumped_rather_than_crept():
    # A new stage's objective (layer-wise pre-training, then fine-tuning): a step, which
    # the loss rule's spike and divergence tests judge, not a creep.
    rng = random.Random(4)
    losses = [0.1 * rng.uniform(0.8, 1.2) for _ in range(200)] \
        + [0.4 * rng.uniform(0.8, 1.2) for _ in range(200)]
    assert _divergence(_iters(losses, [4 * v for v in losses])) == []


def test_a_climb_that_validation_does_not_share_is_a_curriculum():
    rng = random.Random(4)
    losses = _creep(400, rng)
    lines = [f"{line.rstrip()}; val_loss: {0.5 - 0.001 * i:.4f}"
             for i, line in enumerate(_iters(losses))]
    assert _divergence(lines) == []

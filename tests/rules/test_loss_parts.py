"""A total loss that rises because the weights of its terms rise (KL annealing), while
every term it is made of holds or falls, is no divergence and no spike (issue 24); a
rise that one of its terms shares still is."""

from __future__ import annotations

import random

from babysit.model import AnomalyType
from tests.rules.test_loss_rules import run_of, serious


def _vae(beta_at: list[float], ce_drift: float = 0.0) -> list[str]:
    rng = random.Random(7)
    lines = []
    for i, beta in enumerate(beta_at):
        ce = 0.3 + ce_drift * i + rng.uniform(-0.02, 0.02)
        kl = 0.4 + rng.uniform(-0.1, 0.1)
        lines.append(f"step={100 * (i + 1)} loss={ce + beta * kl:.4f} ce={ce:.4f} kl={kl:.4f}")
    return lines


def test_a_total_climbing_with_its_kl_weight_is_not_serious():
    betas = [0.5] * 60 + [0.5 + 0.5 * i for i in range(40)]
    assert not [s for s in serious(run_of(_vae(betas))) if s[0] in ("divergence", "loss-spike")]


def test_a_total_jumping_with_its_weight_is_not_a_spike():
    betas = [0.5] * 60 + [6.0] * 10
    types = {a.type for a in run_of(_vae(betas)).ledger.anomalies}
    assert AnomalyType.LOSS_SPIKE not in types


def test_a_climb_a_term_shares_stays_serious():
    betas = [0.5] * 60 + [0.5] * 40
    lines = _vae(betas[:60]) + [f"step={100 * (61 + i)} loss={0.5 + 0.2 * i:.4f} "
                                f"ce={0.3 + 0.2 * i:.4f} kl=0.4" for i in range(40)]
    assert any(s[0] == "divergence" for s in serious(run_of(lines)))


def test_a_spike_one_term_shares_at_that_very_point_stays_a_spike():
    # An evaluation's summary read as a training point: the total and a term jump
    # together for one point (a level of three would not see the term move yet).
    rng = random.Random(5)
    lines = [f"step={i + 1} loss={27 + rng.uniform(-0.5, 0.5):.3f} "
             f"loss_bbox={1.15 + rng.uniform(-0.03, 0.03):.3f} "
             f"loss_ce={1.6 + rng.uniform(-0.05, 0.05):.3f}" for i in range(60)]
    lines.append("step=61 loss=50.31 loss_bbox=3.51 loss_ce=1.72")
    types = {a.type for a in run_of(lines).ledger.anomalies}
    assert AnomalyType.LOSS_SPIKE in types

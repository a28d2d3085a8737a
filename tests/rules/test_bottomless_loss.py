"""A loss with no floor running away below zero is a divergence (issue 24): sealed-12's
adversarial autoencoder prints `Epoch 54/1000 - Loss Discriminator: 0.7426, Loss
Encoder: -103.3596, Loss Decoder: 0.0077`, its encoder loss falling by 3-5 at every
epoch from +7.6 to -103. A negative loss that settles (a dice loss near -1, a flow's
likelihood falling by less and less) is not."""

from __future__ import annotations

from pathlib import Path

from babysit.model import AnomalyType
from babysit.rules.bottomless_loss import running_down
from tests.rules.test_loss_rules import run_of, verdict_of

# The encoder's loss in that log, epochs 1-54 (two decimals).
_ENCODER = [-0.01, -0.01, -0.01, -0.03, -0.09, 0.03, 0.69, 1.27, 3.16, 4.27, 5.73, 6.15,
            6.46, 6.59, 6.65, 7.61, 6.85, 5.10, 5.30, 4.72, 4.37, 4.77, 5.34, 3.64, 1.72,
            -2.21, -3.43, -7.34, -10.55, -13.26, -15.23, -18.26, -24.31, -31.06, -31.87,
            -33.41, -36.13, -37.24, -41.56, -43.97, -47.61, -51.56, -56.65, -59.21, -63.22,
            -67.93, -73.00, -78.27, -83.49, -88.27, -91.46, -95.94, -99.53, -103.36]


def _lines(encoder: list[float]) -> list[str]:
    return [f"Epoch {e}/1000 - Loss Discriminator: {0.009 + 0.0135 * e:.6f}, Loss Encoder: "
            f"{v:.6f}, Loss Decoder: 0.0077" for e, v in enumerate(encoder, 1)]


def test_an_adversarial_loss_running_to_minus_103_is_a_divergence_and_no_go(
        tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _lines(_ENCODER))
    found = [a for a in data["anomalies_detected"] if a["type"] == "divergence"]
    assert found and "no floor" in found[0]["description"]
    assert data["decision"] == "NO-GO"


def test_a_negative_loss_that_settles_is_not_running_away() -> None:
    # A negative dice loss approaching -1, falling by less and less.
    settling = [-(1 - 0.9 ** i) for i in range(1, 60)]
    assert AnomalyType.DIVERGENCE not in {a.type for a in run_of(_lines(settling)).ledger.anomalies}
    # Nor a likelihood that keeps falling, but slower every point, to a few times its start.
    assert running_down(3.0, [-3.0 - 2 * (1 - 0.8 ** i) for i in range(20)]) is None


def test_a_short_dip_below_zero_is_not_enough() -> None:
    assert running_down(1.0, [-1.0, -3.0, -9.0, -27.0]) is None


def test_a_likelihood_improving_steadily_far_below_zero_is_not_running_away() -> None:
    # Sealed-4's Mamba filter: a negative log-likelihood from -332 to -727 over 100
    # epochs, falling steadily for stretches (`loss=-150.7` … `-165.9` in ten batch lines).
    assert running_down(15.0, [-150.7 - 1.7 * i for i in range(10)]) is None

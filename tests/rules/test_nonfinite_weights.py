"""A NaN in the norm of the weights is NaN weights, whatever the loss beside it prints
(issue 24). Stanford's nlc seq2seq (TensorFlow 0.8, sealed-12) prints `epoch 16, iter
400, cost 3.016297, exp_cost 3.040436, grad norm nan, param norm nan, batch time
2.246108, length mean/std 94.953125/10.900731` on every line: a finite cost, but the
model's parameters are NaN and every checkpoint from here is worthless."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.spaced_fields import parse_spaced_fields
from babysit.rules.nonfinite_roles import Role, role_of
from tests.rules.test_loss_rules import verdict_of

_LINE = ("epoch 16, iter {it}, cost {cost:.6f}, exp_cost 3.040436, grad norm nan, "
         "param norm nan, batch time 2.246108, length mean/std 94.953125/10.900731")


def test_every_field_of_the_line_is_read_past_a_pair_of_statistics() -> None:
    parsed = parse_spaced_fields(_LINE.format(it=400, cost=3.016297))
    assert parsed is not None
    assert parsed.metrics["cost"] == 3.016297
    assert {"grad_norm", "param_norm"} <= parsed.metrics.keys()


def test_nan_weights_beside_a_finite_cost_are_no_go(tmp_path: Path) -> None:
    lines = [_LINE.format(it=it, cost=3.02 + 0.01 * (it % 3)) for it in range(400, 1100, 100)]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO"
    assert any(a["type"] == "nan-inf" and a["severity"] == "blocker" and "param_norm" in
               a["description"] for a in data["anomalies_detected"])


def test_weight_norms_have_a_role_of_their_own() -> None:
    assert role_of("param_norm", float("nan")) is Role.WEIGHTS
    assert role_of("weight_norm", float("nan")) is Role.WEIGHTS
    assert role_of("grad_norm", float("nan")) is Role.GRADIENT

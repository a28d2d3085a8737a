"""Losses that blow up (issue 24): a jump of five orders of magnitude in a log too short
to know its noise is a spike all the same, and a loss that may be negative by design (a
mixture density's NLL, a critic's) running away towards −1e9 is a divergence that stays
open while it holds there."""

from __future__ import annotations

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.metric_rules import evaluate_spike
from tests.rules.test_loss_rules import run_of


def _open(lines: list[str]) -> dict[AnomalyType, Severity]:
    return {a.type: a.severity for a in run_of(lines).ledger.anomalies if not a.resolved}


def test_an_explosion_in_a_short_log_is_a_spike():
    lines = [f"Epoch [6][{i}/3681] lr: 0.02, loss: {v}" for i, v in
             ((3150, 0.6186), (3200, 1.0083), (3250, 225192.6), (3300, 1.76e10))]
    found = _open(lines)
    assert AnomalyType.LOSS_SPIKE in found
    assert found[AnomalyType.DIVERGENCE] is Severity.BLOCKER


def test_a_short_log_s_ordinary_jumps_are_not_explosions():
    rules = RuleSettings()
    assert evaluate_spike([0.6, 1.0], 30.0, rules) is None  # 30×: a bad batch early on
    # One point says little: a thousandfold jump after it is not judged (a first
    # print inside a warm-up)...
    assert evaluate_spike([0.6], 500.0, rules) is None
    # ...but four orders of magnitude in one step is no loss's noise (issue 23: 0.144,
    # then 25237 in an excerpt that begins one step before the explosion).
    assert evaluate_spike([0.6], 1e6, rules) is not None
    assert evaluate_spike([0.6, 1.0], 1e5, rules) is not None


def test_a_loss_running_away_towards_minus_infinity_is_a_divergence():
    values = [0.005, -0.01, -89.9, -313214.0, -4.17e6, -2.17e7, -1.5e8, -6.5e7, -1.8e9, -8e8]
    lines = [f"epoch=0 step={i} total loss={v:.5f}" for i, v in enumerate(values)]
    assert _open(lines).get(AnomalyType.DIVERGENCE) is Severity.HIGH


def test_a_negative_loss_that_comes_back_resolves_it():
    values = [0.005, -0.01, -89.9, -2e8, -3e8, -5.0, -4.0, -3.5]
    lines = [f"epoch=0 step={i} total loss={v:.5f}" for i, v in enumerate(values)]
    assert AnomalyType.DIVERGENCE not in _open(lines)


def test_a_negative_nll_of_ordinary_size_is_not_a_runaway():
    values = [2.0 - 0.4 * i for i in range(12)]  # to −2.4: a density's NLL
    lines = [f"epoch=0 step={i} total loss={v:.5f}" for i, v in enumerate(values)]
    assert AnomalyType.DIVERGENCE not in _open(lines)


def test_a_climb_that_accelerates_is_a_divergence_not_a_spike():
    rules = RuleSettings()
    assert evaluate_spike(sorted([5.0, 23.0, 401.0]), 3.6e6, rules) is None


def test_a_short_log_s_jump_off_a_level_it_held_is_a_spike():
    rules = RuleSettings()
    level = sorted([0.0475, 0.0474, 0.0473, 0.0471, 0.0472])
    assert evaluate_spike(level, 0.0612, rules) is not None
    assert evaluate_spike(level, 0.0520, rules) is None  # 10 %: not a jump
    # Points still falling fast (a run's first epochs) hold no level.
    assert evaluate_spike(sorted([2.3, 1.9, 1.6, 1.4]), 1.8, rules) is None
    assert evaluate_spike(sorted([0.0475, 0.0474, 0.0473]), 0.0612, rules) is None  # 3 points
    lines = [f"Epoch {60 + i}/1000 - loss: {v}" for i, v in
             enumerate([0.0475, 0.0474, 0.0473, 0.0471, 0.0472, 0.0612, 0.0958, 0.0877])]
    assert AnomalyType.LOSS_SPIKE in _open(lines)


def test_a_negative_loss_that_grows_a_hundredfold_past_minus_1e8_is_a_blocker():
    # A TF1 loop's `#Step 0, loss = -25622784000.0000, accuracy = 0.0200`: past −1e8 at
    # once, then two orders of magnitude more: numbers blowing up, not a likelihood.
    values = [-2.5e10, -1.4e12, -1.1e13]
    lines = [f"#Step {i}, loss = {v:.4f}, accuracy = 0.0{2 + i}00" for i, v in enumerate(values)]
    assert _open(lines).get(AnomalyType.DIVERGENCE) is Severity.BLOCKER
    assert _open(lines[:2]).get(AnomalyType.DIVERGENCE) is Severity.HIGH

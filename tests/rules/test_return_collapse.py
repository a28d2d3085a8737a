"""A policy that learned and collapsed: its return pinned at its floor, the same printed
value on every episode, long after a best level well above it. Shape: sealed-176's Keras
double DQN on Seaquest (`Episode: 9992, Steps: 3000, eps: 0.010, total rewards: 0.0` on
each of its last 650 episodes, after a mean near 300)."""

from __future__ import annotations

import random
from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def _episodes(rewards: list[float]) -> list[str]:
    return [f"Episode: {i}, Steps: {3000 if r == 0 else 700}, eps: "
            f"{max(0.01, 1 - i / 1500):.3f}, total rewards: {r:.1f}"
            for i, r in enumerate(rewards, start=1)]


def _collapsed(data: dict) -> list[dict]:
    return [a for a in data["anomalies_detected"] if "collapsed" in a["description"]
            and not a.get("resolved")]


def test_a_return_pinned_at_zero_after_learning_is_a_collapse(tmp_path: Path):
    rng = random.Random(3)
    learned = [rng.choice([0, 60, 120, 180, 240, 300, 360, 420]) * min(1, i / 800)
               for i in range(1800)]
    data = verdict_of(tmp_path, _episodes([round(r / 20) * 20 for r in learned] + [0.0] * 200))
    assert _collapsed(data) and data["decision"] == "NO-GO", data["summary"]


def test_a_return_at_its_floor_from_the_start_is_no_collapse(tmp_path: Path):
    # Pong's -21.0 while the policy is random, then learning
    rewards = [-21.0] * 300 + [-21.0 + i / 20 for i in range(300)]
    assert not _collapsed(verdict_of(tmp_path, _episodes(rewards)))


def test_a_noisy_return_touching_its_floor_is_no_collapse(tmp_path: Path):
    rng = random.Random(5)
    rewards = [rng.choice([0.0, 0.0, 100.0, 200.0, 300.0]) for _ in range(2000)]
    assert not _collapsed(verdict_of(tmp_path, _episodes(rewards)))

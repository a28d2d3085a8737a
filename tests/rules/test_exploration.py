"""A run that finishes with its agent's exploration rate still near 1 acted at random
nearly all the time: its result cannot be called trained (issue 24). Shape: sealed-12's
TensorFlowOnSpark DDPG recommender, `recommended items : 43,  epsilon : 0.999, reward :
-0.5` for ten episodes per worker, then a clean shutdown."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def episodes(epsilons: list[float]) -> list[str]:
    lines = [f"recommended items : {11 + i % 80},  epsilon : {eps:.3f}, reward : "
             f"{-0.5 if i % 3 else 1.0}" for i, eps in enumerate(epsilons)]
    return [*lines, "Training complete."]


def _exploration(data: dict) -> list[dict]:
    return [a for a in data["anomalies_detected"]
            if a["type"] == "not-learning" and "exploration" in a["description"]]


def test_a_finished_run_still_exploring_at_random_is_conditional(tmp_path: Path):
    data = verdict_of(tmp_path, episodes([1.0] * 30 + [0.999] * 30 + [0.998] * 10))
    found = _exploration(data)
    assert found and found[0]["severity"] == "high", data["anomalies_detected"]
    assert data["terminal_state"] == "SUCCEEDED" and data["decision"] == "CONDITIONAL"


def test_an_annealed_exploration_rate_raises_nothing(tmp_path: Path):
    annealed = [max(0.05, 1.0 - 0.02 * i) for i in range(70)]
    assert _exploration(verdict_of(tmp_path, episodes(annealed))) == []


def test_a_rate_at_one_on_every_episode_is_an_agent_that_never_acted_on_its_own(
        tmp_path: Path):
    """sealed-159's CarRacing DQN: `eps : 100.0%` from its first line to `RL end`, its
    score flat at -0.03: a random agent, delivered as trained."""
    lines = [f"n_episode :{20 * i}, score : {-0.03 + 0.001 * (i % 5):.3f}, n_buffer : "
             f"{min(50000, 4998 * i)}, eps : 100.0%, step : 238, time : 0:00:07"
             for i in range(1, 25)]
    (tmp_path / "pct").mkdir()
    data = verdict_of(tmp_path / "pct", [*lines, "RL end"])
    found = _exploration(data)
    assert found and found[0]["severity"] == "blocker", data["anomalies_detected"]
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO")
    (tmp_path / "one").mkdir()
    assert _exploration(verdict_of(tmp_path / "one", episodes([1.0] * 70)))
    # a constant 1 beside no episode or return: not an agent's exploration
    (tmp_path / "loss").mkdir()
    flat = [f"iter {i} loss {2.0 - i / 100:.3f} epsilon 1.0" for i in range(1, 40)]
    assert _exploration(verdict_of(tmp_path / "loss", [*flat, "Training complete."])) == []

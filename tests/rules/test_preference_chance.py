"""A DPO-style run whose loss never left ln 2: it never told chosen from rejected."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def _dpo(losses: list[float], accuracies: list[float], finished: bool) -> list[str]:
    lines = [f"{{'loss': {loss}, 'grad_norm': 1.79, 'learning_rate': 8.4e-07, "
             f"'rewards/chosen': 0.0324, 'rewards/rejected': 0.0336, 'rewards/accuracies': "
             f"{acc}, 'rewards/margins': -0.0012, 'epoch': {0.08 * (i + 1):.2f}}}"
             for i, (loss, acc) in enumerate(zip(losses, accuracies, strict=True))]
    if finished:
        lines.append("{'train_runtime': 3118.7, 'train_samples_per_second': 1.6, "
                     "'train_steps_per_second': 0.04, 'train_loss': 0.6913, 'epoch': 1.0}")
    return lines


def test_a_preference_loss_held_at_ln_2_over_a_finished_run_is_not_learning(tmp_path: Path):
    losses = [0.6934, 0.6943, 0.695, 0.6921, 0.6912, 0.6935, 0.6901, 0.6899, 0.6893, 0.6887,
              0.6890, 0.6884]
    accuracies = [0.46, 0.49, 0.47, 0.52, 0.5, 0.48, 0.53, 0.51, 0.55, 0.54, 0.52, 0.53]
    data = verdict_of(tmp_path, _dpo(losses, accuracies, finished=True))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert any(a["type"] == "not-learning" for a in data["anomalies_detected"])
    # The same plateau while the run goes on is a notice.
    data = verdict_of(tmp_path, _dpo(losses, accuracies, finished=False))
    assert data["decision"] == "CONDITIONAL", data["summary"]


def test_a_preference_run_that_learns_is_not_flagged(tmp_path: Path):
    losses = [0.6931 - 0.025 * i for i in range(12)]
    accuracies = [0.5 + 0.03 * i for i in range(12)]
    data = verdict_of(tmp_path, _dpo(losses, accuracies, finished=True))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]

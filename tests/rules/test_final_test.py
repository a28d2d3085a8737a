"""A run that over-fitted and kept its best checkpoint, whose final test then scores below
every evaluation it made: the best was the evaluation's noise (issue 24). Shape:
sealed-11's PaddleNLP few-shot prompt tuning, `eval_loss: 5.66…, eval_accuracy: 0.53125`
every 100 steps, `Loading best model from ./checkpoints/checkpoint-300 (score: 0.5875).`,
then `***** test metrics *****` and `  test_accuracy           =     0.5208`."""

from __future__ import annotations

from pathlib import Path

from babysit.rules.final_test import final_test_below_evaluations
from tests.rules.test_loss_rules import verdict_of

_HEAD = "[2022-08-31 16:12:45,991] [    INFO] - "


def paddle_run(evals: list[tuple[float, float]], test_accuracy: float) -> list[str]:
    lines = []
    loss = 0.6
    for i, (eval_loss, accuracy) in enumerate(evals, 1):
        for j in range(1, 11):
            step = 100 * (i - 1) + 10 * j
            loss = loss * 0.5
            lines.append(f"{_HEAD}loss: {loss:.8g}, learning_rate: 2.9e-05, global_step: "
                         f"{step}, interval_runtime: 2.05, epoch: {step / 20}")
        lines += [f"{_HEAD}***** Running Evaluation *****",
                  f"{_HEAD}eval_loss: {eval_loss}, eval_accuracy: {accuracy}, "
                  f"eval_runtime: 1.7, epoch: {5.0 * i}",
                  f"{_HEAD}Saving model checkpoint to ./checkpoints/checkpoint-{100 * i}"]
    best = 100 * (1 + max(range(len(evals)), key=lambda k: evals[k][1]))
    return [*lines, f"{_HEAD}", "Training completed. ", "",
            f"{_HEAD}Loading best model from ./checkpoints/checkpoint-{best} (score: "
            f"{max(a for _, a in evals)}).",
            f"{_HEAD}train_runtime: 218.7, train_loss: 0.113, epoch: {5.0 * len(evals)}",
            f"{_HEAD}***** test metrics *****",
            f"{_HEAD}  test_accuracy           =     {test_accuracy}",
            f"{_HEAD}  test_loss               =     4.7111"]


_OVERFIT = [(3.9, 0.55), (4.1, 0.59), (4.8, 0.555), (5.1, 0.57), (5.4, 0.56), (5.7, 0.54)]


def test_a_final_test_below_every_evaluation_keeps_the_decline_open(tmp_path: Path):
    data = verdict_of(tmp_path, paddle_run(_OVERFIT, 0.512))
    open_ones = [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"
                 and a["severity"] == "high" and "resolved:" not in a["description"]]
    assert any("test_accuracy" in a["description"] for a in open_ones), open_ones
    assert data["terminal_state"] == "SUCCEEDED" and data["decision"] == "CONDITIONAL"


def test_a_final_test_in_line_with_the_evaluations_leaves_the_kept_best_alone():
    evals = {"eval_accuracy": [0.55, 0.59, 0.555, 0.57, 0.56, 0.54], "test_accuracy": [0.58]}
    assert final_test_below_evaluations(evals) is None
    evals["test_accuracy"] = [0.51]
    assert "below every one" in (final_test_below_evaluations(evals) or "")
    # a test scored at every evaluation is a series of its own, not a final test
    assert final_test_below_evaluations({"val_acc": [0.8, 0.9, 0.92],
                                         "test_acc": [0.7, 0.75, 0.71]}) is None
    # lower is better for a loss: a final test loss above every evaluation's
    assert final_test_below_evaluations({"val_loss": [0.9, 0.7, 0.8],
                                         "test_loss": [1.3]}) is not None


_IMPROVING = [(0.9, 0.60), (0.8, 0.66), (0.7, 0.71), (0.6, 0.74)]


def test_a_run_that_never_got_worse_is_flagged_only_when_the_test_falls_far(tmp_path: Path):
    (tmp_path / "far").mkdir()
    (tmp_path / "near").mkdir()
    far = verdict_of(tmp_path / "far", paddle_run(_IMPROVING, 0.45))
    assert any("test_accuracy" in a["description"] and a["severity"] == "high"
               for a in far["anomalies_detected"]), far["anomalies_detected"]
    assert far["decision"] == "CONDITIONAL"
    near = verdict_of(tmp_path / "near", paddle_run(_IMPROVING, 0.68))
    assert not any("test_accuracy" in a["description"] for a in near["anomalies_detected"])

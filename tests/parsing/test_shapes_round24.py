"""Shapes read and judged since the twenty-fourth session, each on lines written in the
real shape of a public log."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.events import find_events
from tests.rules.test_loss_rules import verdict_of

_REPORT = ["              precision    recall  f1-score   support",
           "",
           "           0       0.61      0.75      0.67        59",
           "           1       0.00      0.00      0.00         1",
           "           2       0.40      0.31      0.35        32",
           "           3       0.50      0.27      0.35        15",
           "           4       0.64      0.68      0.66        31",
           "",
           "    accuracy                           0.57       138",
           "   macro avg       0.43      0.40      0.41       138",
           "weighted avg       0.55      0.57      0.55       138"]


def test_a_per_class_report_after_training_is_no_run_starting_again(tmp_path: Path):
    # scikit-learn's classification_report under xgboost's rounds: each row is a class,
    # led by its label (0, 1, 2 …), not a step of a second run.
    lines = [f"[{n}]\tvalidation_0-mlogloss:{1.8 - 0.01 * n:.5f}\tvalidation_0-merror:"
             f"{0.56 - 0.001 * n:.5f}" for n in range(60)]
    lines += ["train loss: 0.0526, train acc: 0.9854, dev loss: 1.4213, dev acc: 0.5677",
              "test loss: 1.4213719097491835, test acc: 0.567741935483871", *_REPORT]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["total_steps"] == 59


def test_a_per_class_report_each_epoch_leaves_the_epochs_alone(tmp_path: Path):
    lines: list[str] = []
    for epoch in range(1, 9):
        lines.append(f"Epoch {epoch}/8 - loss: {1.0 / epoch:.4f} - val_loss: {1.1 / epoch:.4f}")
        lines += _REPORT
    lines.append("Training finished")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


@pytest.mark.parametrize("closing", ["Optimization Finished!", "TRAINING COMPLETE",
                                     "Training Done.", "fine-tuning is Done",
                                     "[2022-06-26 22:10:35,305]Optimization Finished!"])
def test_training_over_in_any_casing_is_the_run_s_end(closing: str):
    # GCN's `Optimization Finished!`: the run's own word that it is over, an event as it
    # is printed (a live watch ends on it), not only a closing line judged at the end.
    assert [e.kind for e in find_events(closing)] == [EventKind.COMPLETED]


def test_an_early_stop_that_occurred_ends_the_run_as_planned(tmp_path: Path):
    # pytorch-tabnet: `Early stopping occurred at epoch 30 with best_epoch = 25 and
    # best_val_0_AUPRC = 0.37454`, the last line of its fit.
    lines = [f"epoch {n:<2}| loss: {0.3 - 0.004 * n:.5f} | val_0_auc: {0.7 + 0.004 * n:.5f} "
             f"| val_0_logloss: {0.2 - 0.001 * n:.5f} |  0:00:{n * 2:02d}s" for n in range(31)]
    lines += ["", "Early stopping occurred at epoch 30 with best_epoch = 25 and "
              "best_val_0_auc = 0.84"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_the_training_steps_a_configuration_dict_quotes_are_the_plan(tmp_path: Path):
    # Flax's examples log their hyperparameters as a dict, then `[N]` metric lines and
    # clu's progress notes; the last step is the plan reached.
    lines = ["INFO:absl:Hyperparameters: {'batch_size': 256, 'eval_every_steps': 50, "
             "'learning_rate': 0.001, 'num_train_steps': 100, 'log_every_steps': 10}"]
    for n in range(10, 101, 10):
        lines.append(f"INFO:absl:[{n}] steps_per_sec={2.1 + n / 1000:.6f}")
        lines.append(f"INFO:absl:[{n}] train_accuracy={0.9 + n / 2000:.6f}, "
                     f"train_loss={0.07 - n / 5000:.6f}")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["target_steps"]) == ("SUCCEEDED", 100)


def test_a_search_trial_s_quoted_iterations_are_no_plan(tmp_path: Path):
    # hyperopt prints each trial's parameters: a trial's rounds, not the search's plan.
    lines: list[str] = []
    for trial in range(6):
        lines += ["{", f' "num_iterations": {75.0 * (1 + trial % 2)},', ' "max_depth": 7', "}"]
        lines.append(f"[{trial + 1}] valid_0's binary_logloss: {0.52 - 0.001 * trial:.6f}")
    assert verdict_of(tmp_path, lines)["target_steps"] is None

"""The area under the ROC curve and the average precision are evaluations where higher
is better: a run that prints them (`val_roc`, `val_ap`) and nothing else of its
validation has that validation judged. Lines quoted from tkipf/gae's train.py output,
two launches in one paste (tests/fixtures/logs/public/sealed-6/
tkipf_gae_tf1_two_runs_200_and_1000_epochs_optimization_finished.log)."""

from __future__ import annotations

from pathlib import Path

from babysit.metric_names import eval_direction
from tests.core.test_endings import once


def test_roc_and_ap_are_higher_is_better_as_whole_words():
    assert eval_direction("val_roc") == 1
    assert eval_direction("val_ap") == 1
    assert eval_direction("val/ap@50") == 1
    # not inside other words
    assert eval_direction("val_rocket_loss") == -1
    assert eval_direction("val_apt") == 0
    assert eval_direction("val_lap_time") == 0


_GAE = (
    "Epoch: 0198 train_loss= 0.40438 train_acc= 0.80021 val_roc= 0.91772 val_ap= 0.93526 "
    "time= 0.42112\n"
    "Epoch: 0199 train_loss= 0.40435 train_acc= 0.80037 val_roc= 0.91785 val_ap= 0.93544 "
    "time= 0.51987\n"
    "Epoch: 0200 train_loss= 0.40434 train_acc= 0.80052 val_roc= 0.91780 val_ap= 0.93540 "
    "time= 0.49462\n"
    "Optimization Finished!\n"
    "Test ROC score: 0.923083293426\n"
    "Test AP score: 0.929091873277\n"
    "\n"
    "Epoch: 0999 train_loss= 0.39955 train_acc= 0.89461 val_roc= 0.86105 val_ap= 0.85885 "
    "time= 0.43444\n"
    "Epoch: 1000 train_loss= 0.39954 train_acc= 0.89462 val_roc= 0.86104 val_ap= 0.85884 "
    "time= 0.45543\n"
    "Optimization Finished!\n"
    "Test ROC score: 0.873462980099\n"
    "Test AP score: 0.893914158688\n")


def test_a_longer_training_whose_validation_roc_fell_is_not_go(tmp_path: Path):
    """The 1000-epoch launch ends at val_roc 0.861 after the 200-epoch one's 0.918, its
    training accuracy up (0.80 → 0.89): an evaluation that got worse while the training
    improved. Finished, but CONDITIONAL with eval-degradation."""
    data = once(tmp_path, _GAE)
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "SUCCEEDED"), \
        data["summary"]
    found = [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"]
    assert any("val_roc" in a["description"] for a in found)


def test_the_first_launch_alone_is_go(tmp_path: Path):
    """The 200-epoch launch alone: its validation steady, finished. GO."""
    first = _GAE.split("\n\n")[0] + "\n"
    data = once(tmp_path, first)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]

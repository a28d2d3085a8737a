"""An epoch's training loss and its validation loss both up tenfold from one summary to
the next: the weights have blown up, however few summaries came before (issue 24).
Shape: sealed-15's braindecode run, `2017-10-19 10:45:01,894 INFO : train_loss
19.90990` and `valid_loss 19.79807` after `train_loss 0.10569`, `valid_loss 0.15377`."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def summaries(epochs: list[tuple[float, float]]) -> list[str]:
    lines = ["2017-10-19 10:39:02,454 INFO : Run until first stop..."]
    for epoch, (train, valid) in enumerate(epochs):
        stamp = f"2017-10-19 10:{41 + 4 * epoch}:27"
        lines += [f"{stamp},764 INFO : Epoch {epoch}",
                  f"{stamp},791 INFO : train_loss                {train:.5f}",
                  f"{stamp},792 INFO : valid_loss                {valid:.5f}",
                  f"{stamp},795 INFO : train_misclass            0.01854",
                  f"{stamp},803 INFO : ",
                  f"{stamp},835 INFO : Time only for training updates: 96.43s"]
    return lines


def test_both_losses_up_a_hundredfold_in_one_epoch_is_a_blocker(tmp_path: Path):
    data = verdict_of(tmp_path, summaries([(0.12, 0.16), (18.7, 19.2)]))
    kinds = {a["type"]: a["severity"] for a in data["anomalies_detected"]}
    assert kinds.get("divergence") == "blocker" and "loss-spike" in kinds, kinds
    assert data["terminal_state"] == "RUNNING" and data["decision"] == "NO-GO"


def test_a_training_loss_that_jumps_alone_is_not_this(tmp_path: Path):
    data = verdict_of(tmp_path, summaries([(0.12, 0.16), (1.9, 0.18)]))
    assert "blown up" not in str(data["anomalies_detected"])


def test_losses_that_fall_raise_nothing(tmp_path: Path):
    data = verdict_of(tmp_path, summaries([(0.52, 0.61), (0.31, 0.40), (0.22, 0.35)]))
    assert [a for a in data["anomalies_detected"]
            if a["severity"] in ("high", "blocker")] == []


def test_a_new_launch_starting_again_near_the_first_loss_is_not_a_blow_up(tmp_path: Path):
    epochs = [(1.3, 1.4), (0.4, 0.5), (0.1, 0.12), (1.25, 1.35), (0.5, 0.6)]
    data = verdict_of(tmp_path, summaries(epochs))
    assert "blown up" not in str(data["anomalies_detected"])

"""Whole logs of the two classes the nan-inf rule must tell apart (issues 23, 24): a
non-finite figure that is not the objective while the loss stays finite (reported,
never a NO-GO on its own), and a NaN the run or its framework states — in a metric, in
words, or by a guard that stops training (NO-GO; FAILED when the guard ended it).
Written in the shapes of the frameworks, not copied from the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rules.test_loss_rules import verdict_of


def _nan_anomalies(data: dict) -> list[tuple[str, str]]:
    return [(a["severity"], a["description"]) for a in data["anomalies_detected"]
            if a["type"] == "nan-inf"]


def test_sb3_rollout_means_before_any_episode_ended_are_reported_not_blocking(tmp_path: Path):
    table = ["-----------------------------------------",
             "| rollout/                |             |",
             "|    ep_len_mean          | nan         |",
             "|    ep_rew_mean          | nan         |",
             "| time/                   |             |",
             "|    fps                  | 812         |",
             "|    total_timesteps      | {steps:<11} |",
             "| train/                  |             |",
             "|    value_loss           | {loss:<11} |",
             "|    policy_gradient_loss | -0.0123     |",
             "-----------------------------------------"]
    lines = [line.format(steps=2048 * i, loss=f"{0.9 / i:.4f}") for i in range(1, 4)
             for line in table]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "CONDITIONAL"
    assert [s for s, _ in _nan_anomalies(data)] == ["medium"]


def test_fp16_overflow_steps_at_the_start_do_not_block_a_run_whose_loss_is_finite(
        tmp_path: Path):
    lines = [f"{{'loss': {2.5 - i * 0.05:.3f}, 'grad_norm': {norm}, 'learning_rate': 2e-05, "
             f"'epoch': {0.01 * (i + 1):.2f}}}"
             for i, norm in enumerate(["inf", "3.21", "2.98", "2.77", "2.60"])]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] != "NO-GO"
    assert all(s == "medium" or "resolved:" in d for s, d in _nan_anomalies(data))


def test_a_grad_norm_that_stays_nan_beside_a_finite_loss_is_a_blocker(tmp_path: Path):
    lines = [f"Epoch(train) [1][{i * 10}/500]  lr: 1.0e-04  loss: {2.4 - i * 0.01:.4f}  "
             f"grad_norm: {'nan' if i > 3 else '1.7'}" for i in range(1, 8)]
    assert verdict_of(tmp_path, lines)["decision"] == "NO-GO"


@pytest.mark.parametrize(("stop_line", "state"), [
    # fastai's TerminateOnNaNCallback
    ("Epoch/Batch (0/57): Invalid loss, terminating training.", "FAILED"),
    # Lightning's EarlyStopping(check_finite=True)
    ("Monitored metric train_loss = nan is not finite. Previous best value was 0.41. "
     "Signaling Trainer to stop.", "FAILED"),
    # a hand loop's guard that skips the batch and goes on
    ("[warn] NaN loss detected at step 56, skipping batch", "RUNNING"),
])
def test_a_framework_guard_that_sees_a_nan_is_a_no_go(tmp_path: Path, stop_line: str,
                                                      state: str):
    lines = [f"step {i} | loss {2.0 - i * 0.01:.4f} | lr 3e-4" for i in range(1, 56)]
    data = verdict_of(tmp_path, [*lines, stop_line])
    assert data["decision"] == "NO-GO"
    assert data["terminal_state"] == state
    assert any(s == "blocker" for s, _ in _nan_anomalies(data))


def test_a_yolo_table_with_nan_loss_columns_is_a_no_go(tmp_path: Path):
    # The columns are losses by position, not by name: nothing finite vouches for them.
    header = "      Epoch   gpu_mem       box       obj       cls     total   targets  img_size"
    rows = [f"     {e}/299     3.61G   {box}   {box}   {box}   {box}        41       640"
            for e, box in [(0, "0.0812"), (1, "0.0754"), (2, "nan"), (3, "nan")]]
    data = verdict_of(tmp_path, [line for row in rows for line in (header, row)])
    assert data["decision"] == "NO-GO"


def _epochs_with_rate(rate: str, losses: list[str]) -> list[str]:
    """A hand-written loop that prints its epoch's learning rate on a line of its own,
    then the epoch's loss (UaNet's `[epoch 2, lr inf, use_rcnn: False]` shape)."""
    lines = []
    for epoch, loss in enumerate(losses, 1):
        lines += [f"[epoch {epoch}, lr {rate}, use_rcnn: False, use_mask: False]",
                  f"Train Epoch {epoch}, iter 35, total time 251.8, loss {loss}", ""]
    return lines


def test_a_learning_rate_printed_as_inf_while_the_loss_keeps_moving_is_no_blocker(
        tmp_path: Path):
    # An update at an infinite rate leaves no finite weight: a loss that stays finite and
    # keeps changing for epochs after it shows the printed rate is not the one applied.
    data = verdict_of(tmp_path, _epochs_with_rate("inf", ["5.21", "3.91", "3.49", "3.10",
                                                         "2.95", "2.81"]))
    found = _nan_anomalies(data)
    assert data["decision"] != "NO-GO"
    assert found and all(s == "low" or "resolved:" in d for s, d in found)
    assert any("not the one applied" in d for _, d in found)


@pytest.mark.parametrize("losses", [
    ["5.21", "nan", "nan", "nan"],  # the rate was applied: the weights went with it
    ["5.21"],  # nothing after it to show it was not
])
def test_a_learning_rate_printed_as_inf_stays_a_blocker_without_finite_losses_after_it(
        tmp_path: Path, losses: list[str]):
    data = verdict_of(tmp_path, _epochs_with_rate("inf", losses))
    assert data["decision"] == "NO-GO"
    assert any(s == "blocker" and "resolved:" not in d for s, d in _nan_anomalies(data))

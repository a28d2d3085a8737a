"""Where a run's plan is, and whether it reached it, in shapes of sealed-27's logs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.rules.test_loss_rules import verdict_of

_BAR = "█" * 40


def test_a_bar_that_names_its_epoch_of_the_plan_finishes_the_plan(tmp_path: Path):
    # A VQ-VAE loop: `Epoch 10/10 - Training: 100%|…| 2533/2533`, then its validation.
    lines = []
    for epoch in range(1, 11):
        lines += [f"Epoch {epoch}/10 - Training: {p}%|{_BAR[: p * 40 // 100]:<40}| "
                  f"{2533 * p // 100}/2533 [01:0{p // 20}<00:00,  4.1it/s, loss={0.05 / epoch:.4f}]"
                  for p in (50, 100)]
        lines.append(f"Epoch {epoch}/10 - Validation Loss: {0.3 - epoch / 100:.4f}")
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    assert verdict_of(tmp_path, lines[:-4])["terminal_state"] == "RUNNING"


def test_epochs_against_a_command_line_s_plan_in_a_log_whose_steps_have_none(
        tmp_path: Path):
    lines = ["train_translation.py --batch_size=32 --epochs=40 --nhead=4"]
    for epoch in range(40):
        lines += [json.dumps({"epoch": epoch, "step": epoch * 6, "loss": 7 - epoch / 10,
                              "time": 30 * epoch}), "translation model saved in checkpoint"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, lines[:60])["terminal_state"] == "RUNNING"


def test_a_bar_s_step_the_epochs_leave_behind_is_no_plan(tmp_path: Path):
    # Ultralytics' first bar drawn before its table (`0/1426`), then rows of epochs only.
    lines = ["  0%|          | 0/1426 [00:00<?, ?it/s]",
             "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"]
    for epoch in range(1, 21):
        lines += [f"      {epoch}/20      2.29G      {1.2 - epoch / 50:.3f}      1.203     0.8975"
                  f"         21        640: 100%|██████████| 1426/1426 [04:51<00:00,  4.90it/s]",
                  "                 Class     Images  Instances      Box(P          R      mAP50  "
                  "mAP50-95): 100%|██████████| 246/246 [00:31<00:00,  7.90it/s]",
                  f"                   all       7866       9060      0.694      0.879      "
                  f"{0.5 + epoch / 100:.3f}      0.555"]
    lines += ["", "20 epochs completed in 1.677 hours."]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def test_a_final_report_s_lines_per_class_are_no_training_and_no_series(tmp_path: Path):
    # sealed-27's DINO segmentation run: 100 epochs, then `=== Final Val Metrics ===`.
    lines = [f"Epoch {e}/100 [130.1s] | LR: 1.0e-06 | Train Loss: {1.2 - e / 300:.4f} | "
             f"Val Loss: {0.9 - e / 400:.4f} | mIoU={30 + e / 6:.2f}% mDice={40 + e / 7:.2f}%"
             for e in range(1, 101)]
    lines += ["", "=== Final Val Metrics ===",
              "  Class 1: P=87.89%  R=77.91%  IoU=70.35%  Dice=82.60%",
              "  Class 2: P=8.74%  R=47.10%  IoU=7.96%  Dice=14.74%",
              "  Mean: P=52.88%  R=61.59%  mIoU=42.87%  mDice=54.50%"]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    assert data["final_metrics"]["eval/miou"] == 42.87
    assert "eval/iou" not in data["final_metrics"]  # the breakdown by class is left out


def test_keras_restoring_its_best_weights_keeps_its_best(tmp_path: Path):
    # EarlyStopping(restore_best_weights=True): val_loss worse for ten epochs after its
    # best, then the best weights put back.
    lines = []
    for epoch in range(1, 27):
        val = 0.06 - 0.0023 * epoch if epoch <= 16 else 0.0232 + 0.006 * (epoch - 16)
        lines += [f"Epoch {epoch}/40",
                  f"485/485 [==============================] - 5s 10ms/step - loss: "
                  f"{0.2 / epoch:.4f} - accuracy: 0.99 - val_loss: {val:.4f} - val_accuracy: 0.99"]
    lines += ["Epoch 26: early stopping",
              "Restoring model weights from the end of the best epoch: 16.", "Training completed!"]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    found = [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"]
    assert found and all("restored its best weights (epoch 16)" in a["description"]
                         for a in found)


def test_training_announced_again_after_an_end_is_a_new_round_running(tmp_path: Path):
    # A NAS predictor's rounds (sealed-27): each closed by `Training End!`, its result and
    # its save; the log stops just after the fifth round's `Start Training!`.
    log = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-27"
           / "pytorch_lightnas_nasbench201_predictor_rounds_running.log")
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[-1].endswith("Start Training!")
    again = verdict_of(tmp_path, lines)
    assert (again["terminal_state"], again["decision"]) == ("RUNNING", "CONDITIONAL")
    ended = verdict_of(tmp_path, lines[:-1])  # its preamble only: not yet announced
    assert ended["terminal_state"] == "SUCCEEDED", ended["summary"]


def test_an_earlier_launch_that_did_not_learn_is_history_once_the_run_starts_again(
        tmp_path: Path):
    # ST-GCN's log.txt (sealed-29): launches appended over two days; one sat at exactly
    # ln 5, and the latest has only begun. The latest launch is judged on its own points.
    stuck = [f"[03.24.23|13:{i:02d}:34] \tIter {i * 10} Done. | loss: 1.6094375848770142 | "
             f"lr: 0.010000" for i in range(12)]
    again = ["[03.25.23|13:02:47] Training epoch: 0",
             "[03.25.23|13:02:57] \tIter 0 Done. | loss: 1.6589 | lr: 0.010000"]
    data = verdict_of(tmp_path, stuck + again)
    assert data["decision"] != "NO-GO", data["summary"]
    data = verdict_of(tmp_path, stuck)
    assert data["decision"] == "NO-GO", data["summary"]

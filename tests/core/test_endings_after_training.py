"""A finished run is read as finished whatever it does after its last training step
(issue 23, sealed class 1): an early stop in the framework's own words, a final
evaluation, a test pass, inference or an export, the run's own ETA at zero. And none of
these is taken for the end of a run that stood well short of its plan, or that goes on
training after it."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_endings import once


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


def _lightning_epochs(epochs: int, batches: int = 250) -> str:
    # Lightning 2.x TQDMProgressBar, one finished bar per epoch (the redraws collapse to
    # their last frame in a file): `Epoch 7: 100%|██████████| 250/250 [00:12<00:00,
    # 20.10it/s, v_num=0, train_loss=0.412, val_loss=0.455]`.
    return "".join(
        f"Epoch {e}: 100%|██████████| {batches}/{batches} [00:12<00:00, 20.10it/s, v_num=0, "
        f"train_loss={1.2 - e * 0.05:.3f}, val_loss={1.3 - min(e, 6) * 0.05:.3f}]\n"
        for e in range(epochs))


def test_lightning_early_stopping_in_its_own_words_is_a_finished_run(tmp_path: Path):
    # lightning/pytorch/callbacks/early_stopping.py `_evaluate_stopping_criteria`:
    # "Monitored metric {monitor} did not improve in the last {wait_count} records.
    # Best score: {best:.3f}. Signaling Trainer to stop." (logged at INFO).
    text = ("GPU available: True (cuda), used: True\n"
            "  | Name  | Type   | Params\n0 | model | ResNet | 11.2 M\n"
            + _lightning_epochs(12)
            + "Monitored metric val_loss did not improve in the last 3 records. "
              "Best score: 1.000. Signaling Trainer to stop.\n")
    assert _verdict(once(tmp_path, text)) == ("GO", "SUCCEEDED")


def test_patience_used_up_then_early_stopping_is_a_finished_run(tmp_path: Path):
    # The LTSF-Linear / Informer family (utils/tools.py EarlyStopping): `EarlyStopping
    # counter: N out of P` at each epoch without improvement, then `Early stopping` from
    # the training loop, then the test pass.
    lines = ["Args in experiment:", "Namespace(train_epochs=100, patience=3, ...)"]
    for epoch in range(1, 13):
        lines.append(f"Epoch: {epoch} cost time: 4.21")
        lines.append(f"Epoch: {epoch}, Steps: 132 | Train Loss: {0.6 - min(epoch, 8) * 0.05:.7f} "
                     f"Vali Loss: {0.7 - min(epoch, 9) * 0.05:.7f} "
                     f"Test Loss: {0.72 - min(epoch, 9) * 0.05:.7f}")
        if epoch > 9:
            lines.append(f"EarlyStopping counter: {epoch - 9} out of 3")
        else:
            lines.append("Validation loss decreased (0.51 --> 0.46).  Saving model ...")
    lines += ["Early stopping", ">>>>>>>testing : ETTh1_336_96<<<<<<<<<<<<<<<<<<<<",
              "test 2785", "mse:0.3700, mae:0.3951"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def test_a_final_evaluation_one_logging_interval_short_of_the_plan_ends_the_run(
        tmp_path: Path):
    # A hand-written loop that logs every 10 of 542 steps per epoch, then the test line:
    # its last training line (`step 540/542`) can never show the planned total.
    lines = [f"Epoch {e}/2, step {s}/542, loss = {0.03 / (1 + (e - 1) * 54 + s // 10):.4f}"
             for e in (1, 2) for s in range(10, 542, 10)]
    data = once(tmp_path, "\n".join([*lines, "RMSE 30.9601, MAPE 0.3924"]) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def test_a_final_evaluation_far_from_the_plan_is_no_end(tmp_path: Path):
    lines = [f"Epoch 1/2, step {s}/542, loss = {0.03 / (1 + s // 10):.4f}"
             for s in range(10, 300, 10)]
    data = once(tmp_path, "\n".join([*lines, "RMSE 30.9601, MAPE 0.3924"]) + "\n")
    assert data["terminal_state"] == "RUNNING"
    assert data["decision"] != "GO"


def test_a_test_pass_after_training_ends_a_run_without_a_planned_total(tmp_path: Path):
    # Lightning's CSVLogger metrics.csv: train rows, validation rows, then the one row
    # `trainer.test()` writes (only test_* filled).
    rows = ["epoch,step,test_loss,train_loss,val_accuracy,val_loss"]
    for step in range(49, 2000, 50):
        rows.append(f"{step // 400},{step},,{0.6 / (1 + step / 200):.5f},,")
        if step % 400 == 399:
            rows.append(f"{step // 400},{step},,,0.98,{0.07 / (1 + step / 400):.5f}")
    rows.append("5,1999,0.0322,,,")
    data = once(tmp_path, "\n".join(rows) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def test_a_test_banner_followed_by_more_training_is_no_end(tmp_path: Path):
    lines = [f"step {s} loss {2.0 / (1 + s / 100):.4f}" for s in range(10, 500, 10)]
    lines.insert(20, "******** Test evaluation ********")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "RUNNING"


def test_the_last_planned_epoch_said_done_ends_the_run_though_inference_follows(
        tmp_path: Path):
    # PaddleRec tools/trainer.py: `epoch: N done, AUC: ..., epoch time: ...` for epochs
    # 0..19 of `epochs: 20`, then tools/infer.py printing the same words for the epochs
    # it loads.
    lines = ["runner:", "  epochs: 20", "  train_batch_size: 1024"]
    for epoch in range(20):
        lines.append(f"2022-04-12 23:00:00,000 - INFO - epoch: {epoch}, batch_id: 0, AUC: 0.90, "
                     f"ACC: 0.88, avg_reader_cost: 0.0005 sec, ips: 5298.00 ins/s")
        lines.append(f"2022-04-12 23:01:00,000 - INFO - epoch: {epoch} done, AUC: "
                     f"{0.90 + epoch * 0.002:.6f},ACC: 0.89, epoch time: 71.35 s")
    lines += ["$ python -u ../../../tools/infer.py -m config.yaml",
              "2022-04-12 23:20:18,932 - INFO - load model epoch 15",
              "2022-04-12 23:21:27,019 - INFO - epoch: 15 done, AUC: 0.942212,ACC: 0.89377, "
              "epoch time: 68.09 s"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def test_an_epoch_short_of_the_plan_said_done_is_no_end(tmp_path: Path):
    lines = ["epochs: 20"]
    for epoch in range(1, 12):
        lines.append(f"epoch: {epoch}, batch_id: 0, loss: {1.0 / epoch:.4f}")
        lines.append(f"epoch: {epoch} done, loss: {1.0 / epoch:.4f}")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED"


def test_the_evaluation_metrics_after_a_completion_line_are_not_more_training(
        tmp_path: Path):
    # cgcnn2 `cgcnn-tr`: `Epoch [300/300] - Train Loss: .., Valid Loss: ..`, `Training
    # complete.`, then its test metrics one per line.
    lines = [f"2025-07-07 19:14:{e % 60:02d}.172 INFO: Epoch [{e:03d}] - Train Loss: "
             f"{145.0 / e:.5f}, Valid Loss: {70.0 / e ** 0.5:.5f}" for e in range(1, 61)]
    lines += ["2025-07-07 19:14:40.172 INFO: Training complete.", "MSE: 14.2267",
              "R2: 0.9384", "MAE: 2.0564"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


def test_the_model_saved_to_a_final_path_ends_the_run(tmp_path: Path):
    # Hugging Face Trainer `Saving model checkpoint to <dir>` (the script's
    # `trainer.save_model("out/final")`) after a stdout-only loss log.
    lines = [f"{{'loss': {2.5 - i * 0.05:.4f}, 'learning_rate': 5e-05, 'epoch': {i / 10:.2f}}}"
             for i in range(1, 25)]
    lines.append("Saving model checkpoint to out/final")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def test_an_eta_of_zero_at_the_planned_total_ends_the_run(tmp_path: Path):
    # A loop that logs every 25 of `max_steps=1000` with the time left (`2.3s remaining`),
    # and whose last line says none is: its step cannot show the total.
    lines = ["max_steps=1000"]
    lines += [f"step {s} | loss {3.0 / (1 + s / 100):.4f} | {(1000 - s) * 0.1:.1f}s remaining"
              for s in range(25, 1000, 25)]
    lines.append("step 990 | loss 0.2760 | 0us remaining")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def _fasttext(shares: list[float]) -> str:
    # fastText's `supervised` progress, one carriage-returned line a redraw:
    # `Progress: 35.5% words/sec/thread:   75841 lr:  0.064 avg.loss: 10.52 ETA:   0h 0m 9s`
    text = "Read 0M words\nNumber of words:  14598\nNumber of labels: 734\n"
    for share in shares:
        left = round((100 - share) / 10)
        text += (f"\rProgress: {share:.1f}% words/sec/thread:   75841 lr:  "
                 f"{0.1 * (1 - share / 100):.6f} avg.loss: {10.5 - share / 50:.6f} "
                 f"ETA:   0h 0m {left}s")
    return text + "\n"


def test_the_runs_own_progress_at_100_percent_ends_it(tmp_path: Path):
    data = once(tmp_path, _fasttext([10.0, 35.5, 60.1, 85.7, 99.9, 100.0]))
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def test_the_runs_own_progress_short_of_100_percent_is_running(tmp_path: Path):
    data = once(tmp_path, _fasttext([10.0, 35.5, 60.1, 85.7]))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_bar_named_progress_at_100_percent_is_no_end(tmp_path: Path):
    # a tqdm bar described `Progress` may be an epoch's: its `|` follows the share
    lines = []
    for epoch in range(3):
        lines.append(f"epoch {epoch} loss {2.0 - epoch * 0.1:.4f}")
        lines.append("Progress: 100%|##########| 391/391 [00:12<00:00, 31.2it/s]")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def test_an_eta_of_zero_at_the_end_of_an_epoch_is_no_end(tmp_path: Path):
    # torchvision's reference MetricLogger: the ETA is the epoch's (DETR, DeiT).
    lines = []
    for epoch in range(3):
        for i in range(0, 1251, 250):
            lines.append(f"Epoch: [{epoch}]  [{i:4d}/1251]  eta: 0:0{(1250 - i) // 250}:00  "
                         f"lr: 0.000100  loss: {2.0 - epoch * 0.1:.4f}")
        lines.append(f"Epoch: [{epoch}]  [1250/1251]  eta: 0:00:00  lr: 0.000100  "
                     f"loss: {1.9 - epoch * 0.1:.4f}")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED"


def test_a_counter_loop_that_goes_on_to_evaluate_after_its_last_print_finished(tmp_path: Path):
    # A loop that prints every 5000 of its 60000 steps (`f'{i:7d}/{n:7d}: {loss:.4f}'`):
    # its last print is at 55000; the evaluation after it is past the loop's end.
    text = "".join(f"{i:7d}/{60000:7d}: {3.2 - i / 40000:.4f}\n" for i in range(0, 60000, 5000))
    text += "train 1.9021\nval 2.0113\n"
    assert _verdict(once(tmp_path, text)) == ("GO", "SUCCEEDED")


def test_the_same_loop_cut_off_two_prints_short_of_its_plan_still_runs(tmp_path: Path):
    text = "".join(f"{i:7d}/{60000:7d}: {3.2 - i / 40000:.4f}\n" for i in range(0, 50001, 5000))
    text += "train 1.9021\nval 2.0113\n"
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def _bracket_epochs(epochs: int, last_epoch_batches: int, batches: int = 120) -> str:
    # A hand-written GAN loop printing every 40 batches: `[e/E][i/N]\tLoss_D: …\tLoss_G: …`.
    return "".join(f"[{e}/{epochs}][{i}/{batches}]\tLoss_D: {0.9 - e * 0.01:.4f}\t"
                   f"Loss_G: {2.5 + (i % 80) / 100:.4f}\n" for e in range(epochs)
                   for i in range(0, last_epoch_batches if e == epochs - 1 else batches, 40))


def test_a_log_that_stops_at_the_last_print_of_its_plan_ended_unconfirmed(tmp_path: Path):
    data = once(tmp_path, _bracket_epochs(6, 120))  # last print [5/6][80/120]
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "last logging point" in data["summary"]


def test_a_count_from_0_printed_at_every_step_ends_at_its_last(tmp_path: Path):
    """`[  0/200]` … `[199/200]` (sealed-13's CycleGAN nohup.out): every step printed,
    counted from 0, the last printed is the loop's last; one short of it is not."""
    lines = [f"[{i:3d}/200]: dloss: 0.0100, gloss: {3.2 - i / 70:.4f}" for i in range(200)]
    assert _verdict(once(tmp_path, "\n".join(lines) + "\n")) == ("GO", "SUCCEEDED")
    short = tmp_path / "short"
    short.mkdir()
    assert _verdict(once(short, "\n".join(lines[:-1]) + "\n"))[1] != "SUCCEEDED"


def test_a_log_that_stops_two_prints_short_of_its_plan_is_still_running(tmp_path: Path):
    assert _verdict(once(tmp_path, _bracket_epochs(6, 41))) == ("CONDITIONAL", "RUNNING")


def test_a_line_after_the_last_print_of_the_plan_is_the_end(tmp_path: Path):
    text = _bracket_epochs(6, 120) + "Saved generated samples to out/samples.png\n"
    assert _verdict(once(tmp_path, text)) == ("GO", "SUCCEEDED")


def test_a_loop_that_prints_at_the_end_of_each_interval_is_one_print_short(tmp_path: Path):
    # `step 50, 100, …, 550` of a planned 600 (`max_steps=600`): the print at 600 is to come.
    text = "max_steps=600\n" + "".join(f"step {s}/600 loss={2.0 - s / 1000:.4f}\n"
                                       for s in range(50, 551, 50))
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_a_line_after_a_print_one_interval_short_of_an_end_aligned_plan_is_no_end(
        tmp_path: Path):
    text = "max_steps=600\n" + "".join(f"step {s}/600 loss={2.0 - s / 1000:.4f}\n"
                                       for s in range(50, 551, 50))
    assert _verdict(once(tmp_path, text + "val_loss: 1.50\n"))[1] != "SUCCEEDED"


def test_a_loops_own_early_stop_with_its_reason_is_a_finished_run(tmp_path: Path):
    # A hand-written loop's patience check in its own words (DGB's TGN trainer, sealed-7:
    # `No improvement over 5 epochs, stop training`, then the best model reloaded).
    lines = []
    for epoch in range(1, 24):
        lines += [f"2023-10-25 03:02:44,881 - root - INFO - start {epoch} epoch",
                  f"2023-10-25 03:02:44,881 - root - INFO - epoch: {epoch} took 45.00s",
                  f"2023-10-25 03:02:44,881 - root - INFO - Epoch mean loss: "
                  f"{0.6 - min(epoch, 18) * 0.015:.4f}",
                  f"2023-10-25 03:02:44,881 - root - INFO - val auc: "
                  f"{0.95 + min(epoch, 18) * 0.001:.4f}"]
    lines.append("2023-10-25 03:03:29,785 - root - INFO - No improvement over 5 epochs, "
                 "stop training")
    assert _verdict(once(tmp_path, "\n".join(lines) + "\n")) == ("GO", "SUCCEEDED")


def test_a_patience_setting_is_no_early_stop(tmp_path: Path):
    lines = ["early_stopping_patience: 10", "Early stopping patience = 10"]
    lines += [f"step {s} | loss {2.0 - s * 1e-3:.4f}" for s in range(1, 200)]
    assert _verdict(once(tmp_path, "\n".join(lines) + "\n"))[1] == "RUNNING"


def test_a_nan_guard_that_training_outlives_is_no_failure(tmp_path: Path):
    # `NaN detected` then training going on: the guard skipped the batch, nothing died.
    lines = [f"Epoch  1 Update  {u} Cost  {300 - u * 0.2:.4f} UD  0.7" for u in range(10, 510, 10)]
    ended = [*lines, "NaN detected"]
    went_on = [*ended, *(f"Epoch  2 Update  {u} Cost  {200 - u * 0.1:.4f} UD  0.7"
                         for u in range(510, 800, 10))]
    assert _verdict(once(tmp_path, "\n".join(ended) + "\n")) == ("NO-GO", "FAILED")
    assert _verdict(once(tmp_path, "\n".join(went_on) + "\n"))[1] == "RUNNING"


def test_the_next_fold_of_a_k_fold_run_starts_its_loss_afresh(tmp_path: Path):
    # sonnet's k-fold script (sealed-7): each fold's epochs start again at 0 under their
    # banners, its training cross-entropy back at ~0.5 after the last fold's 2e-5; each
    # fold ends `EARLY STOP`, and the last with the model saved.
    lines = []
    for fold in range(3):
        lines.append(f" !!!!! NEW K ({fold}) !!!!!")
        for epoch in range(8):
            lines += [f"################### EPOCH {epoch} #####################",
                      f"TRAIN CROSS ENTROPY: {0.48 * 0.3 ** epoch:.8f}",
                      f"VALID CROSS ENTROPY: {0.53 - 0.04 * min(epoch, 5):.6f}",
                      "VALIDATION CLASSIFICATION RATE:0.875"]
        lines.append("EARLY STOP")
    lines += ["Avg Best Epoch: 25.25", "Generating model now...", "Model is generated and saved"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]
    assert not data["anomalies_detected"], data["anomalies_detected"]


def test_an_excerpt_that_evaluates_every_epoch_is_not_over_at_its_last_evaluation(
        tmp_path: Path):
    # nnU-Net v1 (an excerpt from epoch 175): `epoch:  177`, `train loss : -0.7943`,
    # `validation loss: -0.8047` every epoch; the last evaluation is no final one.
    lines = []
    for epoch in range(175, 178):
        lines += ["2021-05-18 04:14:28.693501: ", f"epoch:  {epoch}",
                  f"2021-05-18 04:42:38.600964: train loss : {-0.78 - epoch * 1e-4:.4f}",
                  f"2021-05-18 04:42:56.266998: validation loss: {-0.80 - epoch * 1e-4:.4f}",
                  f"2021-05-18 04:42:56.715084: lr: {0.0085 - epoch * 1e-6:.6f}"]
    lines = lines[:-1]
    assert _verdict(once(tmp_path, "\n".join(lines) + "\n"))[1] == "RUNNING"

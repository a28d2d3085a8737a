"""Shapes read and judged since the thirty-third session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.completion_words import says_finished
from babysit.parsing.parser import LogParser
from babysit.rules.objective_names import objective_key
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- A command line refused by wasabi's fail message ----------------------------------------


def test_a_wasabi_fail_message_before_training_is_the_runs_death(tmp_path: Path):
    # `spacy train` with a malformed override: one red line, and the CLI exits 1.
    artifact = verdict_of(tmp_path, [
        "\x1b[38;5;1m[x] Invalid config override 'paths.dev': name should start with "
        "--\x1b[0m"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")


def test_a_wasabi_fail_message_that_training_outlives_is_no_death(tmp_path: Path):
    rows = [f"  {e}     {200 * e:>4}         {30 + e:.2f}   {1600 / (e + 1):.2f}   "
            f"{40 + 5 * e:.2f}   {41 + 5 * e:.2f}   {39 + 5 * e:.2f}    {0.4 + 0.05 * e:.2f}"
            for e in range(6)]
    artifact = verdict_of(tmp_path, [
        "\u2718 Some pipeline components have no vectors",
        "============================= Training pipeline =============================",
        "E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE ",
        "---  ------  ------------  --------  ------  ------  ------  ------", *rows,
        "\u2714 Saved pipeline to output directory", "output/model-last"])
    assert artifact["terminal_state"] != "FAILED"


# -- A regression's training error is its objective -----------------------------------------


def test_a_training_rmse_named_by_its_split_is_the_objective():
    assert objective_key(["rmse_trn", "rmse_e_trn", "rmse_f_trn", "lr"]) == "rmse_trn"
    assert objective_key(["train_mse", "val_mse"], whole_only=True) == "train_mse"
    assert objective_key(["rmse", "lr"]) is None  # no split: it may be an evaluation's


def _lcurve(values: list[float]) -> list[str]:
    lines = ["#  step      rmse_trn    rmse_e_trn    rmse_f_trn         lr"]
    for i, v in enumerate(values):
        lines.append(f"{i * 100:>7}      {v:.2e}      1.99e+02      {v / 30:.2e}    5.0e-03")
    return lines


def test_a_training_rmse_jumping_back_to_its_start_is_a_spike(tmp_path: Path):
    falling = [1.81e5, 3.89e3, *(3.85e3 - 20 * i for i in range(14))]
    artifact = verdict_of(tmp_path, _lcurve([*falling, 1.81e5, 1.81e5, 1.80e5, 1.81e5]))
    assert "loss-spike" in {a["type"] for a in artifact["anomalies_detected"]}


# -- Plans and ends ---------------------------------------------------------------------------


def test_deepspeed_chats_ppo_banner_gives_its_plan():
    records = LogParser().feed_lines(
        ["Beginning of Epoch 1/1, Total Generation Batches 120",
         "epoch: 0|step: 0|ppo_ep: 1|act_loss: 0.38134765625|cri_loss: 0.25390625|"
         "unsuper_loss: 0.0"])
    assert any(r.target_steps == 120 for r in records)


def test_a_stage_tag_of_ending_opening_the_last_line_says_the_run_finished():
    assert says_finished("[done] node_ckpt=/home/u/checkpoints/linker_node_diffusion.pt")
    assert says_finished("[finished]")
    assert not says_finished("[done] epoch 3")


def _tagged(epochs: int, last: int) -> list[str]:
    lines = ["[config] DEVICE=cuda", "[run] training node diffusion",
             f"[train] device=cuda batch_size=16 epochs={epochs}"]
    for e in range(1, last + 1):
        lines.append(f"[epoch {e:03d}] train_loss={0.6 / e ** 0.3:.4f} "
                     f"val_loss={0.5 / e ** 0.3:.4f}")
    return lines


def test_a_tagged_run_closing_on_its_done_stage_finished(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_tagged(100, 100), "[done] ckpt=/ckpt/model.pt"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def _nested_bars(epochs: int, done: int) -> list[str]:
    # Both bars redrawn together, the inner one's last redraws before the end not kept
    # (the real log's last inner bar reads 1058/1856).
    lines = []
    for e in range(done):
        outer = (f"epochs:  {100 * e // epochs:>2}%|##        | {e}/{epochs} "
                 f"[1:23:30<4:52:33, 1950.35s/it, loss=0.{80 - e}, lr=0.000742]")
        for b in range(0, 1856 if e < done - 1 else 1100, 100):
            lines += [f"train:  {100 * b // 1856:>2}%|#####     | {b}/1856 "
                      f"[18:29<13:56,  1.04s/it, total_it={e * 1856 + b}]", outer]
    lines.append(f"epochs: 100%|##########| {epochs}/{epochs} [5:57:54<00:00, 1952.27s/it, "
                 f"loss=0.778, lr=1e-7]")
    return lines


def test_an_outer_epochs_bar_at_its_total_is_the_plan_done(tmp_path: Path):
    # OpenPCDet: the last inner bar redrawn was mid-epoch; the outer one reached 11/11.
    lines = _nested_bars(11, 11)
    lines.append("2022-05-30 18:41:37,862   INFO  **********************End training "
                 "kitti_models/pdv(default)**********************")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_an_outer_epochs_bars_rate_is_no_throughput(tmp_path: Path):
    artifact = verdict_of(tmp_path, _nested_bars(15, 6)[:-1])
    assert "slow-throughput" not in {a["type"] for a in artifact["anomalies_detected"]}


def _trlx(epochs: int) -> list[str]:
    lines = []
    for e in range(epochs):
        lines += [f"{e}it [00:{e + 1:02d},  1.3{e}s/it]epoch {e}", f"epoch {e}"]
    return lines


def test_the_bars_tick_after_the_last_iterations_sentence_is_no_training(tmp_path: Path):
    # trlx's two ranks: `FINISHED TRAINING`, then the epoch bar's tick of that last
    # iteration and its close, then the other rank's sentence.
    artifact = verdict_of(tmp_path, [*_trlx(10), "FINISHED TRAINING",
                                     "10it [00:15,  1.24s/it]", "10it [00:15,  1.60s/it]",
                                     "FINISHED TRAINING", "FINISHED SAVING MODEL"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_training_that_goes_on_after_the_sentence_reopens_the_run(tmp_path: Path):
    lines = [*_trlx(10), "FINISHED TRAINING",
             *(f"{e}it [00:{e + 1:02d},  1.3s/it] loss={1 / e:.3f}" for e in range(10, 14))]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"


# -- sealed-89 ----------------------------------------------------------------------------


def test_a_helper_threads_traceback_the_log_ends_in_cut_is_its_death_reported(
        tmp_path: Path):
    # nnU-Net's augmenter thread, at epoch 0, the paste cut before its exception line: the
    # thread's death, though the log does not say the process went with it (a helper
    # thread's death alone is no end: tests/parsing/test_thread_failures.py).
    artifact = verdict_of(tmp_path, [
        "2024-08-05 11:23:35.227772: Epoch 0", "2024-08-05 11:23:35.227940: Current "
        "learning rate: 0.01", "using pin_memory on device 0",
        "Exception in thread Thread-4 (results_loop):", "Traceback (most recent call last):",
        '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner',
        "    self.run()",
        '  File "/venv/site-packages/batchgenerators/dataloading/nondet_multi_threaded_'
        'augmenter.py", line 125, in results_loop', "    raise e"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("CONDITIONAL", "RUNNING")
    assert [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]] == [
        ("crash", "high")]


def test_a_helper_thread_that_training_outlives_is_no_death(tmp_path: Path):
    lines = ["Exception in thread Thread-4 (results_loop):", "Traceback (most recent call "
             "last):", '  File "/usr/lib/python3.10/threading.py", line 1016, in '
             "_bootstrap_inner", "    self.run()", "BrokenPipeError: [Errno 32] Broken pipe"]
    lines += [f"step {s} loss {2 / s:.4f}" for s in range(1, 30)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def _nested_unet(last: int) -> list[str]:
    lines = []
    for e in range(1, last + 1):
        lines += [f"Epoch [{e}/100]",
                  "100%|██████████| 33/33 [00:01<00:00, 18.80it/s, loss=0.41, iou=0.52]",
                  "100%|██████████| 9/9 [00:00<00:00, 36.14it/s, loss=0.38, iou=0.55]",
                  f"loss {0.5 / e:.4f} - iou 0.5200 - val_loss {0.45 / e:.4f} - val_iou 0.5500"]
    return [*lines, f"Epoch [{last + 1}/100]",
            "100%|██████████| 33/33 [00:01<00:00, 18.80it/s, loss=0.41, iou=0.52]"]


def test_an_epoch_header_with_its_counter_and_plan_in_brackets_heads_its_bars(tmp_path: Path):
    # The last line is the next epoch's training bar at its total: no end of the run.
    artifact = verdict_of(tmp_path, _nested_unet(12))
    assert artifact["terminal_state"] == "RUNNING"


def _mmcv_json(epochs: range, lr: str, first: int = 20) -> list[str]:
    # An excerpt: its first epoch from `first` on, the others whole (iters 20 to 400); the
    # loss moved a little each epoch (the same losses at the same batches of each epoch would be an
    # epoch replayed, now that its iterations are placed in the run: `replayed_epochs`).
    return [f'{{"mode": "train", "epoch": {e}, "iter": {i}, "lr": {lr}, "memory": 22809, '
            f'"data_time": 0.00356, "loss_cls": 0.19041, '
            f'"loss": {1.41549 - 0.00001 * i + 0.0005 * e:.5f}, '
            f'"grad_norm": 12.54045, "time": 2.91099}}'
            for e in epochs for i in range(first if e == epochs[0] else 20, 420, 20)]


def test_a_learning_rate_rounded_to_zero_is_no_rate_of_zero(tmp_path: Path):
    # MMCV's JSON log rounds to five decimals: the cosine's tail prints as 0.0.
    artifact = verdict_of(tmp_path, _mmcv_json(range(8, 11), "0.0", first=300))
    assert "not-learning" not in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_rate_of_zero_printed_where_small_rates_show_is_still_zero(tmp_path: Path):
    lines = [f"iteration {i}/ 1000 | learning rate: 0.000E+00 | lm loss: 7.25E+00 | "
             f"grad norm: 1.5 |" for i in range(110, 200, 10)]
    artifact = verdict_of(tmp_path, lines)
    assert "not-learning" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_counter_of_each_epochs_batches_is_no_new_launch(tmp_path: Path):
    # Each epoch's counter stops at the same batch: no earlier launch stopped there.
    # (MMCV's JSON log, a tail from mid-epoch 8: `"epoch": 9, "iter": 16040`, then
    # `"epoch": 10, "iter": 20` … `16040`)
    artifact = verdict_of(tmp_path, _mmcv_json(range(8, 11), "0.00001", first=300))
    assert artifact["terminal_state"] == "RUNNING"


def _detr(epochs: int, ap: float) -> list[str]:
    return [f'{{"train_lr": 1e-05, "train_loss": {36 - 0.6 * e:.3f}, "test_coco_eval_bbox": '
            f'[{ap}, {2 * ap}, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "epoch": {e}}}'
            for e in range(epochs)]


def test_a_score_at_its_floor_for_four_times_the_evaluations_that_raised_it_blocks(
        tmp_path: Path):
    assert verdict_of(tmp_path, _detr(36, 0.0002))["decision"] == "NO-GO"


def test_a_score_at_its_floor_for_a_dozen_evaluations_is_a_notice(tmp_path: Path):
    assert verdict_of(tmp_path, _detr(12, 0.0002))["decision"] == "CONDITIONAL"


def test_ctrl_c_echoed_at_the_end_of_a_begun_line_is_a_cancel(tmp_path: Path):
    lines = []
    for i in range(2660, 2670):
        lines += [f" {i}: 15.43, 19.14 avg loss, 0.001300 rate, 5.04 seconds, {32 * i} "
                  f"images, 1357.3 hours left", "Loaded: 0.000034 seconds", ""]
    artifact = verdict_of(tmp_path, [*lines, "1^C"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "CANCELLED")


def test_a_save_threads_death_is_no_death_of_the_run(tmp_path: Path):
    # Orbax's background save thread: the checkpoint failed, training need not wait.
    lines = [f"I0906 13:5{s % 10}:53.5 140529 train.py:12] completed step: {s}, loss: "
             f"{3 - s / 1000:.3f}" for s in range(2990, 3001)]
    lines += ["Exception in thread async_save:", "Traceback (most recent call last):",
              '  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner',
              "    self.run()",
              '  File "/venv/site-packages/orbax/checkpoint/async_checkpointer.py", line 80, in '
              "_save", "    save_checkpoint(directory)",
              "FileExistsError: gs://bucket/checkpoints/3000 already exists."]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- sealed-90 ----------------------------------------------------------------------------

_BURN = "2026-07-24T00:01:21.044867Z ERROR burn_train::learner::application_logger: PANIC"


def _burn(iterations: int) -> list[str]:
    return [f"2026-07-24T00:00:{i % 60:02d}.7Z  INFO burn_train::learner::train_val: "
            f"Iteration {i} loss 2.{90 - i}" for i in range(1, iterations + 1)]


def test_a_rust_panic_logged_by_its_hook_with_the_message_below_is_a_crash(tmp_path: Path):
    artifact = verdict_of(tmp_path, [
        *_burn(20), f"{_BURN} => panicked at /cargo/burn-tensor-0.20.1/src/tensor/api/"
        "check.rs:1447:13:", "=== Tensor Operation Error ===", "  Operation: 'Reshape'"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")
    assert "Tensor Operation Error" in artifact["summary"]


def test_a_rust_panic_whose_message_says_the_user_stopped_it_is_a_cancel(tmp_path: Path):
    artifact = verdict_of(tmp_path, [
        *_burn(20), f"{_BURN} => panicked at C:\\cargo\\burn-train-0.16.1\\src\\renderer\\"
        "tui\\renderer.rs:290:9:", "Killing training from user input."])
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "CANCELLED")


def test_a_panic_the_run_outlives_is_no_death(tmp_path: Path):
    lines = [*_burn(20), f"{_BURN} => panicked at /cargo/cubecl-runtime/src/memory_"
             "management/memory_manage.rs:287:13:", "No memory pool big enough to reserve "
             "37096521728 bytes.", *_burn(40)[20:]]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


_CLASSES = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def _tutorial(accuracies: list[float]) -> list[str]:
    lines = [f"[{e}, {b:5d}] loss: {2.3 - 0.1 * e:.3f}" for e in range(1, 11)
             for b in (2000, 4000, 6000)]
    lines += ["Finished Training", "Accuracy of the network on the 10000 test images: "
              f"{sum(accuracies) / len(accuracies):.0f} %"]
    return lines + [f"Accuracy for class: {name:5s} is {acc:.1f} %"
                    for name, acc in zip(_CLASSES, accuracies, strict=True)]


def test_per_class_accuracies_with_one_class_answered_for_everything_block(tmp_path: Path):
    # An NNI trial: `deer` for every image, 10 % overall.
    artifact = verdict_of(tmp_path, _tutorial([0.0] * 4 + [100.0] + [0.0] * 5))
    assert artifact["decision"] == "NO-GO"
    assert "'deer' for every input" in artifact["summary"]


def test_per_class_accuracies_that_tell_the_classes_apart_raise_nothing(tmp_path: Path):
    artifact = verdict_of(tmp_path, _tutorial([61.0, 70.3, 45.1, 38.0, 52.2, 47.9, 66.6,
                                               60.0, 71.5, 64.3]))
    assert "not-learning" not in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_banners_section_of_settings_holds_no_records(tmp_path: Path):
    # MACE: five launches, each hung at its first validation; their optimizer sections
    # read as fifteen training records before.
    launch = ["2025-09-08 16:4{m}:14.568 INFO: ===========VERIFYING SETTINGS===========",
              "2025-09-08 16:4{m}:14.568 INFO: MACE version: 0.3.14",
              "2025-09-08 16:4{m}:18.829 INFO: ===========OPTIMIZER INFORMATION===========",
              "2025-09-08 16:4{m}:18.829 INFO: Using ADAM as parameter optimizer",
              "2025-09-08 16:4{m}:18.829 INFO: Batch size: 10",
              "2025-09-08 16:4{m}:18.829 INFO: Number of gradient updates: 1800",
              "2025-09-08 16:4{m}:18.829 INFO: Learning rate: 0.01, weight decay: 5e-07",
              "2025-09-08 16:4{m}:18.958 INFO: ",
              "2025-09-08 16:4{m}:18.958 INFO: ===========TRAINING===========",
              "2025-09-08 16:4{m}:18.958 INFO: Started training, reporting errors on "
              "validation set", "2025-09-08 16:4{m}:18.959 INFO: Loss metrics on validation set"]
    artifact = verdict_of(tmp_path, [line.format(m=m) for m in range(5) for line in launch])
    assert artifact["summary"].startswith("CONDITIONAL — no training progress")


# -- sealed-91 ----------------------------------------------------------------------------


def _mlx(last: int, plan: int = 470) -> list[str]:
    lines = [f"(venv) PROMPT> python lora.py --model mlx_model --train --iters {plan}",
             "Loading pretrained model", "Training", "Iter 1: Val loss 0.880, Val took 144.320s"]
    for i in range(10, last + 1, 10):
        lines.append(f"Iter {i}: Train loss {0.9 - i / 1000:.3f}, It/sec 0.109, Tokens/sec 183.3")
        if i % 200 == 0:
            lines.append(f"Iter {i}: Val loss {0.88 - i / 1000:.3f}, Val took 150.1s")
    return lines


def test_a_command_lines_iteration_flag_is_the_plan(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_mlx(470), "Iter 470: Val loss 0.413, Val took 154.2s"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_the_same_run_short_of_its_flags_count_is_running(tmp_path: Path):
    assert verdict_of(tmp_path, _mlx(300))["terminal_state"] == "RUNNING"


def test_an_epochs_last_step_with_epochs_to_go_is_no_end_of_the_plan(tmp_path: Path):
    # CLIP4Clip: `Epoch: 2/5, Step: 156/156`, then the epoch's evaluation (an excerpt
    # from step 140).
    lines = [f"2022-10-15 15:00:{s % 60:02d},749:INFO: Epoch: 2/5, Step: {s}/156, Loss: "
             f"{0.2 - s / 2000:.6f}, Time/step: 0.619012" for s in range(140, 157, 2)]
    lines += ["2022-10-15 15:01:03,048:INFO: Epoch 2/5 Finished, Train Loss: 0.074089",
              "2022-10-15 15:04:50,699:INFO: Text-to-Video:",
              "2022-10-15 15:04:50,699:INFO: \t>>>  R@1: 36.5 - R@5: 67.3 - R@10: 80.3 - "
              "Median R: 2.0 - Mean R: 9.2"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_the_tutorials_epoch_and_batch_pair_places_its_records_by_epoch():
    records = _records([f"[{e}, {b:5d}] loss: {2.3 - 0.1 * e:.3f}" for e in range(1, 4)
                        for b in (2000, 4000)])
    assert [r.epoch for r in records] == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert all(r.step is None for r in records)


def test_a_measure_said_of_the_network_on_a_split_is_that_splits_metric():
    records = _records(["Accuracy of the network on the 10000 test images: 54 %",
                        "[2023-08-28 00:57:22] PRINT Accuracy of the network on the 10000 "
                        "test images: 10 %"])
    assert [r.metrics for r in records] == [{"test_accuracy": 54.0}, {"test_accuracy": 10.0}]


def test_a_banner_naming_a_phase_of_the_work_heads_no_settings():
    # `START OF MODEL TRAINING` names the model, and opens its training, not settings.
    lines = ["==================== MODEL BUILDING END ====================",
             "==================== START OF MODEL TRAINING ===================="]
    for e in range(3):
        lines += [f"\tEpoch: {e} - (Step:  {5 * e:05d})",
                  f"\t\tTraining loss: {9 - e:.4f}, Validation loss: {9.5 - e:.4f}"]
    assert len([r for r in _records(lines) if "training_loss" in r.metrics]) == 3


# -- sealed-92 ----------------------------------------------------------------------------

_CSV_HEAD = "epoch,loss_avg,loss_value,grad_norm_avg,grad_norm_val,learning_rate"


def test_an_averaged_grad_norm_nan_beside_a_finite_latest_one_is_no_broken_update(
        tmp_path: Path):
    # SimMIM's CSV: the epoch's `grad_norm_avg` over steps the loss scaler skipped.
    rows = [f"{e},{-0.14 - 0.01 * e},{-0.17 - 0.01 * e},nan,{8.4 - e:.2f},5.2e-06"
            for e in range(7)]
    assert verdict_of(tmp_path, [_CSV_HEAD, *rows])["decision"] != "NO-GO"


def test_a_grad_norm_nan_on_every_record_beside_a_moving_loss_is_still_broken(
        tmp_path: Path):
    # BEVFormer under fp16: every step skipped, the same weights give each batch its own
    # finite loss; a loss that moves vouches for nothing.
    lines = [f"Epoch [12][{i}/3953]\tlr: 3.604e-06, loss_cls: {0.22 + (i % 7) / 100:.4f}, "
             f"loss: {4.3 + (i % 5) / 10:.4f}, grad_norm: nan" for i in range(700, 1000, 50)]
    assert verdict_of(tmp_path, lines)["decision"] == "NO-GO"


def test_a_grad_norm_nan_beside_a_loss_that_stands_still_is_broken(tmp_path: Path):
    # (a Trainer that filters a NaN loss prints 0: nothing vouches for the weights)
    lines = [f"{{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': {e / 10}}}"
             for e in range(1, 6)]
    assert verdict_of(tmp_path, lines)["decision"] == "NO-GO"


def test_a_nan_column_of_a_class_row_beside_its_finite_map_is_no_blocker(tmp_path: Path):
    # nuScenes' per-class errors: a barrier has no velocity and no attribute.
    lines = [f"Epoch {e}/20 loss {2.7 - 0.1 * e:.3f}" for e in range(1, 21)]
    for _ in range(3):
        lines += ["***car error@trans, scale, orient, vel, attr | AP@0.5, 1.0, 2.0, 4.0",
                  "0.18, 0.15, 0.16, 0.28, 0.19 | 71.25, 84.56, 88.72, 90.51 | mean AP: 0.83",
                  "***barrier error@trans, scale, orient, vel, attr | AP@0.5, 1.0, 2.0, 4.0",
                  "0.29, 0.35, 0.16, nan, nan | 39.72, 56.65, 63.75, 66.63 | mean AP: 0.566"]
    assert verdict_of(tmp_path, lines)["decision"] != "NO-GO"


def test_a_row_of_nan_losses_behind_a_tab_separated_loggers_head_is_nan(tmp_path: Path):
    # VITS: `%(asctime)s\t%(name)s\t%(levelname)s\t%(message)s`, its losses a bare list.
    artifact = verdict_of(tmp_path, [
        "2024-11-08 17:20:57,135\tljs_base\tINFO\tTrain Epoch: 1 [0%]",
        "2024-11-08 17:20:57,136\tljs_base\tINFO\t[nan, nan, nan, nan, 1.350276231765747, "
        "134.32485961914062, 0, 0.0002]"])
    assert artifact["decision"] == "NO-GO"


def test_a_line_opening_on_its_own_counter_is_no_evaluations_summary():
    lines = ["Batch[10/8544] - loss: 1.6  acc: 25.0000%(4/16)",
             "Dev  Accuracy:  Evaluation - loss: 0.003229  acc: 38.8738%(428/1101) ",
             "Batch[20/8544] - loss: 1.2  acc: 45.0000%(4/16)"]
    assert [sorted(r.metrics) for r in _records(lines)] == [
        ["acc", "loss"], ["eval/acc", "eval/loss"], ["acc", "loss"]]


# -- sealed-93 ----------------------------------------------------------------------------


def _rlkit(first: int, last: int) -> list[str]:
    lines = []
    for e in range(first, last + 1):
        lines += [f"2021-02-14 22:{e % 60:02d}:15,166 :: INFO :: Epoch {e}",
                  "--------------------   ----------",
                  f"Data/TotalEnvSteps     {98000 + 250 * e}.0000",
                  f"Critic/Qf1Loss            {24 + e % 3}.9074",
                  f"Actor/PolicyLoss        -{470 + e}.6798",
                  f"Eval/Return:mean        {9000 + 5 * e}.8280",
                  "================================="]
    return lines


def test_rlkits_tabulated_block_under_its_epoch_is_one_record():
    records = _records(_rlkit(352, 356))
    assert [r.epoch for r in records][-3:] == [354.0, 355.0, 356.0]
    assert "eval/return:mean" in records[-1].metrics or any(
        "return" in k for k in records[-1].metrics)


def test_an_agent_saved_to_its_file_after_the_last_epoch_ends_the_loop(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_rlkit(990, 1000), "2021-02-14 23:27:33,112 :: INFO :: "
                                     "Agent saved to /data/sac/cheetah/exp_003/agent.pt"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_cloud_jobs_described_state_is_its_terminal_state(tmp_path: Path):
    lines = [f"INFO\t2019-03-27 17:56:{e:02d} +0000\tmaster-replica-0\t\tEpoch {e}/20 - loss: "
             f"{0.5 - e / 100:.4f} - acc: 0.83" for e in range(1, 9)]
    lines += ["endTime: '2019-03-27T18:01:46'", "jobId: my_first_keras_job",
              "startTime: '2019-03-27T17:55:34'", "state: SUCCEEDED"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_an_outer_epochs_bar_at_its_total_is_the_last_epoch_done(tmp_path: Path):
    # poptorch's MNIST: `Epochs: 100%|██████████| 20/20`, then the test accuracy.
    lines = []
    for e in range(20):
        lines.append(f"Epochs:  {5 * e:2d}%|█▌        | {e}/20 [00:{e + 10:02d}<00:40, 8.2s/it]")
        lines += [f"100%|██████████| 125/125 [00:06<00:00, 18.0it/s, Loss={1.2 / (e + 1):.4f}, "
                  f"Accuracy={80 + e / 2:.2f}]"]
    lines += ["Epochs: 100%|██████████| 20/20 [03:30<00:00, 10.5s/it]",
              "Accuracy on test set: 98.10%"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- sealed-94 ----------------------------------------------------------------------------


def _agcn(last: int, cut_in_eval: bool = False) -> list[str]:
    lines = ["[ Sun Jul  3 17:34:03 2022 ] Parameters:",
             "{'work_dir': './work_dir/ntu/xview/agcn_joint', 'batch_size': 64, "
             "'num_epoch': 12, 'start_epoch': 0}"]
    for e in range(1, last + 1):
        lines += [f"[ Sun Jul  3 18:{e:02d}:03 2022 ] Training epoch: {e}",
                  f"[ Sun Jul  3 18:{e:02d}:40 2022 ] \tMean training loss: {1.5 / e:.4f}.",
                  f"[ Sun Jul  3 18:{e:02d}:41 2022 ] Eval epoch: {e}"]
        if e < last or not cut_in_eval:
            lines += [f"[ Sun Jul  3 18:{e:02d}:59 2022 ] \tMean test loss of 165 batches: "
                      f"{1.4 / e:.4f}.", f"[ Sun Jul  3 18:{e:02d}:59 2022 ] \tTop1: {60 + e}.28%"]
    return lines


def test_an_asctime_head_is_a_loggers_and_the_last_planned_epoch_ends_the_run(tmp_path: Path):
    # 2s-AGCN's `print_log`: `[ Mon Jul  4 01:33:12 2022 ] Training epoch: 50`.
    assert verdict_of(tmp_path, _agcn(12))["terminal_state"] == "SUCCEEDED"


def test_a_log_stopping_in_the_last_epochs_evaluation_is_not_over(tmp_path: Path):
    # CTR-GCN: `Eval epoch: 65` and nothing under it, where every epoch before printed
    # its Top1.
    assert verdict_of(tmp_path, _agcn(12, cut_in_eval=True))["terminal_state"] == "RUNNING"

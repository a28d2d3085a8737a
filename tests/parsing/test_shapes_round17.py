"""Shapes read and judgements made since the seventeenth session, each on lines written
in the real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from babysit.parsing.spaced_fields import parse_spaced_fields
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list[tuple]:
    return [(r.step, r.target_steps, dict(r.metrics)) for r in LogParser().feed_lines(lines)]


def _bracketed(steps: int) -> list[str]:
    # A hand-written loop's logger: the counter bracketed with its name, then fields.
    lines = ["[07:55:57] [INFO] logger ready",
             "[08:01:49] [INFO] ========[ TRAINING START ]========  (2025-10-21 08:01:49)"]
    for i in range(1, steps + 1):
        lines.append(f"[08:{i % 60:02d}:18] [INFO] [Step {500 * i:>6}/159210] "
                     f"Train {9.68 - i / 400:.4f} | Val~20% {9.679 - i / 350:.4f}")
    return lines


def test_a_counter_bracketed_with_its_name_leads_its_fields():
    got = parse_spaced_fields("[Step    500/159210] Train 9.6801 | Val~20% 9.6793",
                              known_names=False)
    assert got is not None
    assert (got.step, got.target, dict(got.metrics)) == \
        (500, 159210, {"train": 9.6801, "val~20%": 9.6793})
    # an unnamed bracket is no such counter, and a name in brackets must close them
    assert parse_spaced_fields("[Step 500/159210 Train 9.68 | Val 9.67", known_names=False) \
        is None


def test_a_bracketed_loop_is_read_as_progress(tmp_path: Path):
    records = _records(_bracketed(6))
    assert [r[:2] for r in records] == [(1000, 159210), (1500, 159210), (2000, 159210),
                                        (2500, 159210), (3000, 159210)]
    data = verdict_of(tmp_path, _bracketed(6))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert "no training progress" not in data["summary"]


def _sb3_sac(dumps: int, reward: str) -> list[str]:
    # Stable-baselines3's table for an off-policy learner, then the script's own lines.
    lines = ["Using cuda device", "Wrapping the env with a `Monitor` wrapper",
             "Logging to results/humanoid/tensorboard/SAC_5"]
    for i in range(1, dumps + 1):
        lines += ["---------------------------------",
                  "| rollout/           |          |",
                  "|    ep_len_mean     | 100      |",
                  f"|    ep_rew_mean     | {reward:<8} |",
                  "| time/              |          |",
                  f"|    episodes        | {10 * i:<8} |",
                  "|    fps             | 42       |",
                  f"|    time_elapsed    | {23 * i:<8} |",
                  f"|    total_timesteps | {1000 * i:<8} |",
                  "---------------------------------"]
    return [*lines, "  Training complete in 0.1 hours",
            "  Saved final model to results/humanoid/checkpoints/final_model"]


def test_an_episode_reward_of_exactly_0_over_a_whole_finished_run_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _sb3_sac(10, "0"))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "ep_rew_mean" in data["summary"]
    # a reward that moves is no such finding
    moving = _sb3_sac(10, "0")
    moving = [line.replace("| 0        |", f"| {i % 7 - 3:<8} |") if "ep_rew_mean" in line
              else line for i, line in enumerate(moving)]
    data = verdict_of(tmp_path, moving)
    assert "not-learning" not in data["summary"], data["summary"]


def _lightning_test(kappa: str) -> list[str]:
    lines = ["GPU available: True (cuda), used: True",
             "  | Name  | Type           | Params",
             "0 | model | BIOTClassifier | 3.2 M"]
    for epoch in range(6):
        lines.append(f"Epoch {epoch}: 100%|██████████| 13/13 [00:04<00:00,  2.84it/s, "
                     f"loss={1.41 - epoch / 500:.3g}, v_num=0]")
    lines += ["`Trainer.fit` stopped: `max_epochs=6` reached.",
              "Restoring states from the checkpoint path at ./best-epoch=00.ckpt",
              f"{{'test_acc': 0.2409638613462448, 'test_cohen': {kappa}, "
              f"'test_f1': 0.09357819706201553}}"]
    return lines


def test_a_final_test_s_chance_corrected_agreement_of_exactly_0_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _lightning_test("0.0"))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "test_cohen" in data["summary"]
    data = verdict_of(tmp_path, _lightning_test("0.31"))
    assert "test_cohen" not in data["summary"], data["summary"]


def _trainer_stdout_after_an_evaluation_bar(records: int) -> list[str]:
    # The Trainer's stdout in a notebook: an evaluation before training draws its bar to
    # the end (`100% 31/31`), then the loss dicts come with no bar of their own.
    lines = ["warmup_steps=50,", "weight_decay=0.0,", ")",
             "100% 31/31 [00:08<00:00,  3.90it/s]{'mr': 1460.93, 'mrr': 0.00435, "
             "'hits@1': 0.0, 'hits@10': 0.00926}",
             "100% 31/31 [00:08<00:00,  3.76it/s]"]
    for i in range(1, records + 1):
        lines.append(f"{{'loss': {0.6931 + (-1) ** i * 0.002:.4f}, 'grad_norm': 0.07, "
                     f"'learning_rate': 0.001, 'epoch': {i * 5 / (records + 2):.2f}}}")
    return [*lines, "{'train_runtime': 895.934, 'train_samples_per_second': 23.69, "
            "'train_steps_per_second': 1.484, 'train_loss': 0.6904, 'epoch': 5.0}"]


def test_an_evaluation_bar_before_the_trainer_s_records_counts_no_training_step(
        tmp_path: Path):
    records = _records(_trainer_stdout_after_an_evaluation_bar(30))
    steps = [step for step, _, m in records if "loss" in m]
    assert steps == sorted(set(steps)) and len(steps) == 30, steps  # the records count
    data = verdict_of(tmp_path, _trainer_stdout_after_an_evaluation_bar(30))
    # a loss at ln 2 from its first record to the end: the model never learned
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "not-learning" in data["summary"]


def _one_epoch(val: str) -> list[str]:
    # A hand-written loop's one planned epoch, its bar and its two summary lines.
    return ["Device: cpu", "Parameters: 14,369,538", "Epoch 01/1",
            "  train: 100%|██████████| 211/211 [05:02<00:00,  1.43s/it]",
            "  Train  loss=0.7598  acc=0.5269", f"  Val    {val}",
            "Training done. Best val acc: 0.5000"]


def test_a_finished_run_whose_evaluation_scores_exactly_a_guess_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _one_epoch("loss=0.8240  acc=0.5000"))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "exactly 1/2" in data["summary"]
    # a loss below ln 2 beside it learned something; an accuracy off 1/2 likewise
    for val in ("loss=0.6120  acc=0.5000", "loss=0.8240  acc=0.5125"):
        data = verdict_of(tmp_path, _one_epoch(val))
        assert "exactly 1/2" not in data["summary"], data["summary"]


def test_pjrt_s_allocation_failure_is_out_of_memory_even_with_its_prefix_wrapped_away():
    from babysit.parsing.events import find_events

    line = ("2023-04-06 07:42:51.278258: E external/org_tensorflow/tensorflow/compiler/xla/"
            "pjrt/pjrt_stream_executor_client.cc:2153] Execution of replica 0 failed: "
            "RESOURCE_EXHAUSTED: Failed to allocate request for 625.00MiB (655360000B) on "
            "device ordinal 7")
    for text in (line, "SOURCE_EXHAUSTED: Failed to allocate request for 625.00MiB "
                       "(655360000B) on device ordinal 1"):
        assert [e.kind.value for e in find_events(text)] == ["oom"], text
    # a quota, not memory
    assert find_events("grpc: RESOURCE_EXHAUSTED: Quota exceeded for aiplatform") == ()


def _headed_epochs(last: int) -> list[str]:
    # A hand-written loop: each evaluation under its epoch's header, measures only.
    lines = ["Config Data: {'learning_rate': 0.003, 'batch_size': 64, 'epoches': 1000}",
             "device: cuda"]
    for epoch in [*range(0, last, 5), last]:
        lines += ["torch.Size([168, 14, 8])", f"Epoch of: {epoch} Perf:",
                  f"Aligned R-Squared: {-60 + epoch / 13:.4f} | Aligned RMSE: "
                  f"{13 - epoch / 250:.4f}", "--------------------"]
    return [*lines, f"Best_Metric at {last} is : 17.06"]


def test_measures_under_an_epoch_s_header_are_that_epoch_s(tmp_path: Path):
    epochs = [r.epoch for r in LogParser().feed_lines(_headed_epochs(999)) if r.metrics
              and "aligned_rmse" in r.metrics]
    assert epochs[:3] == [5.0, 10.0, 15.0] and epochs[-1] == 999.0
    data = verdict_of(tmp_path, _headed_epochs(999))  # 0 to 999 of 1000: the last
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    data = verdict_of(tmp_path, _headed_epochs(500))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _per_class_ap(arrow_down: str) -> list[str]:
    # GluonCV's VOC metric after each epoch: one class per line, then the mean.
    lines = []
    for epoch in range(1, 6):
        lines += [f"[Epoch {epoch}] Training cost: {9.3 - epoch / 10:.3f}, "
                  f"CrossEntropy={1.57 - epoch / 50:.3f}, SmoothL1={1.127 - epoch / 50:.3f}",
                  f"[Epoch {epoch}] Validation: ", "grave=1.0000000000000002",
                  f"arrow_up=0.848{epoch}",
                  f"arrow_down={'0.31' if epoch < 3 else arrow_down}",
                  f"skeleton_left_side=0.563{epoch}", f"mAP=0.66{epoch}"]
    return lines


def test_one_class_s_undefined_precision_in_an_evaluation_breakdown_is_no_nan_of_the_run(
        tmp_path: Path):
    data = verdict_of(tmp_path, _per_class_ap("nan"))
    assert "nan-inf" not in {a["type"] for a in data["anomalies_detected"]}, data["summary"]
    # a loss in such a block is never undefined so: still the run's
    lines = _per_class_ap("0.3")
    lines[-2:-2] = ["loss=nan"] * 2
    data = verdict_of(tmp_path, lines)
    assert "nan-inf" in {a["type"] for a in data["anomalies_detected"]}, data["summary"]


def _data_pass_then_training(steps: int) -> list[str]:
    bars = [f"Processing: {100 * n // 7473:3d}%|█▏        | {n}/7473 [00:00<00:00, "
            f"16527.57it/s]" for n in (0, 1653, 3317, 6631, 7473)]
    bars += [f"Training Progress:   {n // 10}%|          | {n}/1000 [{n // 6:02d}:00<2:02:24,"
             f"  7.35s/it]" for n in range(0, steps + 1)]
    return ["PyTorch Version: 2.6.0+cu124", *bars]


def test_a_bar_named_for_training_takes_over_from_a_longer_data_pass(tmp_path: Path):
    data = verdict_of(tmp_path, _data_pass_then_training(312))
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == \
        ("RUNNING", 312, 1000), data["summary"]


def test_a_save_into_a_file_its_name_calls_final_ends_the_run():
    from babysit.parsing.events import find_events

    def kinds(text: str) -> list[str]:
        return [f"{e.kind.value}:{e.detail}" for e in find_events(text)
                if e.kind.value == "completed"]

    assert kinds("model saved to runs/PushT__ppo__1/final_ckpt.pt") == ["completed:final-save"]
    assert kinds("Saving checkpoint to output/model_final.pth") == ["completed:final-save"]
    # a folder so named, or a periodic save, is no end
    assert kinds("saved to final_experiment/ckpt_100.pt") == []
    assert kinds("model saved to runs/PushT__ppo__1/ckpt_976.pt") == []


def _unimol(r2: float) -> list[str]:
    head = "2025-01-20 16:07:58 | unimol_tools/tasks/trainer.py | 208 | INFO | Uni-Mol Tools | "
    lines = [f"{head}Epoch [{e}/1024] train_loss: {0.7 - e / 100:.4f}, val_loss: "
             f"{0.57 + (e % 3) / 100:.4f}, val_mse: {0.95 + (e % 2) / 100:.4f}, lr: 0.000026, "
             f"7.9s" for e in range(1, 9)]
    return [*lines, f"{head.replace('INFO', 'WARNING')}Early stopping at epoch: 8",
            f"{head}load model success!",
            f"{head}fold 4, result {{'mse': 0.93342596, 'mae': 0.5740151, 'r2': {r2 - 0.02}}}",
            f"{head}Uni-Mol metrics score: ",
            f"{{'mse': 0.9596460414071627, 'mae': 0.5668767716033328, 'r2': {r2}}}",
            f"{head}Uni-Mol & Metric result saved!"]


def test_a_finished_regression_whose_held_out_r2_is_at_0_never_learned(tmp_path: Path):
    data = verdict_of(tmp_path, _unimol(0.0135))
    assert data["decision"] == "NO-GO" and "r2" in data["summary"], data["summary"]
    data = verdict_of(tmp_path, _unimol(0.62))
    assert "r2" not in data["summary"], data["summary"]


def test_an_early_stop_then_the_final_model_s_save_then_a_closing_line_is_one_end(
        tmp_path: Path):
    head = "[2026-01-27 14:34:38] INFO: "
    lines = [f"{head}Epoch {e}/50 | step {e * 100}/5000 | loss: {1 - e / 40:.4f} | "
             f"R@1: {0.5 + e / 40:.4f}" for e in range(1, 16)]
    lines += [f"{head}Early stopping triggered after 10 epochs without improvement",
              f"{head}Saved checkpoint: src/checkpoints_v2/final_model.pth",
              f"{head}Training complete! Total time: 8.38h | Best R@1: 0.8750"]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


def _paddle_thread_death() -> list[str]:
    where = "/home/u/.conda/envs/pad/lib/python3.8"
    return ["2022-05-14 23:19:20 [INFO]	Loading pretrained model from PP_STDCNet1.pdparams",
            "2022-05-14 23:19:21 [INFO]	There are 145/145 variables loaded into STDCSeg.",
            "Exception in thread Thread-2:",
            "Traceback (most recent call last):",
            f'  File "{where}/threading.py", line 932, in _bootstrap_inner',
            "    self.run()",
            f'  File "{where}/site-packages/paddle/fluid/dataloader/fetcher.py", line 121, '
            "in fetch",
            "    data.append(self.dataset[idx])",
            '  File "/work/PaddleSeg/paddleseg/transforms/transforms.py", line 57, in __call__',
            "    im = cv2.imread(im).astype('float32')",
            "AttributeError: 'NoneType' object has no attribute 'astype'", "", "",
            "--------------------------------------",
            "C++ Traceback (most recent call last):",
            "--------------------------------------",
            "0   paddle::pybind::MultiDeviceFeedReader<paddle::operators::reader::"
            "LoDTensorBlockingQueue>::CheckNextStatus()", "",
            "----------------------", "Error Message Summary:", "----------------------",
            "FatalError: `Termination signal` is detected by the operating system.",
            "  [TimeInfo: *** Aborted at 1652541597 (unix time) try \"date -d @1652541597\" "
            "if you are using GNU date ***]",
            "  [SignalInfo: *** SIGTERM (@0x3e800076868) received by PID 485569 (TID "
            "0x7f5c0d486740) from PID 485480 ***]", ""]


def test_a_thread_s_death_then_the_launcher_s_sigterm_is_a_failure(tmp_path: Path):
    data = verdict_of(tmp_path, _paddle_thread_death())
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO"), data["summary"]
    assert "astype" in data["summary"]


def test_the_run_s_own_target_met_ends_it():
    from babysit.parsing.events import find_events

    def ends(text: str) -> bool:
        return any(e.kind.value == "completed" for e in find_events(text))

    assert ends("Target loss of 0.099999 achieved at step 6034! Final Loss: 0.0883")
    assert ends("Environment solved in 212 episodes!")
    assert ends("Desired accuracy reached, stopping training")
    assert not ends("target_loss: 0.1") and not ends("Target loss: 0.1")
    assert not ends("if target loss reached: break")


def test_a_run_that_stops_at_its_own_target_loss_succeeded(tmp_path: Path):
    lines = [f"Step {s:5d}, Loss: {11 * 0.999 ** s:.6f}, LR: 0.000300" for s in
             range(50, 6001, 50)]
    data = verdict_of(tmp_path, [*lines, "Target loss of 0.099999 achieved at step 6034! "
                                         "Final Loss: 0.0883"])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def _twin_losses(same: bool) -> list[str]:
    lines = []
    for epoch in range(12):
        train = 6.988401 * 0.93 ** epoch
        val = train if same else train * 1.07
        lines.append(f"[NEW BEST] Epoch #{epoch}: train_loss={train:.6f}, val_loss={val:.6f}, "
                     f"time=0.92s, remaining={3 - epoch / 5:.2f}min")
    return [*lines, "Finished!"]


def test_an_evaluation_loss_equal_to_the_training_loss_every_time_is_no_evaluation(
        tmp_path: Path):
    data = verdict_of(tmp_path, _twin_losses(same=True))
    kinds = {a["type"] for a in data["anomalies_detected"]}
    assert "impossible-metric" in kinds and data["decision"] != "GO", data["summary"]
    data = verdict_of(tmp_path, _twin_losses(same=False))
    assert "impossible-metric" not in {a["type"] for a in data["anomalies_detected"]}


def test_a_header_set_apart_by_commas_names_rows_set_apart_by_tabs():
    lines = ["### max_seq_len 128 clean dataset",
             "epoch, grad_step, ppl, avg_f1, rouge-L",
             "0\t53\t10.2931\t1.2813\t0.0191", "1\t106\t14.2596\t1.4320\t0.0188",
             "2\t159\t19.5425\t2.2528\t0.0320", "3\t213\t44.4091\t3.3715\t0.0408"]
    got = [(r.epoch, dict(r.metrics)) for r in LogParser().feed_lines(lines) if r.metrics]
    assert got[0] == (0.0, {"grad_step": 53.0, "ppl": 10.2931, "avg_f1": 1.2813,
                            "rouge_l": 0.0191})
    assert [epoch for epoch, _ in got] == [0.0, 1.0, 2.0, 3.0]


def _launches_of_evaluations() -> list[str]:
    # A fine-tuning script run three times into one log, each time printing only its
    # evaluations: the last launch's loss barely moves, the earlier ones' are elsewhere.
    head = "2025-08-13 17:02:55,401 - __main__ - INFO - "
    lines = []
    for start in (12.245856, 11.887651, 11.884312):
        lines.append(f"{head}Initial validation loss: {start:.6f}")
        for epoch in range(1, 11):
            lines.append(f"{head}Epoch {epoch} validation loss: "
                         f"{start * (1 - 0.0003 * epoch):.6f}")
        lines.append(f"{head}Finetuning completed successfully!")
    return lines


def test_each_launch_of_a_log_of_evaluations_is_judged_on_its_own(tmp_path: Path):
    data = verdict_of(tmp_path, _launches_of_evaluations())
    assert data["decision"] == "NO-GO" and "not-learning" in data["summary"], data["summary"]


def _transquest(epochs: int) -> list[str]:
    # TransQuest's logger: a rule, the time, the level; each epoch's header, its training
    # batch's line, then its validation. The validation loss climbs after epoch 6 while
    # its accuracy holds.
    head = "| 2021-07-08 17:10:25 | INFO | "
    lines = [f"{head}Config:", f"{head}  num_epochs:        {epochs}"]
    val = [0.46, 0.35, 0.30, 0.26, 0.15, 0.123, 0.19, 0.409, 0.599, 0.634]
    for epoch in range(1, epochs + 1):
        lines += [f"{head}Start epoch {epoch}:",
                  f"{head}Train Loss: {0.6 / epoch:.3f}, tp: 9, fn: 0, fp: 5, tn: 50, "
                  f"Acc: {0.8 + epoch / 60:.3f}, F1: {0.6 + epoch / 40:.3f}",
                  f"{head}Validation tp: 25, fn: 116, fp: 50, tn: 809",
                  f"{head}Validation loss: {val[epoch - 1]:.3f}, acc: "
                  f"{0.84 + (epoch % 3) / 100:.3f}, F1: {0.55 + (epoch % 2) / 50:.3f}"]
    return lines


def test_a_logger_head_opened_by_a_rule_and_a_start_epoch_header_are_read(tmp_path: Path):
    records = [r for r in LogParser().feed_lines(_transquest(10)) if r.metrics]
    assert records[-1].epoch == 10.0
    assert set(records[-1].metrics) == {"validation_loss", "eval/acc", "eval/f1"}
    data = verdict_of(tmp_path, _transquest(10))
    # the last planned epoch trained and evaluated; the loss's climb while the accuracy
    # holds is over-fitting to look at, not a collapse
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "CONDITIONAL"), \
        data["summary"]


def _deepspeed_trainer_stdout(records: int) -> list[str]:
    head = "[2025-02-16 16:20:08,701] [INFO] [logging.py:96:log_dist] [Rank 0] "
    lines = [f"{head}DeepSpeed LR Scheduler = None",
             f"{head}step=0, skipped=0, lr=[0.0], mom=[(0.9, 0.999)]"]
    for i in range(1, records + 1):
        lines.append(f"{{'loss': {4.88 - i / 130:.4f}, 'grad_norm': 0.17, 'learning_rate': "
                     f"1e-05, 'epoch': {2 * i / (records + 1):.2f}}}")
    lines.append("{'train_runtime': 6311.2, 'train_samples_per_second': 5.1, "
                 "'train_steps_per_second': 0.02, 'train_loss': 4.597, 'epoch': 2.0}")
    return [*lines, "[2025-02-16 18:05:22,170] [INFO] [launch.py:351:main] Process 4143570 "
                    "exits successfully."]


def test_an_engine_s_step_0_at_its_start_is_no_step_found(tmp_path: Path):
    steps = [r.step for r in LogParser().feed_lines(_deepspeed_trainer_stdout(49))
             if "loss" in r.metrics]
    assert steps == list(range(1, 50)), steps  # the records are the progress
    data = verdict_of(tmp_path, _deepspeed_trainer_stdout(49))
    assert data["terminal_state"] == "SUCCEEDED" and "49 training records" in data["summary"], \
        data["summary"]

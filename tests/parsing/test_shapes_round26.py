"""Shapes read and judged since the twenty-sixth session, each on lines written in the
real shape of a public log of sealed-56 (its logs were scored blind first)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from babysit.parsing.events import OBJECTIVE_CHANGED, find_events
from babysit.parsing.plan import target_in
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of


def _types(artifact, open_only: bool = False) -> set[str]:
    return {a["type"] for a in artifact["anomalies_detected"]
            if not open_only or "resolved:" not in a["description"]}


# -- Darknet: figures named after their values, behind the iteration ----------------------

def _darknet(iterations: range, loss: float = 1.2) -> list[str]:
    lines = []
    for i in iterations:
        lines += ["Region 82 Avg IOU: 0.850145, Class: 0.998477, Obj: 0.315109, No Obj: "
                  "0.000233, .5R: 1.000000, .75R: 1.000000,  count: 3",
                  f" {i}: {loss + 0.05:.6f}, {loss:.6f} avg loss, 0.001000 rate, 4.776061 "
                  f"seconds, {i * 64} images"]
    return lines


def test_a_darknet_iteration_line_is_a_step_and_its_average_loss():
    read = [r for r in _records(_darknet(range(10088, 10091))) if "avg_loss" in r.metrics]
    assert [r.step for r in read] == [10088, 10089, 10090]
    assert read[-1].metrics["avg_loss"] == 1.2
    assert read[-1].metrics["rate"] == 0.001


def test_counted_things_after_a_colon_are_no_metrics():
    assert not _records(["3: 3 files, 2 folders, 1 link"])


def test_a_cuda_error_out_of_memory_in_darknets_casing_is_an_oom(tmp_path: Path):
    lines = [
        *_darknet(range(10085, 10091)), "Resizing", "480 x 480 ",
        " Try to set subdivisions=64 in your cfg-file. ",
        "CUDA status Error: file: ./src/cuda.c : () : line: 203 : build time: Feb 14 2019 ",
        "CUDA Error: out of memory",
        "darknet: ./src/utils.c:277: error: Assertion `0' failed.",
        "Aborted (core dumped)"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    oom = [a for a in artifact["anomalies_detected"] if a["type"] == "oom"]
    assert oom and oom[0]["step"] == 10090


# -- GluonCV: a top-1 error falls as the model learns; a time cost is no loss --------------

def test_a_top1_error_that_falls_is_no_degradation(tmp_path: Path):
    lines = []
    for epoch in range(12):
        err = 0.94 - 0.06 * epoch
        lines += [f"[Epoch {epoch}] training: accuracy={0.05 + 0.05 * epoch:.6f}",
                  f"[Epoch {epoch}] speed: 1485 samples/sec\ttime cost: {886.5 - epoch:.6f}",
                  f"[Epoch {epoch}] validation: err-top1={err:.6f} err-top5={err - 0.1:.6f}"]
    read = _records(lines)
    assert all("loss" not in name for r in read for name in r.metrics)
    artifact = verdict_of(tmp_path, lines)
    assert "eval-degradation" not in _types(artifact)
    assert not [a for a in artifact["anomalies_detected"] if "886" in a["description"]]


# -- CatBoost's training JSON: its plan in its header ---------------------------------------

def test_catboosts_iteration_count_is_the_plan():
    meta = ('"meta":{"test_sets":["test"],"learn_metrics":[{"best_value":"Min","name":'
            '"Logloss"}],"launch_mode":"Train","parameters":"","iteration_count":300,'
            '"learn_sets":["learn"],"name":"experiment"},')
    assert target_in(meta) == 300


def test_catboosts_training_json_ends_at_its_last_iteration(tmp_path: Path):
    rows = [json.dumps({"learn": [0.59 - i * 0.001], "iteration": i, "passed_time": i * 0.04,
                        "remaining_time": (299 - i) * 0.04,
                        "test": [0.89 + i * 1e-4, 0.59 - i * 0.001]}, separators=(",", ":"))
            for i in range(300)]
    lines = ["{", '"meta":{"test_sets":["test"],"iteration_count":300,"name":"experiment"},',
             '"iterations":[', *[r + "," for r in rows[:-1]], rows[-1], "]}"]
    (tmp_path / "all").mkdir()
    (tmp_path / "half").mkdir()
    assert verdict_of(tmp_path / "all", lines)["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path / "half", lines[:150])["terminal_state"] == "RUNNING"


# -- A metrics file that never prints an ending: MAE's log.txt --------------------------------

def _mae(last: int) -> list[str]:
    # 100 epochs, 5 of warm-up to 2e-3, then a cosine to a floor of 1e-6; one JSON line
    # per epoch, counted from 0.
    lines = []
    for epoch in range(last + 1):
        lr = 2e-3 * (epoch + 0.5) / 5 if epoch < 5 else \
            1e-6 + (2e-3 - 1e-6) * 0.5 * (1 + math.cos(math.pi * (epoch + 0.5 - 5) / 95))
        lines.append(json.dumps({"train_lr": lr, "train_loss": 2.8 - 2.0 * epoch / 100,
                                 "test_loss": 2.6 - 2.3 * epoch / 100,
                                 "test_acc1": 35 + 0.6 * epoch, "epoch": epoch,
                                 "n_parameters": 85810960}))
    return lines


def test_a_schedule_at_its_end_at_a_round_count_of_epochs_is_a_finished_run(tmp_path: Path):
    finished = verdict_of(tmp_path, _mae(99))
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")


def test_a_metrics_file_cut_mid_schedule_is_still_running(tmp_path: Path):
    assert verdict_of(tmp_path, _mae(59))["terminal_state"] == "RUNNING"


# -- MACE: the run changes its own loss at its SWA stage ------------------------------------

def _mace(say_it: bool) -> list[str]:
    lines = [f"2024-02-15 00:{epoch // 60:02d}:{epoch % 60:02d}.006 INFO: Epoch {epoch}: "
             f"loss={0.02 / (1 + epoch / 10):.4f}, RMSE_E_per_atom=4.5 meV, RMSE_F=228.5 meV / A"
             for epoch in range(0, 100, 2)]
    if say_it:
        lines.append("2024-02-15 02:05:27.890 INFO: Changing loss based on SWA")
    lines += [f"2024-02-15 03:{epoch // 60 - 1:02d}:{epoch % 60:02d}.006 INFO: Epoch {epoch}: "
              f"loss={9.2 / (1 + (epoch - 100) / 20):.4f}, RMSE_E_per_atom=14.1 meV, "
              f"RMSE_F=295.9 meV / A" for epoch in range(100, 200, 2)]
    return [*lines, "2024-02-15 03:32:25.060 INFO: Done"]


def test_a_loss_the_run_says_it_changed_is_a_new_curve(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mace(True))
    assert "divergence" not in _types(artifact)
    assert artifact["decision"] == "GO"


def test_the_same_jump_unannounced_is_a_divergence(tmp_path: Path):
    assert "divergence" in _types(verdict_of(tmp_path, _mace(False)))


def test_only_sentences_about_the_loss_changing_announce_it():
    said = [e.detail for line in ("Switching to the SWA loss", "loss weights changed at epoch 5",
                                  "Swapping the criterion for focal loss")
            for e in find_events(line)]
    assert said == [OBJECTIVE_CHANGED] * 3
    for line in ("Changing learning rate to 0.1", "Switched loss_scale to 512",
                 "Error: cannot change loss", "Changing loss: 0.3"):
        assert OBJECTIVE_CHANGED not in [e.detail for e in find_events(line)]


# -- PaddleGAN: a PSNR of +inf is an evaluation comparing an image with itself -----------

def test_an_infinite_psnr_is_a_notice_not_a_broken_run(tmp_path: Path):
    lines = []
    for it in range(100, 2100, 100):
        lines.append(f"[11/25 14:36:58] ppgan.engine.trainer INFO: Iter: {it}/400000 lr: "
                     f"2.737e-05 loss_pixel: {7.0 - it / 1000:.3f} batch_cost: 0.79930 sec")
        if it % 500 == 0:
            lines += ["[11/25 14:37:04] ppgan.engine.trainer INFO: Metric psnr: inf",
                      "[11/25 14:37:04] ppgan.engine.trainer INFO: Metric ssim: 0.9121"]
    artifact = verdict_of(tmp_path, lines)
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "nan-inf"]
    assert found and all(a["severity"] == "medium" for a in found)
    assert artifact["decision"] == "CONDITIONAL"


# -- MaxText: a background save's thread fails, logged by absl; the process logs on --------

def test_a_logged_thread_failure_in_a_save_is_a_checkpoint_failure_not_the_end(tmp_path: Path):
    steps = [f"completed step: {s}, seconds: 1.327, TFLOP/s/device: 166.548, Tokens/s/device: "
             f"6173.047, total_weights: 131072, loss: {3.2 - s / 10000:.3f}"
             for s in range(2990, 3001)]
    frames = ['  File "/home/u/lib/python3.12/site-packages/orbax/checkpoint/_src/checkpointers/'
              'async_checkpointer.py", line 86, in _background_wait_for_commit_futures',
              '  File "/home/u/lib/python3.12/site-packages/etils/epath/backend.py", line 314, '
              'in makedirs', "    raise FileExistsError(f'{path} already exists.')",
              "FileExistsError: gs://bucket/log/run/checkpoints/3000 already exists."]
    lines = [*steps,
             "E0906 13:58:53.559288 140529400219200 future.py:387] [process=0][thread="
             "Thread-195 (_target_setting_result)][operation_id=16] _SignalingThread.run() "
             "raised an exception: gs://bucket/log/run/checkpoints/3000 already exists.",
             "Traceback (most recent call last):", *frames,
             "I0906 13:58:53.563104 140529220015680 async_checkpointer.py:311] [process=0]"
             "[thread=save_finalize] Done with waiting for background save thread=async_save."]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("RUNNING", "CONDITIONAL")
    assert "checkpoint-failure" in _types(artifact)
    # The same traceback with no logger's line about a thread above it ends the process.
    (tmp_path / "bare").mkdir()
    bare = verdict_of(tmp_path / "bare", [*steps, "Traceback (most recent call last):",
                                          *frames])
    assert bare["terminal_state"] == "FAILED"


# -- An evaluation's head after the counter it ran at --------------------------------------

def test_a_split_word_after_the_epoch_names_the_lines_figures():
    lines = ["2023-10-05 18:44:49,415 - INFO - epoch: 0 end, loss: 2.166153556439246",
             "2023-10-05 18:45:05,041 - INFO - epoch: 0 validation, acc: 0.60148768692, "
             "loss: 2.1533369740644157",
             "2023-10-05 18:47:38,967 - INFO - epoch: 1 end, loss: 2.1657268969804173",
             "2023-10-05 18:48:08,401 - INFO - epoch: 1 validation, acc: 0.60148768692, "
             "loss: 2.1533369740644157"]
    read = _records(lines)
    assert [sorted(r.metrics) for r in read] == [["loss"], ["eval/acc", "eval/loss"]] * 2
    # (a value of its own before the split's word keeps the line the training's)
    assert "loss" in _records(["loss: 0.41 validation, acc: 0.6"])[0].metrics


# -- SB3's DDPG, a tail of its log: tables, a video's bar, W&B's closing lines ------------

def _sb3_table(step: int, episodes: int, success: float = 0.0) -> list[str]:
    return ["---------------------------------",
            "| rollout/           |          |",
            "|    ep_len_mean     | 50       |",
            "|    ep_rew_mean     | -50      |",
            f"|    success_rate    | {success:<8g} |",
            "| time/              |          |",
            f"|    episodes        | {episodes:<8d} |",
            "|    fps             | 40       |",
            "|    time_elapsed    | 20390    |",
            f"|    total_timesteps | {step:<8d} |",
            "---------------------------------"]


def _sb3_tail(last: int, success: float = 0.0) -> list[str]:
    lines: list[str] = []
    for step in range(last - 60 * 800, last + 1, 800):
        lines += _sb3_table(step, step // 50, success)
        if step == last - 30 * 800:
            # moviepy writing an evaluation episode's video: its own bar, from 0
            lines += [f"frame_index:  {pct:2d}%|▏         | {n}/201 [00:00<00:10, 19.79it/s, "
                      f"now=None]" for pct, n in ((1, 3), (50, 100), (99, 199))]
    return [*lines, "wandb: Run summary:", f"wandb:          global_step {last}",
            "wandb: Synced 8 W&B file(s), 0 media file(s), 0 artifact file(s) and 2 other "
            "file(s)", "wandb: Find logs at: ./wandb/run-20250101_135257/logs"]


def test_a_videos_bar_is_no_training_step():
    steps = [r.step for r in _records(_sb3_tail(1_000_000)) if r.step is not None]
    assert steps == sorted(steps) and min(steps) >= 1_000_000 - 60 * 800


def test_a_process_that_exits_at_a_round_plan_count_finished(tmp_path: Path):
    (tmp_path / "end").mkdir()
    (tmp_path / "mid").mkdir()
    finished = verdict_of(tmp_path / "end", _sb3_tail(1_000_000, success=0.4))
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")
    # At a count no plan names, the same closing lines are no evidence of a finished run.
    assert verdict_of(tmp_path / "mid", _sb3_tail(987_200, success=0.4))["terminal_state"] \
        != "SUCCEEDED"


def test_an_agent_that_never_succeeded_delivers_nothing(tmp_path: Path):
    artifact = verdict_of(tmp_path, _sb3_tail(1_000_000, success=0.0))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "NO-GO")
    assert "not-learning" in _types(artifact, open_only=True)


# -- The machine under the run lost; a plan in an arguments table's capitals --------------

def test_a_tpu_worker_lost_ends_the_run_failed(tmp_path: Path):
    lines = []
    for step in range(488000, 488700, 100):
        lines += [f"I0902 03:33:36.516501 140070334211904 basic_session_run_hooks.py:260] "
                  f"loss = 1.109375, step = {step} (45.410 sec)",
                  "INFO:tensorflow:global_step/sec: 2.20221"]
    lines.append("INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager("
                 "/job:worker/replica:0/task:0/device:CPU:0)")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert not find_events("preemption_check: the VM is not preempted")


def test_an_arguments_tables_train_epochs_is_the_plan():
    from babysit.parsing.frameworks import planned_epochs
    assert planned_epochs("  Train Epochs:       10                  Batch Size:         32") \
        == 10


# -- A value learner's TD loss grows with its returns ----------------------------------------

def _pymarl(losses_returns: list[tuple[float, float]]) -> list[str]:
    lines = []
    for i, (loss, ret) in enumerate(losses_returns):
        t = 10000 * (i + 1)
        lines += [f"[INFO 18:41:57] my_main Recent Stats | t_env: {t:>10d} | Episode: "
                  f"{i * 1250:>8d}",
                  f"battle_won_mean:           0.0000\tepsilon:                   0.0500\tloss:"
                  f"                      {loss:.4f}\tq_taken_mean:              {ret * 0.9:.4f}\t"
                  f"return_mean:               {ret:.4f}",
                  f"target_mean:               {ret * 0.9:.4f}\ttd_error_abs:              "
                  f"{math.sqrt(loss):.4f}\ttest_return_mean:          {ret:.4f}"]
    return lines


def test_a_td_loss_that_rises_with_the_returns_is_no_divergence(tmp_path: Path):
    quiet = [(0.0001, 0.0)] * 40  # nothing scored: nothing to predict
    learning = [(0.02 + 0.0015 * i, 0.2 + 0.02 * i) for i in range(40)]
    artifact = verdict_of(tmp_path, _pymarl(quiet + learning))
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "divergence"
                and a["severity"] in ("high", "blocker")]


def test_a_td_loss_far_beyond_its_returns_is_the_q_values_diverging(tmp_path: Path):
    healthy = [(0.5, 1.3)] * 10
    exploding = [(0.5 * 10 ** (i / 2), 5.0) for i in range(1, 16)]
    artifact = verdict_of(tmp_path, _pymarl(healthy + exploding))
    assert [a for a in artifact["anomalies_detected"] if a["type"] == "divergence"
            and a["severity"] in ("high", "blocker")]


# -- A header written as a comment above its columns (DeePMD's lcurve.out) ----------------

def test_a_commented_header_names_its_columns():
    lines = ["#  step      rmse_val    rmse_trn    rmse_e_val  rmse_e_trn         lr",
             *[f"{s:7d}      {2.1 / (1 + s / 100):.2e}    {2.4 / (1 + s / 100):.2e}      "
               f"2.73e-02    2.44e-02    1.0e-03" for s in range(0, 1000, 100)]]
    read = _records(lines)
    assert [r.step for r in read] == list(range(0, 1000, 100))
    assert set(read[0].metrics) == {"rmse_val", "rmse_trn", "rmse_e_val", "rmse_e_trn", "lr"}


# -- A linear decay to 0 printed to six decimals reaches 0 a few prints early ----------------

def test_a_rate_rounded_to_zero_at_its_decays_end_is_no_schedule_fault(tmp_path: Path):
    lines = []
    steps = 20 * 5
    for i in range(steps):
        lr = 5e-6 * (1 - i / steps)
        lines.append(f"2021-02-20 11:59:49,493 epoch {i // 5 + 1} - iter {(i % 5 + 1) * 1000}"
                     f"/5049 - loss {0.85 / (1 + i / 10):.8f} - samples/sec: 9.54 - lr: {lr:.6f}")
    lines.append("2021-02-21 00:15:03,989 Done.")
    artifact = verdict_of(tmp_path, ["max_epochs: 20", *lines])
    assert "lr-schedule" not in _types(artifact, open_only=True)

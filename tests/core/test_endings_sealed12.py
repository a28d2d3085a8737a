"""How runs end, read from the shapes of sealed-12's finished or ended runs (issue 23,
item 4): a completion said in the run's own words, the plan reached once its counter and
plan are read, the end of a process shown by what follows it. And the same shapes cut
off mid-run stay RUNNING.

Each log is rebuilt small from the shape of the public log named at its test
(tests/fixtures/logs/public/sealed-12/)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from babysit.parsing.closing import CLOSING
from babysit.parsing.completion_words import says_finished
from babysit.parsing.leading_counter import LeadingCounter
from babysit.parsing.plan import target_in
from babysit.parsing.schedule_tail import at_its_end, prints_left
from babysit.parsing.shell_prompts import is_prompt
from tests.core.test_endings import once
from tests.parsing.test_closing import judged_after_records


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


# --- a completion said in the run's own words -------------------------------------------


def _julia_qlearning(last: int) -> str:
    # julia_tabular_qlearning_nohup_polish_4m_epochs_noisy_reward_qtable_saved.log: a
    # hand-written Julia loop under nohup, one line every 50000 episodes.
    lines = ["nohup: zignorowane dane wejściowe",
             "  Activating project at `~/repo/AgentBasedModeling-DRL`",
             "Training with Tabular Q-Learning..."]
    for epoch in range(50000, last + 1, 50000):
        reward = 1100.0 if epoch % 150000 else -281.48
        lines.append(f"Epoch: {epoch}, Epsilon: {max(0.0, 1 - epoch / 3.2e6):.2f}, "
                     f"Avg Reward: {reward}, Q-Table size: {8000 + epoch // 1000}")
    return "\n".join(lines) + "\n"


def test_the_training_record_written_out_after_the_last_record_closes_the_run(tmp_path: Path):
    text = _julia_qlearning(1_000_000) + "Saved Q-table to model_checkpoint.bson\n" \
        "Saved training metrics to training_data.csv\n"
    assert _verdict(once(tmp_path, text)) == ("GO", "SUCCEEDED")


def test_the_same_loop_cut_off_mid_run_is_running(tmp_path: Path):
    assert once(tmp_path, _julia_qlearning(950_000))["terminal_state"] == "RUNNING"


def _tfos(shutdown: bool, episodes: int = 10, workers: int = 3) -> str:
    # tensorflowonspark_ddpg_recommender_ps_3_workers_interleaved_episodes_cluster_shutdown
    # .log: TensorFlowOnSpark's driver and node lines around the workers' episode lines.
    head = "2025-04-21 17:42:36,328 INFO (MainThread-456416)"
    lines = [f"{head} cluster_template: {{'ps': [0], 'worker': [1, 2, 3]}}"]
    for episode in range(episodes):
        # three workers' lines, interleaved: the counter goes back (7/10 after 9/10)
        for worker in range(workers):
            shown = max(0, episode - worker)
            lines.append(f"{shown}/10, precision : {5 + worker}%, total_reward:-{30 - shown}.5, "
                         f"q_loss : {0.1 / (shown + 1):.6f}, mean_action : -0.04")
    lines.append("2025-04-21 17:43:43,216 INFO (MainThread-456957) Finished TensorFlow "
                 "worker:1 on cluster node 2")
    lines.append("2025-04-21 17:44:03,019 INFO (MainThread-456963) Setting mgr.state to "
                 "'stopped'")
    if shutdown:
        lines += [f"{head[:24]}088 INFO (MainThread-456416) Shutting down cluster",
                  "2025-04-21 17:44:03,572 INFO (MainThread-456969) Terminating ps"]
    return "\n".join(lines) + "\n"


def test_the_driver_shutting_down_its_cluster_is_the_jobs_end(tmp_path: Path):
    assert once(tmp_path, _tfos(shutdown=True))["terminal_state"] == "SUCCEEDED"


def test_a_cluster_still_up_is_running(tmp_path: Path):
    assert once(tmp_path, _tfos(shutdown=False, episodes=6))["terminal_state"] == "RUNNING"


def test_a_cluster_shut_down_well_short_of_its_plan_is_no_success(tmp_path: Path):
    # (one worker: its `N/10` read as the plan)
    data = once(tmp_path, _tfos(shutdown=True, episodes=6, workers=1))
    assert data["decision"] == "CONDITIONAL" and data["terminal_state"] != "SUCCEEDED"


@pytest.mark.parametrize("line", [
    "2025-04-21 17:44:03,088 INFO (MainThread-456416) Shutting down cluster",
    "INFO SparkContext: Successfully stopped SparkContext",
    "Saved training metrics to training_data.csv",
    "Training history saved to out/history.json",
])
def test_a_closing_line_after_the_last_record(line: str):
    event = judged_after_records(line)
    assert event is not None and event.detail == CLOSING


@pytest.mark.parametrize("line", [
    "Saving checkpoint to out/ckpt_10.pt",  # a model saved: `loop_over`'s, an ENDED at most
    "Loaded training data from train.csv",
    "Cluster size: 4 nodes",
])
def test_no_closing_line(line: str):
    assert judged_after_records(line) is None


@pytest.mark.parametrize("line", [
    # federated_jetson_sim_rounds_local_mae_rises_after_round_4_all_10_rounds.log
    "Completed all 10 sequential rounds in 68.68 seconds.",
    "Finished 500 episodes",
    "Done 200 generations.",
])
def test_a_count_of_an_outer_loops_units_done_is_a_completion(line: str):
    assert says_finished(line)


@pytest.mark.parametrize("line", [
    "Finished 100 warmup steps",  # a part of the run
    "Completed 10 evaluation episodes",
    "Completed round 3 of 10",
])
def test_a_warm_ups_or_an_evaluations_count_is_none(line: str):
    assert not says_finished(line)


# --- the plan reached, once its counter and plan are read --------------------------------


def _estranet(last: int) -> str:
    # tf_estranet_ascadv2_loss_flat_ln256_all_400k_steps_model_saved.log: absl's flag dump,
    # then `[ 5000] | gnorm …` every 5000 steps, each line twice (TF's logger and glog's).
    lines = ["INFO:tensorflow:train_steps           : 40000",
             "INFO:tensorflow:iterations            : 5000"]
    for step in range(5000, last + 1, 5000):
        record = f"[{step:6d}] | gnorm  1.84 lr  {0.00025 * (1 - step / 40001):.6f} | " \
                 f"loss  {2.0 - step / 40000:.2f}"
        lines += [f"INFO:tensorflow:{record}",
                  f"I1212 16:44:55.359580 128529813321536 train_trans.py:298] {record}"]
    lines.append("INFO:tensorflow:Model saved in path: ./checkpoints_ascadv2/trans_ascadv2-41")
    return "\n".join(lines) + "\n"


def test_a_bracketed_counter_at_its_flag_dumps_plan_succeeded(tmp_path: Path):
    data = once(tmp_path, _estranet(40000))
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == \
        ("SUCCEEDED", 40000, 40000)


def test_a_bracketed_counter_short_of_its_plan_is_running(tmp_path: Path):
    data = once(tmp_path, _estranet(20000))
    assert (data["terminal_state"], data["total_steps"]) == ("RUNNING", 20000)


def test_a_bracketed_counter_needs_its_separator():
    counter = LeadingCounter()
    # sealed-10's rltrader: a stock's code, `[035420] RL:a3c Net:dnn LR:0.001`: a label
    assert [counter.read(f"[{code:06d}] RL:a3c Net:dnn") for code in (35420, 35720)] == \
        [None, None]
    counter = LeadingCounter()
    assert [counter.read(f"[{s:6d}] | loss  5.5") for s in (5000, 10000)] == \
        [None, (10000, None)]


def test_a_flag_dumps_train_steps_is_the_plan():
    assert target_in("INFO:tensorflow:train_steps           : 400000") == 400000
    assert target_in("  num_train_steps = 1000") == 1000


# --- the end of a process shown by what follows it ----------------------------------------


def _transformer_epochs(last: int) -> str:
    # transformer_en_de_tmux_capture_chinese_epoch_lines_val_plateau_shell_prompt.log
    lines = []
    for epoch in range(16, last + 1):
        lines += [f"Epoch: {epoch:3d} | Batch:  {b:4d}/ 1330 | LR: 2.18e-04 |Loss: "
                  f"{4.6 - epoch / 100:.4f} | Time: {b * 0.29:.1f}s" for b in (1300, 1310, 1320)]
        lines.append(f"Epoch {epoch} 完成 | 训练损失: {4.6 - epoch / 100:.4f} | "
                     f"验证损失: 5.9969 | 时间: 385.5s")
    return "\n".join(lines) + "\n"


def test_the_shells_prompt_after_the_last_record_ended(tmp_path: Path):
    text = _transformer_epochs(30) + "\nroot@autodl-container-b23f4d8ce8-63458a54:" \
        "~/Transformer-Pytorch# tmux capture-pane -p -S -500000 > training_log.txt\n"
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "ENDED")


def test_a_prompt_then_more_training_is_running(tmp_path: Path):
    text = "user@host:~/run$ python train.py\n" + _transformer_epochs(30)
    assert once(tmp_path, text)["terminal_state"] == "RUNNING"


@pytest.mark.parametrize(("line", "prompt"), [
    ("root@autodl-container-b2:~/Transformer-Pytorch# tmux capture-pane -p", True),
    ("(venv) alice@gpu01:/data/run$ ", True),
    ("[alice@gpu01 run]$ nvidia-smi", True),
    ("PS C:\\Users\\alice\\run> python train.py", True),
    ("Epoch 30 | user@example.com: 3 samples", False),
    ("C:\\run\\train.py:12: UserWarning: x -> y", False),
])
def test_a_shells_prompt(line: str, prompt: bool):
    assert is_prompt(line) is prompt


def _slm_jsonl(last: int, total: int = 7780) -> str:
    # slm_pretrain_modal_metrics_jsonl_resumed_step_replays_lr_at_floor_step_7760.log: one
    # JSON line every 20 steps, a cosine from 6e-4 to its 6e-5 floor at the last step,
    # written to full precision.
    lines = []
    for step in range(20, last + 1, 20):
        lr = 6e-4 * step / 200 if step < 200 else \
            6e-5 + 0.5 * (1 + math.cos(math.pi * (step - 200) / (total - 200))) * 5.4e-4
        lines.append(json.dumps({"step": step, "loss": 2.2 + 6 / (1 + step / 100),
                                 "lr": lr, "tokens": step * 524288}))
    return "\n".join(lines) + "\n"


def test_a_cosine_eased_onto_its_floor_at_the_last_record_ended(tmp_path: Path):
    data = once(tmp_path, _slm_jsonl(7760))
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "eased onto its floor" in data["summary"]


def test_a_cosine_on_its_way_down_is_running(tmp_path: Path):
    assert once(tmp_path, _slm_jsonl(6000))["terminal_state"] == "RUNNING"


def test_the_schedules_end_is_where_its_drops_reach_zero():
    def cosine(step: int) -> float:
        return 6e-5 + 0.5 * (1 + math.cos(math.pi * step / 1000)) * 5.4e-4

    near = [(float(s), cosine(s)) for s in range(880, 1000, 20)]
    assert prints_left(near) is not None and at_its_end(near)
    far = [(float(s), cosine(s)) for s in range(600, 720, 20)]
    assert not at_its_end(far)
    # a linear decay ends where its line reaches zero: one print on, the schedule's end;
    # many prints on, a live run's
    linear = [(float(s), 1e-3 * (1 - s / 1000)) for s in range(880, 1000, 20)]
    assert at_its_end(linear)
    assert not at_its_end([(float(s), 1e-3 * (1 - s / 1000)) for s in range(400, 520, 20)])


def _awr_table(last: int) -> str:
    # awr_rl_whitespace_table_train_test_return_iter_19950_no_end_line.log: AWR's
    # whitespace-aligned logger, a row every 50 iterations from 0.
    cols = ["Iteration", "Wall_Time", "Samples", "Train_Return", "Train_Paths", "Test_Return"]
    lines = ["".join(f"{c:<25}" for c in cols)]
    for it in range(0, last + 1, 50):
        row = [it, it / 1180, 2157 + it * 2170, -188 + it / 42, 22 + it // 32, -155 + it / 45]
        lines.append("".join(f"{v!s:<25}" for v in row))
    return "\n".join(lines) + "\n"


def test_a_loop_stopped_one_print_before_a_round_count_ended(tmp_path: Path):
    assert _verdict(once(tmp_path, _awr_table(19950))) == ("CONDITIONAL", "ENDED")


def test_a_loop_stopped_elsewhere_is_running(tmp_path: Path):
    assert once(tmp_path, _awr_table(17250))["terminal_state"] == "RUNNING"


def _chainer_logreport(last: int) -> str:
    # chainer_dagmm_logreport_json_array_500_epochs_energy_loss_plateau_3e5.log: Chainer's
    # LogReport `result/log`, a JSON array of one record an epoch.
    records = [{"main/loss": 3.5e5 - epoch * 100, "validation/main/loss": 3.52e5 - epoch * 95,
                "epoch": epoch, "iteration": 2 + (epoch - 1) * 1.72 // 1,
                "elapsed_time": epoch * 0.73} for epoch in range(1, last + 1)]
    return json.dumps(records, indent=4) + "\n"


def test_a_logreport_array_closed_at_a_round_count_of_epochs_ended(tmp_path: Path):
    assert _verdict(once(tmp_path, _chainer_logreport(500))) == ("CONDITIONAL", "ENDED")


def test_a_logreport_array_at_another_count_is_running(tmp_path: Path):
    assert once(tmp_path, _chainer_logreport(437))["terminal_state"] == "RUNNING"

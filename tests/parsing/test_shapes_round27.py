"""Shapes read and judged since the twenty-seventh session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

import json
from pathlib import Path

from babysit.parsing.closing import closes
from babysit.parsing.events import find_events
from babysit.parsing.nonfinite_words import said_non_finite
from babysit.parsing.said_failures import said_failure
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- A runner stopping training because its workers broke ---------------------------------

def _rl_runner(points: int, start: int = 0) -> list[str]:
    lines = []
    for i in range(start, start + points):
        lines += [f"[2024-09-09 06:{36 + i // 20:02d}:{i % 60:02d},091][02013] Fps is (10 sec: "
                  f"41164.8, 60 sec: 40277.3, 300 sec: 39120.3). Total num frames: "
                  f"{127492096 + i * 409600}. Throughput: 0: 39428.2. Samples: 129026112. "
                  f"Policy #0 lag: (min: 374.0, avg: 559.6, max: 748.0)",
                  f"[2024-09-09 06:{36 + i // 20:02d}:{i % 60:02d},092][02013] Avg episode "
                  f"reward: [(0, '{-17.6 + i * 0.1:.3f}')]"]
    return lines


def test_stopping_training_because_workers_broke_is_a_failure():
    events = said_failure("[2024-09-09 06:53:11,112][02013] Stopping training due to lack of "
                          "heartbeats from <class 'sample_factory.algo.sampling.rollout_worker"
                          ".RolloutWorker'>")
    assert events and "lack of heartbeats" in events[0].detail
    for line in ("Stopping training due to an unhandled exception in worker 3",
                 "Terminating training because of NCCL errors on rank 2",
                 "Aborting training after worker 5 died"):
        assert said_failure(line), line


def test_stopping_training_on_its_own_terms_is_no_failure():
    for line in ("Stopping training due to early stopping at epoch 40",
                 "Stopping training because the validation loss did not improve",
                 "Stopping training after 100000 steps",
                 "Stopping training: max epochs reached"):
        assert not said_failure(line), line


def test_a_runner_that_stops_on_dead_workers_and_shuts_down_cleanly_failed(tmp_path: Path):
    lines = [*_rl_runner(30),
             "[2024-09-09 06:53:11,112][02013] No heartbeat for components: RolloutWorker_w0 "
             "(843 seconds), RolloutWorker_w1 (603 seconds)",
             "[2024-09-09 06:53:11,112][02013] Stopping training due to lack of heartbeats from "
             "<class 'sample_factory.algo.sampling.rollout_worker.RolloutWorker'>",
             "[2024-09-09 06:53:11,138][02594] Stopping Batcher_0...",
             "[2024-09-09 06:53:12,146][02013] Learner 0 profile tree view:",
             "misc: 0.4298, prepare_batch: 1294.9974",
             "train: 2393.3579",
             "  epoch_init: 0.7853, minibatch_init: 0.8158, losses_postprocess: 152.6376",
             "  calculate_losses: 476.9165",
             "    losses_init: 0.6210, forward_head: 274.5942, bptt: 0.4154, losses: 52.5464",
             "[2024-09-09 06:53:12,146][02013] Loop Runner_EvtLoop terminating...",
             "[2024-09-09 06:53:12,147][02013] Collected {0: 154050560}, FPS: 33024.0"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert "heartbeats" in artifact["summary"]


# -- A profiler's block of timings --------------------------------------------------------

def test_a_profilers_block_of_timings_is_no_training_record():
    block = ["[2024-09-09 06:53:12,146][02013] InferenceWorker_p0-w0 profile tree view:",
             "wait_policy: 0.0051",
             "  wait_policy_total: 1500.0050",
             "update_model: 376.3186",
             "    deserialize: 451.3150, stack: 4.9009, forward: 1054.7640",
             "Timing breakdown:",
             "  data: 12.3, forward: 40.1, backward: 80.2"]
    assert not _records(block)


def test_a_timed_record_after_the_block_is_read_again():
    lines = ["Learner profile tree view:", "  train: 2393.3579",
             "2024-01-01 10:00:00 INFO step: 5, loss: 1.25",
             "2024-01-01 10:00:01 INFO step: 6, loss: 1.20"]
    assert [r.metrics.get("loss") for r in _records(lines)] == [1.25, 1.2]


# -- The interpreter's notice as the process shuts down -----------------------------------

_SHUTDOWN = ("/usr/lib/python3.8/multiprocessing/resource_tracker.py:216: UserWarning: "
             "resource_tracker: There appear to be 1 leaked semaphore objects to clean up at "
             "shutdown")


def _epochs(count: int) -> list[str]:
    return [f"Epoch: {e}  Train loss: {1.0 / (e + 1):.4f}  Val loss: {1.2 / (e + 1):.4f}"
            for e in range(count)]


def test_a_shutdown_notice_after_the_last_record_ends_the_run_unconfirmed(tmp_path: Path):
    lines = [*_epochs(12), _SHUTDOWN, "  warnings.warn('resource_tracker: There appear to be "
             "%d '"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("ENDED", "CONDITIONAL")
    assert "shut down" in artifact["summary"]


def test_a_shutdown_notice_behind_a_bar_that_never_ended_its_line(tmp_path: Path):
    lines = [*_epochs(12), "Training Progress:   0%|          | 12/50000 [00:11<6:45:51,  "
             "2.05it/s]" + _SHUTDOWN]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "ENDED"


def test_without_the_notice_the_same_log_is_still_running(tmp_path: Path):
    artifact = verdict_of(tmp_path, _epochs(12))
    assert artifact["terminal_state"] == "RUNNING"


# -- A NaN said of a prediction or an update ----------------------------------------------

def test_a_nan_prediction_forced_to_zero_is_a_nan_even_in_a_finished_run(tmp_path: Path):
    lines = ["Num weight bits = 18", "learning rate = 0.5",
             "average  since         example        example  current  current  current",
             "loss     last          counter         weight    label  predict features",
             "NAN prediction in example 1, forcing 0", "your features have too much magnitude",
             "update is NAN, replacing with 0",
             "1.000000 1.000000            1            1.0   1.0000   0.0000        2",
             "NAN prediction in example 2, forcing 0.000000",
             "update is NAN, replacing with 0",
             "1.000000 1.000000            2            2.0   1.0000   0.0000        2", "",
             "finished run", "number of examples = 3", "average loss = 1.000000"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert "nan-inf" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_nan_update_replaced_with_zero_is_a_skipped_update():
    assert said_non_finite("update is NAN, replacing with 0") == ("update", None, True)
    assert said_non_finite("invalid update rule") is None


def test_a_check_that_found_no_nan_says_nothing():
    for line in ("No NaN gradients found", "no nan loss in 100 steps",
                 "trained without nan predictions"):
        assert said_non_finite(line) is None, line
    assert said_non_finite("nan loss detected at step 5") == ("loss", 5, False)


# -- A jump no run's first prints make ----------------------------------------------------

def test_a_hundredfold_jump_from_a_runs_start_is_a_spike(tmp_path: Path):
    losses = [3.1, 3.5, 2.9, 2.6, 3.7, 5.1, 6.4e5, 5.2, 4.9, 5.0]
    lines = [f"Steps : {5 * i}, Train Loss : {v:.3f}, s/b : 0.44" for i, v in enumerate(losses)]
    spikes = [a for a in verdict_of(tmp_path, lines)["anomalies_detected"]
              if a["type"] == "loss-spike"]
    assert spikes and spikes[0]["step"] == 30


def test_a_runs_first_prints_wandering_threefold_are_no_spike(tmp_path: Path):
    losses = [3.1, 3.5, 2.9, 2.6, 3.7, 9.1, 4.0, 3.2, 3.0, 2.9]
    lines = [f"Steps : {5 * i}, Train Loss : {v:.3f}, s/b : 0.44" for i, v in enumerate(losses)]
    found = verdict_of(tmp_path, lines)["anomalies_detected"]
    assert "loss-spike" not in {a["type"] for a in found}


# -- A search's trial log closing on its best trial; a run's closing statistics -----------

def _trials(count: int) -> list[str]:
    return [json.dumps({"record_id": i, "iter_per_learner": 2 * i + 1,
                        "logged_metric": {"pred_time": 5e-07}, "trial_time": 0.29,
                        "wall_clock_time": round(0.3 * (i + 1), 2),
                        "validation_loss": round(0.55 / (i + 1), 4),
                        "config": {"n_estimators": 4, "max_leaves": 4}, "learner": "xgboost",
                        "sample_size": 28000}) for i in range(count)]


def test_a_trial_log_that_names_its_best_trial_last_is_finished(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_trials(11), '{"curr_best_record_id": 10}'])
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_trial_log_without_its_closing_line_is_still_running(tmp_path: Path):
    assert verdict_of(tmp_path, _trials(11))["terminal_state"] == "RUNNING"


def _keras_benchmark(closing: list[str]) -> list[str]:
    return ["I0826 21:31:53.566670 140540494919424 classifier_trainer.py:180] Base params: "
            "{'train': {'epochs': 1}}",
            *[f"I0826 21:4{i}:23.001036 140540494919424 keras_utils.py:133] TimeHistory: 43.2 "
              f"seconds, 9475.39 examples/second between steps {100 * i} and {100 * i + 100}"
              for i in range(6)],
            "Epoch 00001: saving model to ../output/model.ckpt-0001",
            "600/600 - 264s - loss: 5.3782 - accuracy: 0.7002 - top_5_accuracy: 0.7801",
            "12/12 - 2s - loss: 7.2711 - accuracy: 0.2500 - top_5_accuracy: 0.2710", *closing]


def test_a_runs_closing_statistics_and_their_dict_end_it(tmp_path: Path):
    lines = _keras_benchmark([
        "I0826 21:46:21.947059 140540494919424 classifier_trainer.py:447] Run stats:",
        "{'accuracy_top_1': 0.2499593049287796, 'eval_loss': 7.271062850952148, 'loss': "
        "5.378208637237549, 'training_accuracy_top_1': 0.7002176642417908, "
        "'avg_exp_per_second': 6419.2172131706075}"])
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_without_its_closing_statistics_the_benchmark_is_still_running(tmp_path: Path):
    assert verdict_of(tmp_path, _keras_benchmark([]))["terminal_state"] == "RUNNING"


def test_a_nested_reports_timers_hold_only_the_lines_indented_under_them():
    lines = []
    for i in range(1, 4):
        lines += ["Result for DQN_shogi_0:", f"  episode_reward_mean: {0.1 * i}",
                  "  info:", "    learner:", "      default_policy:",
                  f"        max_q: {10.0 ** i}", f"        mean_q: {2.0 ** i}",
                  "  timers:", "    learn_throughput: 1032.5", "    learn_time_ms: 31.0",
                  f"  training_iteration: {i}", ""]
    read = _records(lines)
    assert any("max_q" in r.metrics for r in read)
    assert not any("learn_time_ms" in r.metrics for r in read)


# -- A sparse RL run whose return never rose, seen from its start to its plan's end -------

def _mlagents(rewards: list[float]) -> list[str]:
    return ["[INFO] Hyperparameters for behavior name BoxPacker:", "        trainer_type:   ppo",
            "        max_steps:      500000", "        summary_freq:   50000",
            *[f"[INFO] BoxPacker. Step: {50000 * (i + 1)}. Time Elapsed: {1100.0 * (i + 1):.3f}"
              f" s. Mean Reward: {r:.3f}. Std of Reward: 4.1. Training."
              for i, r in enumerate(rewards)],
            "[INFO] Exported results/ppo/BoxPacker/BoxPacker-500014.onnx"]


def test_a_whole_sparse_run_whose_return_never_rose_is_not_go(tmp_path: Path):
    flat = [-198.99, -192.98, -192.83, -192.61, -192.5, -192.4, -192.2, -192.07, -191.84,
            -191.63]
    artifact = verdict_of(tmp_path, _mlagents(flat))
    assert artifact["decision"] == "NO-GO"
    assert "not-learning" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_whole_sparse_run_whose_return_rose_is_go(tmp_path: Path):
    rising = [-198.99, -180.2, -161.5, -140.3, -120.9, -101.2, -80.4, -62.0, -45.3, -30.1]
    artifact = verdict_of(tmp_path, _mlagents(rising))
    assert "not-learning" not in {a["type"] for a in artifact["anomalies_detected"]}


# -- Fields apart by slashes; a loss that never moved as printed --------------------------

def test_fields_apart_by_slashes_are_read():
    read = _records([f"Epoch:{e:2d}/Loss:{1.2 - e / 100:.3f}/TrainingTime:89.213(min)"
                     for e in range(1, 4)])
    assert [(r.epoch, r.metrics["loss"]) for r in read] == [(1, 1.19), (2, 1.18), (3, 1.17)]


def test_a_fraction_is_no_field_separator():
    read = _records(["step 10/100 loss: 2.5", "step 20/100 loss: 2.4"])
    assert [r.step for r in read] == [10, 20]


def test_a_loss_printed_the_same_from_its_first_epoch_to_its_tenth(tmp_path: Path):
    lines = [f"Epoch:{e:2d}/Loss:0.942/TrainingTime:{70 + e:.3f}(min)" for e in range(1, 11)]
    found = verdict_of(tmp_path, lines)["anomalies_detected"]
    assert [a["type"] for a in found] == ["not-learning"]


def test_a_loss_that_falls_in_its_last_digit_over_ten_epochs_is_no_finding(tmp_path: Path):
    lines = [f"Epoch:{e:2d}/Loss:{0.95 - e / 100:.3f}/TrainingTime:70.0(min)" for e in range(1, 11)]
    found = verdict_of(tmp_path, lines)["anomalies_detected"]
    assert "not-learning" not in {a["type"] for a in found}


# -- MLPerf's run_stop with status success: the quality target reached is the plan --------

_NEMO = (Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "public" / "sealed-60"
         / "nemo_llama2_70b_lora_slurm_srun_sysjson_error_then_target_reached_success.log")


def test_a_time_to_train_run_that_reached_its_target_before_its_step_budget_succeeded(
        tmp_path: Path):
    # (the run's MLPerf events and its configuration's `max_steps: 1024`, nothing else)
    lines = [line for line in _NEMO.read_text().splitlines()
             if ":::MLLOG" in line or "max_steps: 1024" in line]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_time_to_train_run_that_stopped_without_success_did_not(tmp_path: Path):
    lines = [line for line in _NEMO.read_text().splitlines()
             if (":::MLLOG" in line or "max_steps: 1024" in line) and '"run_stop"' not in line]
    assert verdict_of(tmp_path, lines)["terminal_state"] != "SUCCEEDED"


# -- ROCm's out of memory; a Slurm task ended by a signal ---------------------------------

def test_rocms_runtime_out_of_resources_is_an_oom_and_the_aborted_task_a_failure(
        tmp_path: Path):
    lines = [*[f"(nn, lossval) = ({n}, {1.6 - n / 1000:.7f}f0)" for n in range(1, 11)],
             ":0:rocdevice.cpp            :2724: 377148849098 us: [pid:97988 tid:0x14d31dbff700]"
             " Callback: Queue 0x14d31aa00000 Aborting with error : "
             "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
             "resources. This error may also occur when the core runtime library needs to "
             "spawn threads or create internal OS-specific events.", "",
             "[97988] signal 6 (-6): Aborted",
             "srun: error: nid005043: task 0: Aborted",
             "srun: Terminating StepId=13646320.0"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert "oom" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_slurm_task_aborted_is_a_failure():
    kinds = {e.kind.value for e in find_events("srun: error: nid005043: task 0: Aborted")}
    assert kinds == {"exception"}
    assert not find_events("srun: error: Unable to create step for job 123: Job/step already "
                           "completing or completed")


# -- A value and its limit; a script's last `All Finished` ---------------------------------

def test_a_fields_limit_after_its_value_is_no_part_of_it():
    read = _records([f"Epoch {e}/10000, Time {e * 0.58:.3f}, Performance {2.2 / (e + 1):.6f}/1e-12,"
                     f" Gradient {75.4 / (e + 1):.4f}/1e-06, Validation Checks 0/500"
                     for e in (0, 25, 50)])
    assert [round(r.metrics["performance"], 6) for r in read] == [2.2, 0.084615, 0.043137]


def test_all_finished_with_its_time_closes_a_run():
    assert closes("All Finished - time = 5629.805960 ")
    assert not closes("all done, now testing model")


# -- A count over its total with its share; closing sentences -----------------------------

def test_a_count_over_its_total_with_its_share_is_the_share():
    read = _records([f"     Instance: {500 * i}; Time: 7.13s; loss: {4596.2 - i:.4f}; acc: "
                     f"{10573 * i}.0/{11800 * i}.0=0.8960" for i in range(1, 4)])
    assert [r.metrics["acc"] for r in read] == [0.896, 0.896, 0.896]


def test_done_opening_a_summary_sentence_closes_a_run():
    assert closes("done. best val 1.0157 (1.4654 bpc)")
    assert closes("dpo done -> checkpoints\\tiny-18m-dpo\\last.pt")
    for line in ("Done. Saving model", "download done -> /tmp/x", "epoch done -> next"):
        assert not closes(line), line


def test_an_excerpt_deep_into_its_epochs_has_no_start_to_be_flat_from(tmp_path: Path):
    lines = []
    for epoch in range(42, 46):
        lines.append(f"Epoch: {epoch}/100")
        lines += [f"     Instance: {500 * i}; Time: 7.1s; loss: {3500 + 90 * (i % 3):.4f}; acc: "
                  f"{9 * i}.0/{10 * i}.0=0.9000" for i in range(1, 8)]
        lines.append(f"Epoch: {epoch} training finished. Time: 531.7s, speed: 74.49st/s,  "
                     f"total loss: 285492.5")
    found = verdict_of(tmp_path, lines)["anomalies_detected"]
    assert "not-learning" not in {a["type"] for a in found}


def test_a_preference_loss_at_zero_on_every_point_of_a_finished_run_is_not_go(tmp_path: Path):
    lines = ["prefs=120 beta=0.1", "[dpo] step=10 loss=0.000 adv=+126.273",
             "[dpo] step=20 loss=0.000 adv=+149.611", "[dpo] step=30 loss=0.000 adv=+150.112",
             "dpo done -> checkpoints/tiny-18m-dpo/last.pt"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "NO-GO")


def test_a_bars_postfix_name_may_hold_spaces():
    read = _records(["Training progress:  14%|#####     | 7000/50000 [01:43<16:04, 44.60it/s, "
                     "Loss=0.0446380, Depth Loss=0.0000000]"])
    assert read[-1].metrics["loss"] == 0.044638
    assert read[-1].metrics["depth_loss"] == 0.0

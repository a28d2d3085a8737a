"""Shapes read and judged since the twenty-seventh session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from babysit.parsing.said_failures import said_failure
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]):
    parser = LogParser()
    return [r for r in parser.feed_lines(lines) + parser.finish() if r.metrics]


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

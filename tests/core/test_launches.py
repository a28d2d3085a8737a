"""A log that holds several launches of a run is judged on its last one (issue 23,
class: false crashes): an earlier launch's crash is history once the run is launched
again, and a crash of the last launch still ends the run. Also: failures before
training starts, and a run its user stopped."""

from __future__ import annotations

import json
from pathlib import Path

from babysit.reading.follower import TAIL_LINES
from tests.core.test_endings import once


def _preamble(batch: int) -> str:
    return (f"2024-05-02 11:0{batch % 10}:00.120 | INFO | trainer:before_train:131 - args: "
            f"Namespace(experiment_name='det_s', batch_size={batch}, devices=8, fp16=True)\n"
            "2024-05-02 11:00:00.200 | INFO | trainer:before_train:137 - Model Summary: "
            "Params: 8.97M, Gflops: 26.93\n"
            "2024-05-02 11:00:01.000 | INFO | trainer:before_train:192 - Training start...\n")


def _iters(first: int, last: int, every: int = 10, total: int = 1849) -> str:
    return "".join(f"2024-05-02 11:05:00.000 | INFO | trainer:after_iter:256 - epoch: 1/300, "
                   f"iter: {i}/{total}, iter_time: 0.61s, total_loss: {18 - i / 100:.1f}\n"
                   for i in range(first, last + 1, every))


_TRACEBACK = ("2024-05-02 11:06:00.000 | ERROR | launch:_distributed_worker:148 - An error "
              "has been caught in function '_distributed_worker'\n"
              "Traceback (most recent call last):\n"
              '  File "tools/train.py", line 119, in main\n'
              "    trainer.train()\n"
              "ValueError: num_workers option should be non-negative\n")
_OOM = ("Traceback (most recent call last):\n"
        '  File "trainer.py", line 75, in train\n'
        "    loss.backward()\n"
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB\n")


def _types(data: dict, resolved: bool | None = None) -> set[str]:
    return {a["type"] for a in data["anomalies_detected"]
            if resolved is None or ("resolved:" in a["description"]) == resolved}


def test_a_crash_then_a_relaunch_that_trains_is_running(tmp_path: Path):
    # The last launch is at the same iteration the first reached: its steps do not go
    # back, yet it is a new launch.
    text = (_preamble(64) + _iters(10, 10) + _preamble(64) + _TRACEBACK + _preamble(8)
            + _iters(10, 10))
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "RUNNING"), \
        data["summary"]
    assert "crash" not in _types(data, resolved=False)
    assert "crash" in _types(data, resolved=True)  # the earlier launch's, kept as history


def test_a_crash_of_the_last_launch_still_ends_the_run(tmp_path: Path):
    text = _preamble(2) + _iters(10, 10) + _OOM + _preamble(8) + _OOM
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    assert "oom" in _types(data, resolved=False)


def test_an_oom_of_an_earlier_launch_does_not_hold_back_a_launch_that_finished(
        tmp_path: Path):
    text = (_preamble(16) + _iters(10, 30) + _OOM + _preamble(8)
            + _iters(10, 1849, every=30, total=1849) + _iters(1849, 1849, total=1849)
            + "Training of experiment is done and the best AP is 38.20\n")
    data = once(tmp_path, text)
    assert data["terminal_state"] != "FAILED", data["summary"]
    assert "oom" not in _types(data, resolved=False)


def test_without_a_relaunch_a_crash_followed_by_stray_output_is_a_crash(tmp_path: Path):
    # stdout flushed after stderr's traceback: the dying process's last bar row.
    text = (_preamble(8) + _OOM
            + "     0/299     15.8G      3.99     0.358   22   608:  63% 34/54 [00:42<00:25]\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]


def test_a_command_line_argparse_refused_is_a_failure_before_training(tmp_path: Path):
    usage = "usage: train_seg.py [-h] [--config CONFIG] [--epochs EPOCHS]\n" + "".join(
        f"                    [--opt-{i} OPT_{i}]\n" for i in range(40))
    data = once(tmp_path, usage + "train_seg.py: error: unrecognized arguments: --lr 3e-4\n")
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    assert "unrecognized arguments" in data["summary"]


def test_a_notebook_run_its_user_interrupted_is_cancelled(tmp_path: Path):
    table = "epoch\ttrain_loss\tvalid_loss\taccuracy\ttime\n" + "".join(
        f"{e}\t{1.2 - e / 10:.4f}\t{1.3 - e / 10:.4f}\t{0.5 + e / 20:.4f}\t00:03\n"
        for e in range(4))
    text = (table + "Output exceeds the size limit. Open the full output data in a text "
            "editor\n" + "-" * 75 + "\n"
            "KeyboardInterrupt                         Traceback (most recent call last)\n"
            "/tmp/ipykernel_4242/1234.py in <module>\n"
            "----> 1 learn.fit_one_cycle(25, lr_max=1e-3)\n")
    data = once(tmp_path, text)
    assert data["terminal_state"] == "CANCELLED", data["summary"]


def test_the_batch_a_callback_stopped_on_is_no_training_after_the_failure(tmp_path: Path):
    # Keras' TerminateOnNaN prints its message, then the bar of the batch it stopped on.
    text = ("Epoch 1/10\n"
            + "".join(f"{b}/234 [....] - ETA: 1:00:00 - loss: {44 - b:.4f}\n" for b in (1, 2))
            + "  3/234 [....] - ETA: 1:00:00 - loss: 41.0Batch 3: Invalid loss, terminating "
              "training\n  4/234 [....] - ETA: 1:00:00 - loss: inf\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]


def test_a_failure_outlived_by_training_is_no_crash(tmp_path: Path):
    text = (_preamble(8) + _iters(10, 50) + "2024-05-02 11:05:00 | ERROR | trainer - run failed "
            "to sync metrics to the dashboard\n" + _OOM + _iters(60, 200))
    data = once(tmp_path, text)
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _launched_in(tmp_path: Path, text: str) -> bool:
    from babysit.model import EventKind
    from babysit.targets.common.log_file import LocalLogTarget

    log = tmp_path / "train.log"
    log.write_text(text)
    snapshot = LocalLogTarget(log, tail_bytes=512 * 1024).poll()
    return any(e.kind is EventKind.LAUNCHED for r in snapshot.log.records for e in r.events)


def test_a_relaunch_at_the_end_of_a_long_log_is_seen_by_its_start_up(tmp_path: Path):
    # The history scan reads the middle; the start-up is known from the log's head.
    text = (_preamble(64) + _iters(10, 120_000) + _TRACEBACK + _preamble(8) + _iters(10, 10))
    assert _launched_in(tmp_path, text)


def test_the_middle_of_a_long_log_is_no_start_up(tmp_path: Path):
    # The parsed tail (the last TAIL_LINES lines) begins with a line that is printed
    # again after the OOM: the middle of a run, not its start-up.
    evaluation = "Evaluating on the validation split (500 images)...\n"
    middle = TAIL_LINES - 7  # less the OOM's four lines, the evaluation twice, the last iteration
    ending = (evaluation + _iters(120_010, 120_010 + 10 * (middle - 1)) + _OOM + evaluation
              + _iters(140_000, 140_000))
    assert ending.count("\n") == TAIL_LINES
    assert not _launched_in(tmp_path, _preamble(64) + _iters(10, 120_000) + ending)


def test_a_recovered_traceback_then_the_last_step_and_a_completion_is_a_success(
        tmp_path: Path):
    steps = "".join(f"step {s} | loss {3 / (1 + s / 50):.4f}\n" for s in range(1, 100))
    text = (steps + "Traceback (most recent call last):\n  File \"wandb/sender.py\", line 9, "
            "in send\nConnectionResetError: [Errno 104] Connection reset by peer\n"
            "step 100 | loss 1.0000\nTraining completed.\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


def test_a_log_that_ends_on_a_bare_keyboard_interrupt_was_stopped_by_its_user(tmp_path: Path):
    steps = "".join(f"step {s} | loss {3 / (1 + s / 50):.4f}\n" for s in range(1, 60))
    data = once(tmp_path, steps + "KeyboardInterrupt\n\n")
    assert data["terminal_state"] == "CANCELLED", data["summary"]


def test_a_later_command_argparse_refused_ends_the_training_before_it(tmp_path: Path):
    # A Slurm job's next step refused after the training step printed its results
    # (SambaFlow's sn_boilerplate, sealed-7): that command never started, and the process
    # that trained is gone; how it ended the log does not say.
    text = "".join(f"Epoch [{e}/5], Step [600/600], Loss: {0.9 - e * 0.1:.4f}\n"
                   for e in range(1, 4))
    text += "".join("usage: sn_boilerplate_main.py [-h] {compile,run,test} ...\n"
                    "sn_boilerplate_main.py: error: unrecognized arguments: -ws 8\n"
                    for _ in range(3))
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "ENDED"), \
        data["summary"]
    assert "never started" in json.dumps(data["anomalies_detected"])

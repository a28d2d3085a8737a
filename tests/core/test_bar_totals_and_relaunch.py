"""Two endings that are not (issue 23, sealed classes 4 and 5): a progress bar at its
total while the run goes on training past it, and a crash followed by the same run
started again and training on."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_endings import once


def _verl(bar_total: int, steps: int) -> str:
    # verl ray_trainer.py `fit()`: tqdm `Training Progress` over total_training_steps and
    # one `step:N - key:value - ...` metrics line per step (from the TaskRunner actor).
    lines = []
    for s in range(1, steps + 1):
        if s <= bar_total:
            pct = 100 * s // bar_total
            lines.append(f"Training Progress: {pct:3d}%|{'█' * (pct // 10):<10}| {s}/{bar_total} "
                         f"[{s // 60:02d}:{s % 60:02d}<00:10, 1.21s/it]")
        lines.append(f"(TaskRunner pid=12345) step:{s} - actor/entropy:{0.5 - s / 1000:.4f} - "
                     f"actor/pg_loss:{0.01 * s:.4f} - critic/score/mean:{0.2 + s / 100:.3f} - "
                     f"response_length/mean:{300 + s}")
    return "\n".join(lines) + "\n"


def test_a_bar_at_its_total_is_no_end_when_training_goes_on_past_it(tmp_path: Path):
    data = once(tmp_path, _verl(50, 80))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert data["decision"] != "GO"


def test_a_bar_at_its_total_with_nothing_after_its_last_step_is_the_end(tmp_path: Path):
    data = once(tmp_path, _verl(50, 50))
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


def test_an_epoch_bar_kept_only_at_its_total_is_no_end(tmp_path: Path):
    # A hand-written loop's tqdm without bar glyphs (`tqdm(ncols=0)`-like, as in a
    # Colab capture): the log keeps each epoch's bar at 100 % only, the epoch in its
    # description (`Train Epoch: 19 Loss: 0.36: 100% 2785/2785`).
    lines = []
    for epoch in range(1, 8):
        lines += [f"Train Epoch: {epoch} Loss: {0.5 - epoch / 100:.8f}: 100% 2785/2785 "
                  f"[00:52<00:00, 52.58it/s]",
                  f"Valid Epoch: {epoch} Loss: {0.6 - epoch / 100:.8f}: 100% 660/660 "
                  f"[00:04<00:00, 142.79it/s]", " ", f"Dataset: tag, Epoch: {epoch}"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_bar_under_an_epoch_header_line_is_that_epochs(tmp_path: Path):
    # `print(f"Epoch {epoch}")` then a tqdm over the 6 batches of the epoch, its redraws
    # glued on one line (no newline between them in a nohup capture).
    lines = []
    for epoch in range(5):
        lines.append(f"Epoch {epoch}")
        lines.append("".join(f"{100 * i // 6:3d}%|{'█' * (10 * i // 6):<10}| {i}/6 "
                             f"[00:0{i}<00:0{6 - i},  2.80s/it]" for i in range(7)))
        lines += [f"Loss:  {100 / (epoch + 1 + i / 6):.4f}" for i in range(6)]
        lines.append("Evaluating...")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "RUNNING", data["summary"]


_TRACEBACK = ("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
              "    main()\nRuntimeError: CUDA error: an illegal memory access was encountered\n")


def _epochs(first: int, last: int) -> str:
    # A loop that prints one line per epoch and no step (a common hand-written shape).
    return "".join(f"epoch {e} train_loss {1 / e:.4f} val_loss {1.1 / e:.4f}\n"
                   for e in range(first, last + 1))


def test_a_crash_then_the_run_started_again_and_training_is_a_restart(tmp_path: Path):
    data = once(tmp_path, _epochs(1, 5) + _TRACEBACK + "Loading config from cfg.yaml\n"
                + _epochs(1, 3))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert data["decision"] != "NO-GO"


def test_a_crash_then_a_resume_that_trains_on_is_a_restart(tmp_path: Path):
    data = once(tmp_path, _epochs(1, 5) + _TRACEBACK + "Resumed from epoch 5\n" + _epochs(6, 8))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_crash_with_nothing_after_it_is_still_a_crash(tmp_path: Path):
    data = once(tmp_path, _epochs(1, 5) + _TRACEBACK)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED")


def test_a_slurm_job_requeued_into_the_same_log_is_a_restart(tmp_path: Path):
    # `#SBATCH --requeue --open-mode=append`: slurmstepd's line for the first job, then
    # the requeued job's output in the same file.
    steps = "".join(f"step {s} | loss {3 / (1 + s / 50):.4f}\n" for s in range(1, 121))
    more = "".join(f"step {s} | loss {3 / (1 + s / 50):.4f}\n" for s in range(101, 200))
    text = (steps + "slurmstepd: error: *** JOB 4242 ON node01 CANCELLED AT "
            "2023-06-01T10:11:12 DUE TO TIME LIMIT ***\n" + "Resuming from ckpt/step_100\n"
            + more)
    data = once(tmp_path, text)
    assert data["terminal_state"] == "RUNNING", data["summary"]

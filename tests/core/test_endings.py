"""Endings only on evidence (issue 23): what a log and a vanished process prove about how
a run ended, judged through the whole watch and its verdict file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import FakeClock, artifact_in
from tests.core.test_fixer import watch


def once(tmp_path: Path, text: str) -> dict[str, Any]:
    log = tmp_path / "train.log"
    log.write_text(text)
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path),
                NullObserver(), clock=FakeClock())
    return artifact_in(tmp_path)


def hf_stdout(records: int) -> str:
    """What `python train.py > train.log` keeps of a Hugging Face Trainer run: the loss
    dicts and the final summary (the tqdm bar and the logger go to stderr)."""
    lines = [f"{{'loss': {2.5 - i * 0.05:.4f}, 'grad_norm': {1.0 + i * 0.01:.3f}, "
             f"'learning_rate': {5e-5 * (1 - i / records):.3e}, "
             f"'epoch': {3 * (i + 1) / records:.2f}}}" for i in range(records)]
    return "\n".join(lines) + "\n"


HF_SUMMARY = ("{'train_runtime': 812.4, 'train_samples_per_second': 11.8, "
              "'train_steps_per_second': 0.369, 'train_loss': 1.93, 'epoch': 3.0}\n")


def test_a_finished_stdout_only_hf_trainer_run_is_go_with_its_records_counted(tmp_path: Path):
    data = once(tmp_path, hf_stdout(30) + HF_SUMMARY)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    assert data["total_steps"] == 30
    assert data["reading"]["progress"] == "record"
    assert "loss" in data["reading"]["metrics_found"]
    assert "train_loss" not in data["final_metrics"]  # the summary's averages are no step


def test_a_stdout_only_hf_trainer_log_without_its_summary_is_still_running(tmp_path: Path):
    data = once(tmp_path, hf_stdout(30))
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "RUNNING")


def test_an_end_of_training_summary_long_before_the_planned_total_is_an_early_end(
        tmp_path: Path):
    """detectron2 prints its timing summary however training stopped: at iteration 16k
    of a planned 111k that is a run that ended early, not one that finished."""
    lines = [f"[06/13 10:{i % 60:02d}:00 d2.utils.events]:  eta: 1 day, 2:03:04  iter: {i}  "
             f"total_loss: {1.5 - i / 40000:.3f}  lr: 0.02  max_mem: 9000M"
             for i in range(15_999, 16_400, 20)]
    lines.insert(0, "[06/13 09:00:00 d2.engine.train_loop]: Starting training from iteration 0")
    lines.insert(1, "[06/13 09:00:00 d2.config]: SOLVER.MAX_ITER: 111000  max_iter: 111000")
    lines += ["[06/13 11:00:00 d2.engine.hooks]: Overall training speed: 16378 iterations in "
              "5:03:02 (1.1102 s / it)",
              "[06/13 11:00:00 d2.engine.hooks]: Total training time: 5:05:06 (0:02:04 on hooks)"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "ENDED", data["summary"]
    assert data["decision"] != "GO"
    assert any(a["type"] == "crash" and "stopped early" in a["description"]
               for a in data["anomalies_detected"])


def _stopped_at_500_of_1000(evals: list[float]) -> str:
    """A trainer's log whose summary comes at step 500 of 1,000 planned, after an
    evaluation every 100 steps (PaddleNLP's and the Hugging Face Trainer's shapes)."""
    lines = ["  max_steps = 1000"]
    for n, value in enumerate(evals, start=1):
        lines += [f"step {s}/1000 - loss: {1.0 / s:.5f}"
                  for s in range(n * 100 - 90, n * 100 + 1, 10)]
        lines.append(f"step {n * 100}/1000 - eval_loss: {value}")
    return "\n".join(lines) + "\nTraining completed.\n" + HF_SUMMARY


def test_a_summary_short_of_the_plan_after_the_evaluation_stopped_improving_is_an_early_stop(
        tmp_path: Path):
    """An early-stopping callback stops the loop and the trainer prints the summary it
    prints at the plan's end (sealed-11's PaddleNLP few-shot run: `early_stop_patience`
    4, the best evaluation at step 300, the summary at step 700 of 1,000)."""
    data = once(tmp_path, _stopped_at_500_of_1000([1.0, 0.8, 0.85, 0.9, 0.95]))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


def test_a_summary_short_of_the_plan_while_the_evaluation_still_improves_is_an_early_end(
        tmp_path: Path):
    data = once(tmp_path, _stopped_at_500_of_1000([1.0, 0.9, 0.8, 0.7, 0.6]))
    assert data["terminal_state"] == "ENDED", data["summary"]
    assert data["decision"] != "GO"


def test_training_done_said_part_way_is_not_the_end(tmp_path: Path):
    lines = ["Total optimization steps = 100"]
    lines += [f"step {s}/100 loss {3 - s * 0.02:.3f}" for s in range(1, 31)]
    lines += ["Tokenizer training completed in 3.2s"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED" and data["decision"] != "GO", data["summary"]


def test_a_stage_done_line_at_the_end_of_the_log_is_not_the_runs_end(tmp_path: Path):
    lines = [f"Epoch 3/10 step {s} loss {3 - s * 0.02:.3f}" for s in range(1, 40)]
    lines += ["Epoch 3/10 done"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "RUNNING")


def test_a_log_with_a_completion_line_and_nothing_readable_is_never_go(tmp_path: Path):
    data = once(tmp_path, "loading data\nbuilding the model\nall good so far\n"
                          "Training complete\n")
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert "could not read training progress" in data["summary"]
    assert data["reading"]["progress"] == "none"


_HF_LOOP = ("import time\nfor i in range(400):\n"
            "    print({'loss': round(2.5 - i * 0.001, 4), 'learning_rate': 5e-05, "
            "'epoch': round(i / 100, 2)}, flush=True)\n"
            "    time.sleep(0.05)\n")
# A parent that starts the loop and reaps it, as a shell or a launcher does: once the loop
# is killed its exit status goes to this parent, never to babysit.
_PARENT = ("import subprocess, sys\n"
           "with open(sys.argv[1], 'ab') as out:\n"
           "    child = subprocess.Popen([sys.executable, '-c', sys.argv[2]], stdout=out,\n"
           "                             stderr=subprocess.STDOUT)\n"
           "print(child.pid, flush=True)\n"
           "child.wait()\n")


def under_a_parent(log: Path, code: str) -> tuple[subprocess.Popen[str], int]:
    """`code` run by a parent process that reaps it (babysit never sees its exit status):
    the parent and the pid of the run."""
    parent = subprocess.Popen([sys.executable, "-c", _PARENT, str(log), code],
                              stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    return parent, int(parent.stdout.readline())


def test_a_stdout_only_run_killed_and_reaped_by_its_parent_is_not_succeeded(tmp_path: Path):
    log = tmp_path / "train.log"
    parent, pid = under_a_parent(log, _HF_LOOP)

    def kill_soon() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not log.exists() or log.stat().st_size < 2000):
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)

    threading.Thread(target=kill_soon, daemon=True).start()
    try:
        result, data = watch(tmp_path, SimpleNamespace(pid=pid))  # type: ignore[arg-type]
    finally:
        parent.wait(timeout=60)
    # Usually the parent reaps the run first and babysit sees only that it is gone: ENDED.
    # On a busy machine babysit may look while the killed run is still a zombie, whose
    # exit status /proc shows to anyone: then it knows the SIGKILL, and FAILED is right.
    # Either way it is never a success.
    if data["terminal_state"] == "FAILED":
        assert "SIGKILL" in data["summary"], data["summary"]
        assert result.exit_code is ExitCode.NO_GO
    else:
        assert data["terminal_state"] == "ENDED", data["summary"]
        assert data["decision"] == "CONDITIONAL" and result.exit_code is ExitCode.CONDITIONAL


def test_a_nan_followed_by_a_resume_from_before_it_that_completes_is_resolved(tmp_path: Path):
    """Issue 26: the run NaNs at step 31, resumes from its step-30 checkpoint and finishes
    with finite losses: the NaN is resolved (and says how), not a NO-GO."""
    lines = [f"step {s}/100 | loss={3 - s * 0.02:.3f}" for s in range(1, 31)]
    lines += ["step 31/100 | loss=nan", "Resuming from checkpoint out/ckpt-30"]
    lines += [f"step {s}/100 | loss={3 - s * 0.02:.3f}" for s in range(30, 101)]
    lines += ["Training completed."]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["decision"] != "NO-GO", data["summary"]
    [nan] = [a for a in data["anomalies_detected"] if a["type"] == "nan-inf"]
    assert "resolved: the run resumed from step 30" in nan["description"]


def test_a_nan_the_run_never_went_back_from_stays_open(tmp_path: Path):
    lines = [f"step {s}/100 | loss={3 - s * 0.02:.3f}" for s in range(1, 31)]
    lines += ["step 31/100 | loss=nan"] + [f"step {s}/100 | loss=2.0" for s in range(32, 101)]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["decision"] == "NO-GO"


def test_a_checkpoint_cadence_that_stops_is_an_overdue_save(tmp_path: Path):
    """Issue 24: saves every 300 steps that stop after step 600."""
    lines = []
    for s in range(1, 1501):
        lines.append(f"step {s}/3000 | loss={3 - s * 0.0005:.4f}")
        if s in (300, 600):
            lines.append(f"Saving checkpoint to out/ckpt-{s}")
    data = once(tmp_path, "\n".join(lines) + "\n")
    [late] = [a for a in data["anomalies_detected"] if "overdue" in a["description"]]
    assert late["type"] == "checkpoint-failure" and "none since step 600" in late["description"]
    assert data["best_checkpoint"] == "out/ckpt-600"


def test_saves_on_cadence_are_not_overdue(tmp_path: Path):
    lines = []
    for s in range(1, 1501):
        lines.append(f"step {s}/3000 | loss={3 - s * 0.0005:.4f}")
        if s % 300 == 0:
            lines.append(f"Saving checkpoint to out/ckpt-{s}")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert not [a for a in data["anomalies_detected"] if "overdue" in a["description"]]


def _cosine_log(jump_back: bool) -> str:
    import math

    lines = ["  lr_scheduler_type: cosine", "Total optimization steps = 1000"]
    for s in range(1, 801):
        lr = 3e-4 * s / 50 if s <= 50 else 3e-4 * 0.5 * (1 + math.cos(math.pi * (s - 50) / 950))
        if jump_back and s > 600:
            lr = 3e-4
        lines.append(f"step {s}/1000 | loss={3 - s * 0.001:.4f} | lr={lr:.3e}")
    return "\n".join(lines) + "\n"


def test_a_learning_rate_back_at_its_peak_under_a_cosine_schedule_is_flagged(tmp_path: Path):
    """Issue 24: the schedule the log's configuration names is known to the rule from the
    first point, under --once too."""
    data = once(tmp_path, _cosine_log(jump_back=True))
    [lr] = [a for a in data["anomalies_detected"] if a["type"] == "lr-schedule"]
    assert "rose again" in lr["description"] and "'cosine'" in lr["description"]
    assert "resolved" not in lr["description"]


def test_a_cosine_schedule_that_decays_raises_nothing(tmp_path: Path):
    data = once(tmp_path, _cosine_log(jump_back=False))
    assert not [a for a in data["anomalies_detected"] if a["type"] == "lr-schedule"]


def test_an_early_stop_in_opennmt_s_words_is_the_run_s_deliberate_end(tmp_path: Path):
    # OpenNMT-py 3 (sealed-7): patience used up at step 1600 of a planned 100000.
    lines = [f"[2024-05-08 04:0{s // 400}:00,000 INFO] Step {s}/100000; acc: 61.2; "
             f"ppl: {3.5 - s / 1000:.2f}; xent: 1.2; lr: 1.00000; 1200/1100 tok/s;"
             for s in range(100, 1700, 100)]
    lines.append("[2024-05-08 04:08:04,516 INFO] Training finished after not improving. "
                 "Early Stop!")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def test_a_record_inside_the_only_planned_epoch_is_no_end(tmp_path: Path):
    """sealed-12 minimind_mac_mps_…_step_1700_of_44160: one epoch planned, a line every
    100 of its 44,160 batches. The last record names epoch 1 of 1, but its own counter
    says the epoch is 4 % done: a paste that stops there is a live run, not a finished
    one (it was SUCCEEDED / GO)."""
    lines = ["LLM总参数量：25.830 百万"]
    lines += [f"Epoch:[1/1]({s}/44160) loss:{8.9 - s / 400:.3f} lr:0.000550000000 "
              f"epoch_Time:{800 + s}.0min:" for s in range(0, 1701, 100)]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["decision"], data["terminal_state"]) == ("CONDITIONAL", "RUNNING"), \
        data["summary"]


def test_the_same_epoch_at_its_last_batch_still_ends_the_run(tmp_path: Path):
    lines = [f"Epoch:[1/1]({s}/1000) loss:{8.9 - s / 400:.3f} lr:0.00055"
             for s in range(0, 1001, 100)]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]

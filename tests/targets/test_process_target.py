"""Process targets against real processes: finding the log, how a run ended, the
crash evidence, and the PID-reuse guard. No psutil mocks."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from babysit.targets.process.target import ProcessTarget
from babysit.telemetry.gpu import GpuProbe
from babysit.telemetry.processes import Identity, find_log, identity_of, kernel_oom_killed

TRAINER = Path(__file__).parents[1] / "fake_trainer.py"


def start(log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, str(TRAINER), *args], stdout=out,
                                stderr=subprocess.STDOUT)


def no_gpu() -> GpuProbe:
    return GpuProbe(use_nvml=False, smi="/nonexistent/nvidia-smi")


def wait_for(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_log_is_found_through_the_stdout_redirect(tmp_path: Path):
    log = tmp_path / "train.log"
    proc = start(log, "--steps", "500", "--delay", "0.05")
    try:
        choice = find_log(identity_of(proc.pid))
        assert choice is not None and choice.path == str(log)
        assert "stdout" in choice.reason
    finally:
        proc.kill()
        proc.wait()


def test_log_is_found_through_tee(tmp_path: Path):
    log = tmp_path / "tee.log"
    trainer = subprocess.Popen([sys.executable, str(TRAINER), "--steps", "500", "--delay",
                                "0.05"], stdout=subprocess.PIPE)
    tee = subprocess.Popen(["tee", str(log)], stdin=trainer.stdout, stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: log.exists() and log.stat().st_size > 0)
        choice = find_log(identity_of(trainer.pid))
        assert choice is not None and choice.path == str(log)
        assert "tee" in choice.reason
    finally:
        trainer.kill()
        tee.kill()
        trainer.wait()
        tee.wait()


def test_tees_own_stderr_in_a_capture_file_is_not_the_log(tmp_path: Path):
    """An agent's or CI's shell: the pipeline's stderr is a regular file too. tee writes
    train.log; its fd 2 is the shell's capture file, never the run's log."""
    log, capture = tmp_path / "train.log", tmp_path / "shell-stderr"
    trainer = subprocess.Popen([sys.executable, str(TRAINER), "--steps", "500", "--delay",
                                "0.05"], stdout=subprocess.PIPE)
    with capture.open("ab") as shell_stderr:
        tee = subprocess.Popen(["tee", str(log)], stdin=trainer.stdout,
                               stdout=subprocess.DEVNULL, stderr=shell_stderr)
    try:
        wait_for(lambda: log.exists() and log.stat().st_size > 0)
        choice = find_log(identity_of(trainer.pid))
        assert choice is not None and choice.path == str(log), choice
    finally:
        trainer.kill()
        tee.kill()
        trainer.wait()
        tee.wait()


# A script that prints a banner to its console and its training to a log of its own.
_OWN_LOG = """
import sys, time
print("Loading data... done", flush=True)
print("UserWarning: the default of use_reentrant will change", file=sys.stderr, flush=True)
with open(sys.argv[1], "a") as log:
    for step in range(1, 400):
        log.write(f"step {step} loss {3 - step * 0.005:.4f}\\n"); log.flush()
        time.sleep(0.05)
"""


def test_a_console_with_no_training_gives_way_to_the_log_the_run_writes(tmp_path: Path):
    """`nohup python train.py > console.out 2>&1 &`, the script writing its metrics to
    logs/train.log: the console shows no training, the log does — it is the run's log."""
    (tmp_path / "logs").mkdir()
    log, console = tmp_path / "logs" / "train.log", tmp_path / "console.out"
    with console.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-c", _OWN_LOG, str(log)], stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: log.exists() and log.stat().st_size > 40)
        target = ProcessTarget(proc.pid, gpu=no_gpu())
        assert target.log_path == str(log)
        assert target.log_choice is not None and "shows no training" in target.log_choice.reason
        target.close()
        # Where both show training, the console (stdout) stays first.
        with console.open("a") as out:
            out.write("step 1 loss 3.0\n")
        assert find_log(identity_of(proc.pid)).path == str(console)  # type: ignore[union-attr]
    finally:
        proc.kill()
        proc.wait()


def test_snapshot_reads_log_and_process_and_a_dead_childs_exit_code(tmp_path: Path):
    log = tmp_path / "train.log"
    proc = start(log, "--steps", "30", "--mode", "raise", "--at", "5")
    target = ProcessTarget(proc.pid, gpu=no_gpu())
    assert target.log_path == str(log)
    # The test is its parent and does not reap it (no proc.poll()): it stays a zombie,
    # and babysit reads the exit status the zombie still carries.
    wait_for(lambda: not target.process.alive())
    snapshot = target.poll(final=True)
    assert snapshot.process.view is not None and snapshot.process.view.alive is False
    assert snapshot.process.view.exit is not None
    assert (snapshot.process.view.exit.code, snapshot.process.view.exit.source) == (1, "zombie")
    assert [r.step for r in snapshot.log.records if r.step][-1] == 5
    assert any(e.detail.startswith("ValueError") for r in snapshot.log.records for e in r.events)
    target.close()
    proc.wait()


def test_pid_reuse_is_not_mistaken_for_the_run():
    me = identity_of(subprocess.os.getpid())
    imposter = Identity(me.pid, me.create_time - 100.0)
    assert me.process() is not None
    assert imposter.process() is None


def test_unknown_pid_is_a_target_error():
    from babysit.targets.base import TargetError

    with pytest.raises(TargetError, match="no process"):
        ProcessTarget(2**22 + 12345, gpu=no_gpu())


_DMESG_OOM = (
    "[1234567.890123] python invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|"
    "__GFP_COMP), order=0, oom_score_adj=0\n"
    "[1234567.890456] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,"
    "mems_allowed=0,global_oom,task_memcg=/user.slice,task=python,pid=4242,uid=1000\n"
    "[1234567.890789] Out of memory: Killed process 4242 (python) total-vm:98765432kB, "
    "anon-rss:61234567kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:123456kB "
    "oom_score_adj:0\n"
)


def test_kernel_log_names_the_oom_killed_pid():
    assert kernel_oom_killed(4242, run=lambda argv: _DMESG_OOM) is True
    assert kernel_oom_killed(4243, run=lambda argv: _DMESG_OOM) is False


def test_unreadable_kernel_log_means_unknown():
    def denied(argv):
        raise PermissionError("dmesg: read kernel buffer failed: Operation not permitted")

    assert kernel_oom_killed(4242, run=denied) is None

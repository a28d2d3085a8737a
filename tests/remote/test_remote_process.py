"""`babysit user@host:/path --pid N` / `--proc NAME`: the remote process and its GPUs,
over the same SSH connection."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from babysit.targets.base import TargetError
from babysit.targets.common.composed import WatchedRun
from babysit.targets.process.remote import remote_process_target
from tests.conftest import FIXTURES
from tests.remote.conftest import Sshd

TRAINER = Path(__file__).parents[1] / "fake_trainer.py"


@pytest.fixture
def trainer(tmp_path: Path):
    # Under a name of its own: other tests' trainers may be running side by side.
    script = tmp_path / f"trainer_{tmp_path.name}.py"
    shutil.copyfile(TRAINER, script)
    log = tmp_path / "train.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, str(script), "--steps", "100000", "--delay",
                                 "0.05"], stdout=out, stderr=subprocess.STDOUT)
    while log.stat().st_size == 0:
        time.sleep(0.02)
    yield proc, log
    proc.kill()
    proc.wait()


def remote(server: Sshd, log: Path, **kwargs) -> WatchedRun:
    return remote_process_target(f"{server.alias}:{log}", **kwargs)


def test_remote_pid_is_watched_with_its_gpus_over_the_one_connection(ssh_home: Sshd, trainer):
    proc, log = trainer
    recorded = FIXTURES / "nvidia-smi"
    (ssh_home.root / "gpus.csv").write_text((recorded / "rtx2080ti-x4.query-gpu.csv").read_text())
    (ssh_home.root / "apps.csv").write_text(
        (recorded / "rtx2080ti-x4.query-compute-apps.csv").read_text()
        .replace("2620449", str(proc.pid)))
    target = remote(ssh_home, log, pid=proc.pid)
    snapshot = target.poll()
    assert snapshot.process.alive is True and snapshot.process.view is not None
    gpu = snapshot.process.gpu
    assert gpu is not None and gpu.text == "GPU: 70% util, 9.8/11 GB VRAM"
    assert any(f"process found on {ssh_home.alias}: PID {proc.pid}" in n
               for n in snapshot.notices)
    proc.kill()
    proc.wait()
    gone = target.poll()
    assert gone.process.alive is False
    assert target.log.connection.connects == 1
    target.close()


def test_remote_proc_by_name(ssh_home: Sshd, trainer):
    proc, log = trainer
    target = remote(ssh_home, log, proc=f"trainer_{log.parent.name}.py")
    assert target.probe.pid == proc.pid
    target.close()


def test_remote_proc_by_name_under_an_interpreter_whose_path_says_babysit(
        ssh_home: Sshd, tmp_path: Path):
    # A venv or conda env named after the project (a clone called `babysit`): the run's
    # interpreter path contains "babysit", the program does not, so it is the run.
    env = tmp_path / "babysit" / ".venv" / "bin"
    env.mkdir(parents=True)
    (env / "python3").symlink_to(sys.executable)
    script = tmp_path / f"trainer_{tmp_path.name}.py"
    shutil.copyfile(TRAINER, script)
    log = tmp_path / "train.log"
    with log.open("ab") as out:
        proc = subprocess.Popen([str(env / "python3"), str(script), "--steps", "100000",
                                 "--delay", "0.05"], stdout=out, stderr=subprocess.STDOUT)
    try:
        target = remote(ssh_home, log, proc=script.name)
        assert target.probe.pid == proc.pid
        target.close()
    finally:
        proc.kill()
        proc.wait()


def test_remote_proc_without_a_match_is_a_target_error(ssh_home: Sshd, trainer):
    _, log = trainer
    with pytest.raises(TargetError, match="no process matches"):
        remote(ssh_home, log, proc="'; touch PWNED #")


def test_missing_remote_nvidia_smi_means_no_gpu_line(ssh_home: Sshd, trainer):
    proc, log = trainer
    (ssh_home.root / "gpus.csv").write_text("")
    target = remote(ssh_home, log, pid=proc.pid)
    assert target.poll().process.gpu is None
    target.close()

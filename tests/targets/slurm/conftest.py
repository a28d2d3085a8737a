"""A throwaway single-node Slurm cluster (Debian's slurmctld, slurmd and munged) in a
temp dir, started once per test module and stopped after it. Needs root (slurmd runs
jobs as their user) and the slurm-wlm and munge packages; without them the tests skip
and say why."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo")


def _path(name: str) -> str | None:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}",)
                                       if os.access(p, os.X_OK)), None)


def missing() -> str | None:
    """Why a real cluster cannot start here, or None."""
    absent = [name for name in DAEMONS if _path(name) is None]
    if absent:
        return f"Slurm/munge not installed ({', '.join(absent)} missing): apt-get install " \
               f"slurm-wlm munge"
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs (SlurmUser=root in the test cluster)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.conf = root / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self.procs: list[subprocess.Popen[bytes]] = []

    def write_config(self) -> None:
        for sub in ("state", "spool", "munge", "log", "jobs"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "munge").chmod(0o700)
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        cpus = os.cpu_count() or 1
        r = self.root
        self.conf.write_text(f"""\
ClusterName=babysit-test
SlurmctldHost=localhost
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
AuthInfo=socket={r}/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=2
MinJobAge=600
NodeName=localhost CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
""")

    def start(self) -> None:
        self.write_config()
        m = self.root / "munge"
        self._spawn([_path("munged") or "munged", "-F", f"--key-file={m}/munge.key",
                     f"--socket={m}/munge.socket", f"--pid-file={m}/munged.pid",
                     f"--log-file={m}/munged.log", f"--seed-file={m}/seed", "--force"], "munged")
        self._wait(lambda: (m / "munge.socket").exists(), 10, "munged did not create its socket")
        self._spawn([_path("slurmctld") or "slurmctld", "-D", "-i"], "slurmctld")
        self._spawn([_path("slurmd") or "slurmd", "-D"], "slurmd")
        self._wait(self._idle, 40, "the node never became idle in sinfo")

    def _spawn(self, argv: list[str], name: str) -> None:
        out = (self.root / "log" / f"{name}.out").open("wb")
        self.procs.append(subprocess.Popen(argv, env=self.env, stdout=out,
                                           stderr=subprocess.STDOUT, cwd=self.root))

    def _idle(self) -> bool:
        for proc in self.procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}")
        done = self.run("sinfo", "-h", "-o", "%t", check=False)
        return done.stdout.strip() == "idle"

    def _wait(self, ready: object, seconds: float, message: str) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if ready():  # type: ignore[operator]
                return
            time.sleep(0.3)
        raise RuntimeError(message)

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), env=self.env, capture_output=True, text=True,
                              timeout=30, check=check)

    def sbatch(self, script: str, *args: str) -> str:
        path = self.root / "jobs" / f"job-{time.monotonic_ns()}.sh"
        path.write_text("#!/bin/bash\n" + script)
        path.chmod(0o755)
        done = self.run("sbatch", "--parsable", f"--chdir={self.root / 'jobs'}", *args,
                        str(path))
        return done.stdout.strip().split(";")[0]

    def field(self, job: str, key: str) -> str:
        from babysit.targets.slurm.states import parse_records, pick

        record = pick(parse_records(self.run("scontrol", "show", "job", "-o", job).stdout), job)
        return (record or {}).get(key, "")

    def wait_state(self, job: str, states: tuple[str, ...], seconds: float = 30) -> None:
        self._wait(lambda: self.field(job, "JobState") in states, seconds,
                   f"job {job} never reached {states}")

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:]
                         for p in sorted((self.root / "log").glob("*")) if p.is_file())

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    why = missing()
    if why is not None:
        pytest.skip(why)
    cluster = Cluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        logs = cluster.logs()
        cluster.stop()
        pytest.skip(f"a real Slurm cluster could not start here: {error}\n{logs[-2000:]}")
    try:
        yield cluster
    finally:
        cluster.stop()

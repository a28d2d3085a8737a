"""`babysit --slurm ID --ssh LOGIN` against the real single-node Slurm cluster (see
conftest.py) reached through a real OpenSSH server on loopback (tests/remote): every
scontrol/sacct runs in an SSH session whose environment names the cluster's slurm.conf,
and the job's StdOut is read over SFTP on the same connection. Skips, saying why, when
sshd or Slurm is not available here."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from babysit.exit_codes import ExitCode
from tests.conftest import validate_artifact
from tests.remote.conftest import SSHD, Sshd, make_server
from tests.targets.slurm.conftest import Cluster

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)

STEPS = 'for i in 1 2 3 4 5; do echo "Step $i/5 | loss=$((20 - i)).5"; sleep 0.4; done\n'


@pytest.fixture(scope="module")
def login(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """A "login node": an sshd whose sessions get the test cluster's SLURM_CONF."""
    if SSHD is None:
        pytest.skip("OpenSSH server (sshd) is not installed; .ci/run installs openssh-server")
    slurm: Cluster = request.getfixturevalue("slurm")  # started only when sshd is here
    server = make_server(tmp_path_factory.mktemp("slurm-sshd"),
                         env={"SLURM_CONF": str(slurm.conf)})
    try:
        server.start()
    except AssertionError as error:
        pytest.skip(f"sshd could not start here: {error}")
    try:
        yield server
    finally:
        server.kill()


def watch(login: Sshd, job: str, out: Path, ssh: str, *more: str,
          timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    # babysit's own environment cannot reach the cluster (a Slurm command run here
    # would fail): only the SSH sessions know its slurm.conf.
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    env.update(HOME=str(login.home), COLUMNS="200", NO_COLOR="1",
               SLURM_CONF=str(out / "no-such-slurm.conf"))
    done = subprocess.run([sys.executable, "-m", "babysit", "--slurm", job, "--ssh", ssh,
                           "--interval", "0.5", "--out-dir", str(out), *more],
                          env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert (out / "babysit-training.json").exists(), done.stdout + done.stderr
    return done, validate_artifact(out / "babysit-training.json")


def test_the_login_node_session_reaches_the_cluster(login: Sshd, slurm: Cluster):
    """The fixture itself: scontrol over ssh talks to the test cluster."""
    done = subprocess.run(["ssh", "-F", str(login.home / ".ssh" / "config"),
                           "-o", f"UserKnownHostsFile={login.home / '.ssh' / 'known_hosts'}",
                           "-o", "BatchMode=yes", login.alias, "sinfo", "-h", "-o", "%P"],
                          capture_output=True, text=True, timeout=30, check=False,
                          env={**os.environ, "HOME": str(login.home)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().rstrip("*") == "debug"


def test_a_job_that_completes_is_go_over_ssh(login: Sshd, slurm: Cluster, tmp_path: Path):
    job = slurm.sbatch(STEPS + 'echo "Training complete"\n', "-J", "fine",
                       f"--output={slurm.root}/jobs/%x-%j.out")
    done, data = watch(login, job, tmp_path, login.alias)
    assert done.returncode == ExitCode.GO, done.stdout + done.stderr
    assert (data["decision"], data["terminal_state"], data["target_type"]) == \
        ("GO", "SUCCEEDED", "slurm")
    assert data["target"] == f"{login.alias}:{job}"
    assert data["total_steps"] == 5 and data["final_metrics"]["loss"] == 15.5
    assert f"Slurm job: {job} (fine) | Partition: debug" in done.stdout
    assert "State: COMPLETED" in done.stdout
    # Every line is labelled with the login node, and the commands to run are over ssh.
    stamped = [line for line in done.stdout.splitlines() if line.lstrip().startswith("[")]
    assert stamped and all(line.startswith(f"[{login.alias}] ") for line in stamped), \
        done.stdout
    assert f"ssh {login.alias} 'scontrol show job {job}'" in data["next_commands"]
    assert f"ssh {login.alias} 'tail -n 80 -- {slurm.root}/jobs/fine-{job}.out'" in \
        data["next_commands"]


def test_a_job_that_prints_nan_is_no_go_over_ssh(login: Sshd, slurm: Cluster,
                                                 tmp_path: Path):
    # The job goes on long after its NaN (however slow the machine is): babysit must
    # meet it running, stop at the NaN and propose the cancel.
    job = slurm.sbatch('echo "Step 1/5 | loss=2.5"; sleep 0.5\necho "Step 2/5 | loss=nan"\n'
                       'sleep 0.5\necho "Step 3/5 | loss=nan"\nsleep 60\n')
    ssh = f"{login.user}@{login.alias}"
    try:
        done, data = watch(login, job, tmp_path, ssh)
    finally:
        slurm.run("scancel", job, check=False)
    assert data["decision"] == "NO-GO", done.stdout
    assert data["target"] == f"{ssh}:{job}"
    nan = [a for a in data["anomalies_detected"] if a["type"] == "nan-inf"]
    assert nan and nan[0]["step"] == 2, data["anomalies_detected"]
    # babysit stops at the NaN while the job still runs and proposes cancelling it, with
    # the exact command over ssh, never run; the exit code is the NO-GO's.
    assert done.returncode == ExitCode.NO_GO, done.stdout + done.stderr
    assert f"ssh {ssh} 'scancel {job}'" in done.stdout
    stamped = [line for line in done.stdout.splitlines() if line.lstrip().startswith("[")]
    assert stamped and all(line.startswith(f"[{ssh}] ") for line in stamped), done.stdout


def test_an_unknown_job_on_the_login_node_is_exit_code_4(login: Sshd, slurm: Cluster,
                                                         tmp_path: Path):
    done, data = watch(login, "999999", tmp_path, login.alias, timeout=60)
    assert done.returncode == ExitCode.UNREACHABLE, done.stdout + done.stderr
    assert f"no Slurm job 999999 on {login.user}@127.0.0.1:{login.port}" in \
        done.stdout + done.stderr
    assert data["decision"] != "GO"

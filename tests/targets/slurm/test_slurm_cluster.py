"""`babysit --slurm` against a real single-node Slurm cluster (see conftest.py): jobs
that complete, print NaN, are cancelled, and an array task, each watched through the
command line as a user would (the limits are in test_slurm_limits.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import validate_artifact
from tests.targets.slurm.conftest import Cluster

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)

STEPS = 'for i in 1 2 3 4 5; do echo "Step $i/5 | loss=$((20 - i)).5"; sleep 0.4; done\n'


def babysit_args(cluster: Cluster, job: str, out: Path, *more: str) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    return [sys.executable, "-m", "babysit", "--slurm", job, "--interval", "0.5",
            "--out-dir", str(out), *more]


def env(cluster: Cluster) -> dict[str, str]:
    return {**cluster.env, "COLUMNS": "200", "NO_COLOR": "1"}


def watch(cluster: Cluster, job: str, out: Path, *more: str,
          timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    done = subprocess.run(babysit_args(cluster, job, out, *more), env=env(cluster),
                          capture_output=True, text=True, timeout=timeout, check=False)
    assert (out / "babysit-training.json").exists(), done.stdout + done.stderr
    return done, validate_artifact(out / "babysit-training.json")


def types(data: dict[str, Any]) -> set[str]:
    return {a["type"] for a in data["anomalies_detected"]}


def test_a_job_that_completes_is_go(slurm: Cluster, tmp_path: Path):
    job = slurm.sbatch(STEPS + 'echo "Training complete"\n', "-J", "fine",
                       f"--output={slurm.root}/jobs/%x-%j.out")
    done, data = watch(slurm, job, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (data["decision"], data["terminal_state"], data["target_type"]) == \
        ("GO", "SUCCEEDED", "slurm")
    assert data["total_steps"] == 5 and data["final_metrics"]["loss"] == 15.5
    assert f"Slurm job: {job} (fine) | Partition: debug" in done.stdout
    assert "State: COMPLETED" in done.stdout
    assert f"scontrol show job {job}" in data["next_commands"]
    assert f"tail -n 80 -- {slurm.root}/jobs/fine-{job}.out" in data["next_commands"]


def test_a_job_that_prints_nan_is_no_go(slurm: Cluster, tmp_path: Path):
    job = slurm.sbatch('echo "Step 1/5 | loss=2.5"; sleep 0.5\necho "Step 2/5 | loss=nan"\n'
                       'sleep 0.5\necho "Step 3/5 | loss=nan"\nsleep 1\n')
    done, data = watch(slurm, job, tmp_path)
    assert data["decision"] == "NO-GO", done.stdout
    assert "nan-inf" in types(data)
    assert done.returncode != 0


def test_a_cancelled_job_is_cancelled(slurm: Cluster, tmp_path: Path):
    job = slurm.sbatch('for i in $(seq 1 300); do echo "Step $i/300 | loss=1.0"; sleep 1; '
                       'done\n')
    slurm.wait_state(job, ("RUNNING",))
    proc = subprocess.Popen(babysit_args(slurm, job, tmp_path), env=env(slurm),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(3)
        slurm.run("scancel", job)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["terminal_state"] == "CANCELLED", out
    assert data["decision"] == "NO-GO"
    cancelled = [a for a in data["anomalies_detected"] if a["type"] == "job-failure"]
    assert cancelled and "was cancelled" in cancelled[0]["description"]
    assert proc.returncode != 0


def test_an_array_task_is_watched_on_its_own(slurm: Cluster, tmp_path: Path):
    job = slurm.sbatch(STEPS, "--array=1-2", f"--output={slurm.root}/jobs/arr-%A_%a.out")
    done, data = watch(slurm, f"{job}_1", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert data["target"] == f"{job}_1"
    assert f"tail -n 80 -- {slurm.root}/jobs/arr-{job}_1.out" in data["next_commands"]

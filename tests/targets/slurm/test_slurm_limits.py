"""Jobs against Slurm's limits, watched with `babysit --slurm`: one past its time limit,
one that can never start as submitted, and a job id Slurm does not know.

The time limit takes a minute and a half of waiting, so this file gets a worker and a
cluster of its own and starts first; the slow test comes first in it, and the two quick
ones after it keep the scheduler from queueing other files behind it (pytest-xdist gives
a worker more work only when two tests or fewer are left in its queue)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.targets.slurm.conftest import Cluster
from tests.targets.slurm.test_slurm_cluster import babysit_args, env, types, watch

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)


@pytest.mark.slow
def test_a_job_past_its_time_limit_is_timeout(slurm: Cluster, tmp_path: Path):
    """Slow (~75 s): Slurm's limits are whole minutes, and slurmctld checks them about
    every 30 s, so a 1-minute limit ends the job 60-90 s after it starts."""
    job = slurm.sbatch('for i in $(seq 1 1000); do echo "Step $i/1000 | loss=1.0"; sleep 2; '
                       'done\n', "--time=1")
    # Polled every 2 s at most, so the end is seen when Slurm ends the job.
    done, data = watch(slurm, job, tmp_path, "--max-interval", "2", timeout=240)
    assert data["terminal_state"] == "TIMEOUT", done.stdout
    assert data["decision"] == "NO-GO"
    assert any("time limit" in a["description"] for a in data["anomalies_detected"])


def test_a_job_that_can_never_start_shows_its_pending_reason_and_is_not_stalled(
        slurm: Cluster, tmp_path: Path):
    cpus = (os.cpu_count() or 1) * 8 + 8
    job = slurm.sbatch("echo never\n", "-c", str(cpus))
    try:
        slurm.wait_state(job, ("PENDING",))
        done, data = watch(slurm, job, tmp_path, "--timeout", "6s")
    finally:
        slurm.run("scancel", job, check=False)
    reason = slurm.field(job, "Reason") or "PartitionConfig"
    assert f"State: PENDING ({reason}" in done.stdout, done.stdout
    assert data["terminal_state"] == "RUNNING"
    assert "stalled" not in types(data)
    if reason == "PartitionConfig":
        never = [a for a in data["anomalies_detected"] if a["type"] == "job-failure"]
        assert never and "will not start as submitted" in never[0]["description"]
    # Cancelling is proposed with the exact command, never done.
    assert f"scancel {job}" in done.stdout


def test_an_unknown_job_is_reported_with_exit_code_4(slurm: Cluster, tmp_path: Path):
    done = subprocess.run(babysit_args(slurm, "999999", tmp_path), env=env(slurm),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "no Slurm job 999999" in done.stdout + done.stderr


def test_a_job_whose_rate_will_not_reach_its_last_step_in_its_time_limit_is_told_early(
        slurm: Cluster, tmp_path: Path):
    """Two steps a second, 100 000 planned, two minutes allowed: `deadline` within
    seconds, long before Slurm ends the job."""
    job = slurm.sbatch('for i in $(seq 1 100000); do echo "Step $i/100000 | loss=1.0"; '
                       'sleep 0.5; done\n', "--time=2")
    try:
        slurm.wait_state(job, ("RUNNING",))
        done, data = watch(slurm, job, tmp_path, "--timeout", "8s")
    finally:
        slurm.run("scancel", job, check=False)
    deadline = [a for a in data["anomalies_detected"] if a["type"] == "deadline"]
    assert deadline, done.stdout
    assert "its time limit (Slurm TimeLimit, 2m" in deadline[0]["description"]
    assert f"scontrol requeue {job}" in deadline[0]["description"]
    assert "| Left: " in done.stdout

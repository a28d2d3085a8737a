"""A Slurm job that runs past its time limit, watched with `babysit --slurm`.

Alone in its file so that its own cluster starts it at once, on a worker of its own, and
the minute and a half it waits for Slurm overlaps the rest of the suite (the suite
starts files holding slow tests first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.targets.slurm.conftest import Cluster
from tests.targets.slurm.test_slurm_cluster import watch


@pytest.mark.slow
def test_a_job_past_its_time_limit_is_timeout(slurm: Cluster, tmp_path: Path):
    """Slow (~75 s): Slurm's limits are whole minutes, and slurmctld checks them about
    every 30 s, so a 1-minute limit ends the job 60-90 s after it starts."""
    job = slurm.sbatch('for i in $(seq 1 1000); do echo "Step $i/1000 | loss=1.0"; sleep 2; '
                       'done\n', "--time=1")
    done, data = watch(slurm, job, tmp_path, timeout=240)
    assert data["terminal_state"] == "TIMEOUT", done.stdout
    assert data["decision"] == "NO-GO"
    assert any("time limit" in a["description"] for a in data["anomalies_detected"])

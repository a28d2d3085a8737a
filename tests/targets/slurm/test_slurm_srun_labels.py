"""`srun -l` on a real single-node Slurm cluster (see conftest.py): two tasks print their
steps under srun's labels, task 1 prints a NaN and exits 1, and srun itself says which
node the task ran on (`srun: error: localhost: task 1: Exited with exit code 1`). The job's
output, read as a log, is NO-GO naming rank 1, its own step and that node (issue 24)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import validate_artifact
from tests.targets.slurm.conftest import Cluster

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)

TASKS = """\
srun -l -n 2 bash -c '
for i in 1 2 3 4 5 6; do
  if [ "$SLURM_PROCID" = 1 ] && [ $i = 4 ]; then echo "step $i | loss nan"; exit 1; fi
  echo "step $i | loss 2.$((9 - i))"; sleep 0.3
done'
"""


def test_srun_labels_and_its_task_exit_line_name_the_rank_its_step_and_node(
        slurm: Cluster, tmp_path: Path):
    out = slurm.root / "jobs" / "labels.out"
    job = slurm.sbatch(TASKS, "-J", "labels", "-n", "2", f"--output={out}")
    slurm.wait_state(job, ("COMPLETED", "FAILED"), seconds=60)
    text = out.read_text()
    # What this Slurm really prints: the labels and srun's own line about the task.
    assert re.search(r"^1: step 3 \| loss 2\.6$", text, re.MULTILINE), text
    assert re.search(r"^srun: error: localhost: task 1: Exited with exit code 1$", text,
                     re.MULTILINE), text
    done = subprocess.run([sys.executable, "-m", "babysit", str(out), "--once",
                           "--out-dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=60, check=False)
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["decision"] == "NO-GO", done.stdout + done.stderr
    [nan] = [a for a in data["anomalies_detected"] if a["type"] == "nan-inf"]
    assert "rank 1 (node localhost)" in nan["description"] and nan["step"] == 4, nan

"""A Slurm job whose rate will not get it to its last step within its TimeLimit: the
`deadline` anomaly, early, with the step it will reach and the commands to act on it.
scontrol is a stand-in that prints what 23.02 prints (tests/fixtures/slurm), its RunTime
growing with the clock; the job's output is a real file the test appends to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver, PollReport
from babysit.core.session import run_session
from babysit.targets.common.log_file import LocalLogTarget
from babysit.targets.slurm.job import SlurmJobTarget
from babysit.targets.slurm.runner import Result
from tests.conftest import FakeClock, append, validate_artifact

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"


class Scontrol:
    """`scontrol show job -o` of a running job, RunTime = the clock's time since start."""

    where = "this machine"

    def __init__(self, clock: FakeClock, log: Path, limit: str) -> None:
        self.clock = clock
        self.started = clock.t
        line = (FIXTURES / "scontrol-23.02.txt").read_text(encoding="utf-8").strip()
        self.line = (line.replace("TimeLimit=04:00:00", f"TimeLimit={limit}")
                     .replace("/home/ana/run/slurm-%A_%a.out", str(log)))

    def run(self, argv: Sequence[str], timeout: float = 20.0) -> Result:
        used = int(self.clock.t - self.started) + 600  # ten minutes in when watched
        hours, rest = divmod(used, 3600)
        run_time = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
        return Result(0, self.line.replace("RunTime=01:00:00", f"RunTime={run_time}"), "")

    def close(self) -> None:
        pass


class Lines(NullObserver):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def poll(self, report: PollReport) -> None:
        self.lines.append(report.headline)

    baseline = poll


def watch(tmp_path: Path, limit: str, steps_per_poll: int) -> tuple[dict[str, Any], Lines]:
    log = tmp_path / "slurm-2280887_0.out"
    log.write_text("Step 100/10000 | loss=2.0\nSaving checkpoint to /ckpt/step-100\n")
    step = [100]

    def write(clock: FakeClock) -> None:  # the job writes between polls (60 s apart)
        step[0] += steps_per_poll
        append(log, f"Step {step[0]}/10000 | loss=1.9\nSaving checkpoint to "
                    f"/ckpt/step-{step[0]}\n")

    clock = FakeClock(write)
    runner = Scontrol(clock, log, limit)
    seen = Lines()
    settings = Settings(poll=replace(PollSettings(), interval=60, max_polls=6), fix=False,
                        out_dir=tmp_path)
    run_session(lambda: SlurmJobTarget("2281126", runner, LocalLogTarget), "2281126",
                "slurm", settings, seen, clock=clock)
    return validate_artifact(tmp_path / "babysit-training.json"), seen


def test_a_job_that_will_not_finish_in_its_time_limit_raises_deadline_early(tmp_path: Path):
    # About 100 steps a minute, 9800 to go: well over an hour, with 50 min of 1 h left.
    data, seen = watch(tmp_path, "01:00:00", steps_per_poll=100)
    deadline = next(a for a in data["anomalies_detected"] if a["type"] == "deadline")
    assert deadline["severity"] == "high"
    text = deadline["description"]
    assert "its time limit (Slurm TimeLimit, 1h 0m" in text
    assert "it will stop near step" in text and "of 10000" in text
    assert "scontrol update JobId=2281126 'TimeLimit=" in text
    assert "scontrol requeue 2281126" in text
    assert "the last checkpoint before the limit is due at step" in text
    assert any("| Left: " in line for line in seen.lines)


def test_a_job_well_within_its_time_limit_raises_nothing(tmp_path: Path):
    data, seen = watch(tmp_path, "1-00:00:00", steps_per_poll=100)
    assert not any(a["type"] == "deadline" for a in data["anomalies_detected"])
    assert any("| Left: 23h" in line for line in seen.lines)

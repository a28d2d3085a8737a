"""A Slurm job of four tasks whose StdOut `srun -l` labels (`2: step=…`): a NaN on task 2
is the run's NO-GO naming rank 2 and its step; a task 30 % slower per step is a
straggler named; four healthy tasks raise neither (issue 24). scontrol is a stand-in
that prints what 23.02 prints (tests/fixtures/slurm, NumTasks=4); the output is a real
file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.model import Record
from babysit.targets.common.log_file import LocalLogTarget
from babysit.targets.slurm.job import SlurmJobTarget, _on_node
from babysit.targets.slurm.runner import Result
from tests.conftest import FakeClock, validate_artifact
from tests.targets.rank_shapes import STEPS, four_ranks

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"


class Scontrol:
    """`scontrol show job -o` of the running job, its output at `log`."""

    where = "this machine"

    def __init__(self, log: Path) -> None:
        line = (FIXTURES / "scontrol-23.02.txt").read_text(encoding="utf-8").strip()
        self.line = line.replace("/home/ana/run/slurm-%A_%a.out", str(log))

    def run(self, argv: Sequence[str], timeout: float = 20.0) -> Result:
        return Result(0, self.line, "")

    def close(self) -> None:
        pass


def judge(tmp_path: Path, ranks: list[list[str]]) -> dict[str, Any]:
    log = tmp_path / "slurm-2280887_0.out"
    lines = ["+ srun -l python train.py"] + [f"{rank}: {ranks[rank][i]}" for i in range(STEPS)
                                             for rank in range(len(ranks))]
    log.write_text("\n".join(lines) + "\n")
    settings = Settings(poll=replace(PollSettings(), once=True), fix=False, out_dir=tmp_path)
    run_session(lambda: SlurmJobTarget("2281126", Scontrol(log), LocalLogTarget), "2281126",
                "slurm", settings, NullObserver(), clock=FakeClock())
    return validate_artifact(tmp_path / "babysit-training.json")


def of_type(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [a for a in data["anomalies_detected"] if a["type"] == kind]


def test_a_nan_on_task_2_of_4_is_no_go_naming_rank_2(tmp_path: Path):
    data = judge(tmp_path, four_ranks(nan_on=2))
    assert data["decision"] == "NO-GO", data["summary"]
    [nan] = of_type(data, "nan-inf")
    assert "rank 2 (node gn07)" in nan["description"] and nan["step"] == 31


def test_a_task_30_percent_slower_is_a_straggler_naming_it(tmp_path: Path):
    [straggler] = of_type(judge(tmp_path, four_ranks(slow=1)), "straggler")
    # The job ran on one node (NodeList=gn07): the straggler is named with it.
    assert straggler["description"].startswith("rank 1 (node gn07) is 30 % slower per step")


def test_four_healthy_tasks_raise_nothing_of_ranks(tmp_path: Path):
    data = judge(tmp_path, four_ranks())
    assert not of_type(data, "nan-inf") and not of_type(data, "straggler")
    assert data["total_steps"] == STEPS


def test_a_torchrun_worker_of_a_one_node_job_is_named_with_the_node():
    records = (Record(rank=5, source="local rank 2 of task 0"), Record(rank=6, source="task 0"),
               Record(rank=7, source="rank 3 (local rank 3 of task 0)"),
               Record(rank=8, source="node gn02"), Record(rank=None))
    assert [r.source for r in _on_node(records, "gn07")] == [
        "local rank 2 of task 0 on node gn07", "task 0, node gn07",
        "rank 3 (local rank 3 of task 0, node gn07)", "node gn02", ""]
    assert _on_node(records, "gn[07-08]") == records

"""Every rank counts in one log whose lines carry their rank: torchrun's `[rank2]:` and
`[default2]:`, Slurm's `srun -l` `2: ` (and ` 2: `, right-aligned). A NaN on rank 2 of 4
is the run's NO-GO naming rank 2 and its own step; a rank 30 % slower per step is a
straggler named; four ranks in step raise neither (issue 24)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import artifact_in
from tests.targets.rank_shapes import STEPS, four_ranks
from tests.test_cli import babysit

PREFIXES = {"torchrun-rank": "[rank{}]: ", "torchrun-default": "[default{}]:",
            "srun": "{}: ", "srun-aligned": " {}: "}


def judge(tmp_path: Path, prefix: str, ranks: list[list[str]]) -> dict[str, Any]:
    lines = ["srun: launching 4 tasks"] + [prefix.format(rank) + ranks[rank][i]
                                            for i in range(STEPS) for rank in range(len(ranks))]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    babysit("train.log", "--once", cwd=tmp_path)
    return artifact_in(tmp_path)


def of_type(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [a for a in data["anomalies_detected"] if a["type"] == kind]


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=PREFIXES.keys())
def test_a_nan_on_rank_2_of_4_is_no_go_naming_rank_2(tmp_path: Path, prefix: str):
    data = judge(tmp_path, prefix, four_ranks(nan_on=2))
    assert data["decision"] == "NO-GO", data["summary"]
    [nan] = of_type(data, "nan-inf")
    assert "rank 2" in nan["description"] and nan["step"] == 31


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=PREFIXES.keys())
def test_a_rank_30_percent_slower_is_a_straggler_naming_it(tmp_path: Path, prefix: str):
    [straggler] = of_type(judge(tmp_path, prefix, four_ranks(slow=3)), "straggler")
    assert straggler["description"].startswith("rank 3 is 30 % slower per step")


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=PREFIXES.keys())
def test_four_healthy_ranks_raise_nothing_of_ranks(tmp_path: Path, prefix: str):
    data = judge(tmp_path, prefix, four_ranks())
    assert not of_type(data, "nan-inf") and not of_type(data, "straggler")
    assert data["total_steps"] == STEPS

"""A Vertex AI custom job of four replicas (the chief `workerpool0-0` is rank 0,
`workerpool1-i` rank i + 1) through the loopback server: a NaN on rank 2 is the run's
NO-GO naming rank 2 and its replica; a replica 30 % slower per step is a straggler naming
it; four healthy replicas raise neither (issue 24)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from babysit.targets.vertex.replicas import rank_of
from tests.fakes.vertex_api import VertexServer, job_log
from tests.targets.rank_shapes import STEPS, four_ranks
from tests.targets.vertex.conftest import need_google_clients
from tests.targets.vertex.scenarios import PARENT, custom_job
from tests.targets.vertex.test_vertex_targets import watch

need_google_clients()

pytestmark = pytest.mark.service

REPLICAS = ["workerpool0-0", "workerpool1-0", "workerpool1-1", "workerpool1-2"]


def test_replicas_are_numbered_as_torch_numbers_ranks():
    assert [rank_of(r) for r in REPLICAS] == [0, 1, 2, 3]
    assert rank_of("workerpool2-1") == 2001  # a reduction server trains no rank
    assert rank_of("") == 0


def judge(vertex: VertexServer, tmp_path: Path, job_id: str,
          ranks: list[list[str]]) -> dict[str, Any]:
    def entries(steps: range) -> list[dict[str, Any]]:
        return [job_log(job_id, ranks[rank][i], task=REPLICAS[rank],
                        seconds_ago=STEPS - i + rank / 10)
                for i in steps for rank in range(len(ranks))]

    half = STEPS // 2
    vertex.state.add_job(f"{PARENT}/customJobs/{job_id}", [
        custom_job("RUNNING", logs=entries(range(half))),
        custom_job("RUNNING", logs=entries(range(half, STEPS))),
    ])
    _, data = watch(vertex, "customJobs", job_id, tmp_path, polls=3)
    return data


def of_type(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [a for a in data["anomalies_detected"] if a["type"] == kind]


def test_a_nan_on_rank_2_of_4_replicas_is_no_go_naming_its_replica(vertex: VertexServer,
                                                                   tmp_path: Path):
    data = judge(vertex, tmp_path, "31", four_ranks(nan_on=2))
    assert data["decision"] == "NO-GO", data["summary"]
    [nan] = of_type(data, "nan-inf")
    assert "rank 2 (replica workerpool1-1)" in nan["description"] and nan["step"] == 31


def test_a_replica_30_percent_slower_is_a_straggler_naming_it(vertex: VertexServer,
                                                              tmp_path: Path):
    [straggler] = of_type(judge(vertex, tmp_path, "32", four_ranks(slow=3)), "straggler")
    assert straggler["description"].startswith("rank 3 (replica workerpool1-2) is 30 % slower")


def test_four_healthy_replicas_raise_nothing_of_ranks(vertex: VertexServer, tmp_path: Path):
    data = judge(vertex, tmp_path, "33", four_ranks())
    assert not of_type(data, "nan-inf") and not of_type(data, "straggler")
    assert data["total_steps"] == STEPS

"""A PyTorchJob of four ranks (master 0, workers 1-3) through the loopback API server:
a NaN on rank 2 is the run's NO-GO naming rank 2 and its pod; a rank 30 % slower per
step is a straggler naming its pod; four healthy ranks raise neither (issue 24)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.k8s_api import (
    KubeServer,
    condition,
    container,
    pytorchjob,
    replica_pod,
    running,
)
from tests.targets.k8s.conftest import need_kubernetes_client
from tests.targets.k8s.test_k8s_targets import NAME, watch
from tests.targets.rank_shapes import four_ranks

need_kubernetes_client()

# torch's numbering: the master is rank 0, worker i is rank i + 1.
PODS = [f"{NAME}-master-0", f"{NAME}-worker-0", f"{NAME}-worker-1", f"{NAME}-worker-2"]


def judge(kube: KubeServer, kubeconfig: str, tmp_path: Path,
          ranks: list[list[str]]) -> dict[str, Any]:
    pods = [replica_pod(NAME, "Master", 0, "Running", [container("pytorch", running())])] + [
        replica_pod(NAME, "Worker", i, "Running", [container("pytorch", running())])
        for i in range(3)]
    job = pytorchjob(NAME, workers=3, conditions=(condition("Created", seconds_ago=600),
                                                  condition("Running", seconds_ago=500)))
    half = len(ranks[0]) // 2

    def logs(part: slice) -> list[tuple[str, str, str]]:
        return [(pod, "pytorch", "\n".join(lines[part]))
                for pod, lines in zip(PODS, ranks, strict=True)]

    kube.state.add("pytorchjobs", NAME, [
        {"job": job, "pods": pods, "logs": logs(slice(None, half))},
        {"job": job, "pods": pods, "logs": logs(slice(half, None))},
    ])
    _, data = watch(kubeconfig, f"pytorchjob/{NAME}", tmp_path, polls=3)
    return data


def of_type(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [a for a in data["anomalies_detected"] if a["type"] == kind]


def test_a_nan_on_rank_2_of_4_pods_is_no_go_naming_its_pod(kube: KubeServer,
                                                           kubeconfig: str, tmp_path: Path):
    data = judge(kube, kubeconfig, tmp_path, four_ranks(nan_on=2))
    assert data["decision"] == "NO-GO", data["summary"]
    [nan] = of_type(data, "nan-inf")
    assert f"rank 2 (pod {NAME}-worker-1)" in nan["description"] and nan["step"] == 31


def test_a_pod_30_percent_slower_is_a_straggler_naming_it(kube: KubeServer, kubeconfig: str,
                                                          tmp_path: Path):
    [straggler] = of_type(judge(kube, kubeconfig, tmp_path, four_ranks(slow=3)), "straggler")
    assert straggler["description"].startswith(f"rank 3 (pod {NAME}-worker-2) is 30 % slower")


def test_four_healthy_pods_raise_nothing_of_ranks(kube: KubeServer, kubeconfig: str,
                                                  tmp_path: Path):
    data = judge(kube, kubeconfig, tmp_path, four_ranks())
    assert not of_type(data, "nan-inf") and not of_type(data, "straggler")
    assert data["total_steps"] == 40

"""`babysit --k8s …` through the command line: the real client, pointed at the loopback
API server by a kubeconfig the test writes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import validate_artifact
from tests.fakes.k8s_api import (
    KubeServer,
    condition,
    container,
    job,
    job_pod,
    running,
    terminated,
)
from tests.forked_cli import run_babysit
from tests.targets.k8s.conftest import OFFLINE_ENV, need_kubernetes_client

need_kubernetes_client()

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)

NAME = "llama-ft"


def babysit(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE_ENV, "HOME": str(cwd), "COLUMNS": "200", "NO_COLOR": "1"}
    # Forked with the Kubernetes client already imported (tests/forked_cli.py).
    return run_babysit(args, cwd=cwd, env=env, timeout=timeout, preload=["kubernetes"])


def test_job_runs_to_success_through_the_command_line(kube: KubeServer, kubeconfig: str,
                                                       tmp_path: Path):
    pod = "llama-ft-7xk2p"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running",
                                            [container("trainer", running())])],
         "logs": [(pod, "trainer", "Step 100/500 | loss=2.52 | lr=3e-4")]},
        {"job": job(NAME, active=0, succeeded=1, completed=0,
                    conditions=(condition("Complete", "CompletionsReached"),)),
         "pods": [job_pod(NAME, pod, "Succeeded",
                          [container("trainer", terminated(0, "Completed"))])],
         "logs": [(pod, "trainer", "Step 500/500 | loss=1.10\nTraining complete.")]},
    ])
    # As the README writes it: `-n` is the namespace, as with kubectl.
    done = babysit("--k8s", f"job/{NAME}", "-n", "research", "--kubeconfig",
                   kubeconfig, "--interval", "0.2", cwd=tmp_path)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert f"Job: {NAME} (namespace research)" in out
    assert "State: COMPLETE" in out and "Final log: Training complete." in out
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert (data["decision"], data["target_type"], data["total_steps"]) == ("GO", "k8s", 500)


def test_forbidden_at_start_exits_4_naming_the_rbac_verbs(kube: KubeServer, kubeconfig: str,
                                                         tmp_path: Path):
    kube.state.add("jobs", NAME, [{"fail": 403}])
    done = babysit("--k8s", NAME, "--kubeconfig", kubeconfig, "--once", cwd=tmp_path)
    text = done.stdout + done.stderr
    assert done.returncode == 4, text
    assert "permission denied (HTTP 403" in text
    assert "get, list and watch on jobs (batch), pods, pods/log and events" in text
    assert "namespace research" in text  # the kubeconfig context's namespace
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["target_type"] == "k8s"


def test_unknown_job_exits_4_saying_what_to_check(kube: KubeServer, kubeconfig: str,
                                                  tmp_path: Path):
    done = babysit("--k8s", "job/nope", "--namespace", "other", "--kubeconfig", kubeconfig,
                   "--once", cwd=tmp_path)
    text = done.stdout + done.stderr
    assert done.returncode == 4, text
    assert "not found in namespace other (check --namespace and the name)" in text


def test_no_kubeconfig_exits_4(tmp_path: Path):
    done = babysit("--k8s", NAME, "--once", cwd=tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "no usable Kubernetes configuration" in done.stdout + done.stderr


def test_a_kind_babysit_does_not_watch_is_a_usage_error(tmp_path: Path):
    done = babysit("--k8s", "deployment/web", "--once", cwd=tmp_path)
    assert done.returncode == 2
    assert "job/NAME, pytorchjob/NAME or trainjob/NAME" in done.stderr


def test_once_json_of_a_running_job(kube: KubeServer, kubeconfig: str, tmp_path: Path):
    pod = "llama-ft-j"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running",
                                            [container("trainer", running())])],
         "logs": [(pod, "trainer", "Step 4200/10000 | loss=0.842")]}])
    done = babysit("--k8s", NAME, "--kubeconfig", kubeconfig, "--once", "--json",
                   cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "baseline" and events[0]["step"] == 4200
    final = events[-1]["artifact"]
    assert (final["decision"], final["terminal_state"]) == ("CONDITIONAL", "RUNNING")
    assert "babysit --k8s=job/llama-ft --kubeconfig" in " ".join(final["next_commands"])

"""Kubernetes Jobs and PyTorchJobs through the watch loop (a fake clock, the real
`kubernetes` client, the loopback API server)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver, PollReport
from babysit.core.session import SessionResult, run_session
from babysit.exit_codes import ExitCode
from babysit.targets.k8s import KIND
from babysit.targets.kinds import Request
from tests.conftest import FakeClock, validate_artifact
from tests.fakes.k8s_api import (
    KubeServer,
    condition,
    container,
    event,
    job,
    job_pod,
    node_pod,
    operator_failed,
    pytorchjob,
    replica_pod,
    running,
    terminated,
    trainjob,
    waiting,
)
from tests.targets.k8s.conftest import need_kubernetes_client

need_kubernetes_client()

NAME = "llama-ft"


class Recorder(NullObserver):
    """The notices a person would read."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def notice(self, text: str) -> None:
        self.lines.append(text)


def watch(kubeconfig: str, value: str, tmp_path: Path, *, polls: int = 10,
          clock: FakeClock | None = None, observer: NullObserver | None = None,
          ) -> tuple[SessionResult, dict[str, Any]]:
    request = Request("k8s", value, options={"kubeconfig": kubeconfig,
                                             "namespace": "research"})
    settings = Settings(poll=replace(PollSettings(), interval=30, max_polls=polls), fix=False,
                        rules=replace(RuleSettings(), stall_polls=4), out_dir=tmp_path)
    result = run_session(lambda: KIND.open(request), value, "k8s", settings,
                         observer or NullObserver(),
                         clock=clock or FakeClock())
    return result, validate_artifact(tmp_path / "babysit-training.json")


def types_of(data: dict[str, Any]) -> dict[str, str]:
    return {a["type"]: a["severity"] for a in data["anomalies_detected"]}


def trainer(state: dict[str, Any], **kw: Any) -> list[dict[str, Any]]:
    return [container("trainer", state, **kw)]


def test_job_that_completes_is_go(kube: KubeServer, kubeconfig: str, tmp_path: Path):
    pod = "llama-ft-abc12"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 100/1000 | loss=2.50\nStep 200/1000 | loss=2.30")]},
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 600/1000 | loss=1.90")]},
        {"job": job(NAME, active=0, succeeded=1, completed=0,
                    conditions=(condition("SuccessCriteriaMet", "CompletionsReached"),
                                condition("Complete", "CompletionsReached"))),
         "pods": [job_pod(NAME, pod, "Succeeded", trainer(terminated(0, "Completed")))],
         "logs": [(pod, "trainer", "Step 1000/1000 | loss=1.20\nTraining complete.")]},
    ])
    result, data = watch(kubeconfig, f"job/{NAME}", tmp_path)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    assert data["total_steps"] == 1000 and data["anomalies_detected"] == []
    assert result.exit_code is ExitCode.GO
    assert data["target"] == f"job/{NAME} (namespace research)"
    # The cluster read is the one named: an approved command cannot hit another.
    assert f"kubectl --kubeconfig={kubeconfig} --context=fake describe job llama-ft -n " \
        "research" in data["next_commands"]
    # Every request carried the kubeconfig's token and a step was never read twice.
    assert all(auth == "Bearer fake-token" for _, auth in kube.state.requests)


def test_oom_killed_container_is_no_go_with_the_evidence(kube: KubeServer, kubeconfig: str,
                                                          tmp_path: Path):
    pod = "llama-ft-x1"
    oom = terminated(137, "OOMKilled")
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 10/1000 | loss=2.0")]},
        {"job": job(NAME, active=0, failed=1, conditions=(condition(
            "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),)),
         "pods": [job_pod(NAME, pod, "Failed", trainer(oom), memory="32Gi")]},
    ])
    result, data = watch(kubeconfig, NAME, tmp_path)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED")
    assert types_of(data)["oom"] == "blocker"
    found = next(a for a in data["anomalies_detected"] if a["type"] == "oom")
    assert "OOMKilled" in found["description"] and "32Gi" in found["description"]
    assert "exit code 137 (SIGKILL)" in found["description"]
    failure = next(a for a in data["anomalies_detected"] if a["type"] == "job-failure")
    assert "BackoffLimitExceeded" in failure["description"]
    assert result.exit_code is ExitCode.NO_GO


def test_crash_loop_with_restarts_is_a_crash_and_a_notice_per_restart(
        kube: KubeServer, kubeconfig: str, tmp_path: Path):
    pod = "llama-ft-cl"
    first_crash = terminated(1, "Error", finished=5)
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 1/100 | loss=2.0")]},
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(
            waiting("CrashLoopBackOff", "back-off 10s restarting failed container=trainer"),
            restarts=1, last=first_crash))],
         "events": [event("Pod", pod, "BackOff", "Back-off restarting failed container "
                                                 "trainer in pod llama-ft-cl")]},
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(
            running(1), restarts=2, last=terminated(1, "Error", finished=2)))],
         "logs": [(pod, "trainer", "ValueError: bad config")]},
    ])
    notices: list[str] = []

    class Observer(NullObserver):
        def notice(self, text: str) -> None:  # type: ignore[override]
            notices.append(text)

    request = Request("k8s", NAME, options={"kubeconfig": kubeconfig})
    settings = Settings(poll=replace(PollSettings(), interval=30, max_polls=5), fix=False,
                        out_dir=tmp_path)
    run_session(lambda: KIND.open(request), NAME, "k8s", settings, Observer(),
                clock=FakeClock())
    data = validate_artifact(tmp_path / "babysit-training.json")
    crashes = [a for a in data["anomalies_detected"] if a["type"] == "crash"]
    assert len(crashes) == 1 and crashes[0]["severity"] == "blocker"
    assert "exit code 1, Error" in crashes[0]["description"]
    assert data["decision"] == "NO-GO" and data["terminal_state"] == "RUNNING"
    assert data["actions"][0]["kind"] == "cancel-run"
    assert f"kubectl --kubeconfig={kubeconfig} --context=fake delete job llama-ft " \
        "-n research" in data["actions"][0]["reason"]
    restarts = [n for n in notices if "restarted" in n]
    assert any("restart count 1" in n for n in restarts), notices
    assert any("restart count 2" in n for n in restarts), notices


def test_evicted_pod_event_is_a_crash_not_of_the_code(kube: KubeServer, kubeconfig: str,
                                                      tmp_path: Path):
    pod = "llama-ft-ev"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 5/100 | loss=2.0")]},
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Failed", trainer(
            terminated(137, "ContainerStatusUnknown")), reason="Evicted")],
         "events": [event("Pod", pod, "Evicted", "The node was low on resource: memory. "
                                                 "Threshold quantity: 100Mi, available: 20Mi.")]},
    ])
    _, data = watch(kubeconfig, NAME, tmp_path, polls=3)
    evicted = next(a for a in data["anomalies_detected"] if "evicted" in a["description"])
    assert evicted["type"] == "crash" and evicted["severity"] == "high"
    assert "The node was low on resource: memory" in evicted["description"]


def test_nan_in_the_rank0_log_stops_with_a_kubectl_delete_proposal(
        kube: KubeServer, kubeconfig: str, tmp_path: Path):
    pod = "llama-ft-nan"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 1/100 | loss=2.0\nStep 2/100 | loss=1.9")]},
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 3/100 | loss=nan")]},
    ])
    result, data = watch(kubeconfig, f"job/{NAME}", tmp_path)
    nan = next(a for a in data["anomalies_detected"] if a["type"] == "nan-inf")
    assert nan["step"] == 3 and data["decision"] == "NO-GO"
    cancel = next(a for a in data["actions"] if a["kind"] == "cancel-run")
    assert cancel["status"] == "needs-approval"
    assert f"kubectl --kubeconfig={kubeconfig} --context=fake delete job llama-ft " \
        "-n research" in cancel["reason"]
    assert result.exit_code is ExitCode.NO_GO  # the code agrees with the decision


def test_pytorchjob_worker_nccl_error_counts_and_the_master_speaks_for_metrics(
        kube: KubeServer, kubeconfig: str, tmp_path: Path):
    def pods() -> list[dict[str, Any]]:
        return [replica_pod(NAME, "Worker", 1, "Running", [container("pytorch", running())]),
                replica_pod(NAME, "Master", 0, "Running", [container("pytorch", running())]),
                replica_pod(NAME, "Worker", 0, "Running", [container("pytorch", running())])]

    master, worker1 = f"{NAME}-master-0", f"{NAME}-worker-1"
    kube.state.add("pytorchjobs", NAME, [
        {"job": pytorchjob(NAME, conditions=(condition("Created", seconds_ago=600),
                                             condition("Running", seconds_ago=500))),
         "pods": pods(),
         "logs": [(master, "pytorch", "Step 50/500 | loss=2.0"),
                  (worker1, "pytorch", "Step 999/999 | loss=9.0")]},
        {"job": pytorchjob(NAME, conditions=(condition("Created", seconds_ago=600),
                                             condition("Running", seconds_ago=500))),
         "pods": pods(),
         "logs": [(master, "pytorch", "Step 60/500 | loss=1.9"),
                  (worker1, "pytorch", "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:"
                                       "1207, unhandled system error")]},
    ])
    _, data = watch(kubeconfig, f"pytorchjob/{NAME}", tmp_path, polls=3)
    nccl = next(a for a in data["anomalies_detected"] if a["type"] == "nccl")
    assert "rank 2" in nccl["description"]  # worker 1 is torch rank 2
    assert data["total_steps"] == 60 and data["target_steps"] == 500
    cancel = next(a for a in data["actions"] if a["kind"] == "cancel-run")
    assert f"kubectl --kubeconfig={kubeconfig} --context=fake delete pytorchjob llama-ft " \
        "-n research" in cancel["reason"]


@pytest.mark.parametrize("deadline, ends, verb", [(True, "TIMEOUT", "timed out"),
                                                  (False, "FAILED", "failed")])
def test_pytorchjob_failed_by_the_operator_past_its_deadline_is_a_timeout(
        deadline: bool, ends: str, verb: str, kube: KubeServer, kubeconfig: str,
        tmp_path: Path):
    """The operator's own condition (reason PyTorchJobFailed for both causes): only its
    message tells a deadline from a backoff limit."""
    kube.state.add("pytorchjobs", NAME, [
        {"job": pytorchjob(NAME, conditions=(condition("Created", seconds_ago=60),),
                           deadline=3600), "pods": []},
        {"job": pytorchjob(NAME, deadline=3600, conditions=(
            condition("Created", seconds_ago=60), operator_failed(NAME, deadline=deadline))),
         "pods": []},
    ])
    _, data = watch(kubeconfig, f"pytorchjob/{NAME}", tmp_path, polls=4)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", ends)
    failure = next(a for a in data["anomalies_detected"] if a["type"] == "job-failure")
    assert f"PyTorchJob {NAME} {verb}: PyTorchJobFailed (Job {NAME} has failed because" \
        in failure["description"]


def test_failed_scheduling_while_pending_is_a_medium_job_failure(kube: KubeServer,
                                                                 kubeconfig: str,
                                                                 tmp_path: Path):
    pod = "llama-ft-pend"
    pending = job_pod(NAME, pod, "Pending", [])
    scheduled = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    kube.state.add("jobs", NAME, [
        {"job": job(NAME, started=30), "pods": [pending],
         "events": [event("Pod", pod, "FailedScheduling", scheduled)]},
        {"job": job(NAME, started=60), "pods": [pending]},
        {"job": job(NAME, started=90), "pods": [pending]},
    ])
    _, data = watch(kubeconfig, NAME, tmp_path, polls=6)
    found = next(a for a in data["anomalies_detected"] if a["type"] == "job-failure")
    assert found["severity"] == "medium" and scheduled in found["description"]
    assert not any(a["type"] == "stalled" for a in data["anomalies_detected"])
    assert data["decision"] == "CONDITIONAL"


def test_deadline_exceeded_job_is_a_timeout(kube: KubeServer, kubeconfig: str,
                                            tmp_path: Path):
    kube.state.add("jobs", NAME, [{"job": job(NAME, active=0, conditions=(condition(
        "Failed", "DeadlineExceeded", "Job was active longer than specified deadline"),)),
        "pods": []}])
    _, data = watch(kubeconfig, NAME, tmp_path, polls=2)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "TIMEOUT")
    failure = next(a for a in data["anomalies_detected"] if a["type"] == "job-failure")
    assert "timed out: DeadlineExceeded" in failure["description"]


def test_api_503_is_connectivity_then_recovers_to_go(kube: KubeServer, kubeconfig: str,
                                                     tmp_path: Path):
    pod = "llama-ft-503"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 1/10 | loss=2.0")]},
        {"fail": 503},
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 5/10 | loss=1.5")]},
        {"job": job(NAME, active=0, succeeded=1, completed=0,
                    conditions=(condition("Complete", "CompletionsReached"),)),
         "pods": [job_pod(NAME, pod, "Succeeded", trainer(terminated(0, "Completed")))],
         "logs": [(pod, "trainer", "Step 10/10 | loss=1.0\nTraining finished")]},
    ])
    result, data = watch(kubeconfig, NAME, tmp_path)
    connectivity = next(a for a in data["anomalies_detected"] if a["type"] == "connectivity")
    assert connectivity["severity"] == "medium" and "503" in connectivity["description"]
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    assert result.exit_code is ExitCode.GO


@pytest.mark.parametrize("text", ["deployment/x", "job/Bad_Name", "job/"])
def test_bad_references_are_usage_errors(text: str):
    from babysit.targets.k8s.names import parse_reference
    from babysit.targets.kinds import KindUsageError

    with pytest.raises(KindUsageError):
        parse_reference(text)


def test_a_pod_recreated_under_its_name_is_read_as_a_new_pod(kube: KubeServer,
                                                              kubeconfig: str, tmp_path: Path):
    """The operator deletes an evicted worker and makes `llama-ft-worker-0` again, with a
    new UID and an empty log: the new pod's lines are read, its NaN seen (workers only,
    as torchrun runs them: worker 0 is rank 0)."""
    def other() -> dict[str, Any]:
        return replica_pod(NAME, "Worker", 1, "Running", [container("pytorch", running())])

    worker = f"{NAME}-worker-0"
    running_job = pytorchjob(NAME, workers=2, master=False, conditions=(
        condition("Created", seconds_ago=600), condition("Running", seconds_ago=500)))
    kube.state.add("pytorchjobs", NAME, [
        {"job": running_job,
         "pods": [other(), replica_pod(NAME, "Worker", 0, "Running",
                                       [container("pytorch", running())])],
         "logs": [(worker, "pytorch", "Step 10/500 | loss=2.0")]},
        {"job": running_job,
         "pods": [other(), replica_pod(NAME, "Worker", 0, "Failed", [container(
             "pytorch", terminated(137, "Error"))], reason="Evicted")]},
        {"job": running_job,
         "pods": [other(), replica_pod(NAME, "Worker", 0, "Running",
                                       [container("pytorch", running(5))], attempt=1)],
         "logs": [(worker, "pytorch", "Step 20/500 | loss=1.9\nStep 30/500 | loss=nan")]},
    ])
    seen = Recorder()
    _, data = watch(kubeconfig, f"pytorchjob/{NAME}", tmp_path, polls=5, observer=seen)
    nan = next(a for a in data["anomalies_detected"] if a["type"] == "nan-inf")
    assert nan["step"] == 30 and data["decision"] == "NO-GO"
    assert any(f"pod {worker} was made again (a new pod, rank 0, Running)" in line
               for line in seen.lines)

def test_a_job_deleted_by_its_ttl_between_polls_ends_the_watch_saying_so(
        kube: KubeServer, kubeconfig: str, tmp_path: Path):
    """ttlSecondsAfterFinished: 0 — the Job and its pods are gone before babysit reads
    how it ended: not "unreachable" forever, and not a made-up end."""
    pod = "llama-ft-ttl"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME, ttl=0), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 5/10 | loss=2.0")]},
        {"job": job(NAME, ttl=0, active=0, succeeded=1, completed=0,
                    conditions=(condition("Complete", "CompletionsReached"),)),
         "pods": [job_pod(NAME, pod, "Succeeded", trainer(terminated(0, "Completed")))]},
    ])
    seen = Recorder()
    _, data = watch(kubeconfig, f"job/{NAME}", tmp_path, observer=seen)
    assert not any(a["type"] == "connectivity" for a in data["anomalies_detected"])
    assert data["decision"] != "GO"
    assert any("was deleted before its end was read (its ttlSecondsAfterFinished (0 s)"
               in line and f"pods: {pod} Running" in line for line in seen.lines), seen.lines


def test_a_pytorchjob_that_will_not_finish_before_its_active_deadline_raises_deadline(
        kube: KubeServer, kubeconfig: str, tmp_path: Path):
    master = f"{NAME}-master-0"

    def frame(step: int) -> dict[str, Any]:
        conditions = (condition("Created", seconds_ago=3100),
                      condition("Running", seconds_ago=3000))
        return {"job": pytorchjob(NAME, workers=0, started=3000, deadline=3600,
                                  conditions=conditions),
                "pods": [replica_pod(NAME, "Master", 0, "Running",
                                     [container("pytorch", running())])],
                "logs": [(master, "pytorch", f"Step {step}/100000 | loss=1.0")]}

    kube.state.add("pytorchjobs", NAME, [frame(100 * n) for n in range(1, 5)])

    class Headlines(NullObserver):
        def __init__(self) -> None:
            self.lines: list[str] = []

        def poll(self, report: PollReport) -> None:
            self.lines.append(report.headline)

    seen = Headlines()
    _, data = watch(kubeconfig, f"pytorchjob/{NAME}", tmp_path, polls=4, observer=seen)
    assert any(" | Left: 9m" in line for line in seen.lines), seen.lines
    deadline = next(a for a in data["anomalies_detected"] if a["type"] == "deadline")
    assert "(Kubernetes spec.runPolicy.activeDeadlineSeconds, 1h" in deadline["description"]
    # The cluster babysit read, named (issue 26): --kubeconfig and --context before the verb.
    assert re.search(r"kubectl --kubeconfig=\S+ --context=\S+ patch pytorchjob llama-ft "
                     r"--type=merge -p '\{\"spec\":\{\"runPolicy\":\{\"activeDeadlineSeconds\":",
                     deadline["description"]), deadline["description"]


def _nodes(*logs: str) -> dict[str, Any]:
    pods = [node_pod(NAME, "node", i, "Running", [container("node", running())])
            for i in (1, 0)]
    pods.append(node_pod(NAME, "dataset-initializer", 0, "Succeeded",
                         [container("dataset-initializer", terminated(0, "Completed"))]))
    return {"job": trainjob(NAME, conditions=()), "pods": pods,
            "logs": [(f"{NAME}-node-0-0-x0k", "node", text) for text in logs]}


def test_a_trainjob_is_watched_through_its_jobsets_pods_node_0_first(
        kube: KubeServer, kubeconfig: str, tmp_path: Path):
    """Kubeflow Trainer v2: the TrainJob's pods are its JobSet's; node 0 is rank 0."""
    kube.state.add("trainjobs", NAME, [
        _nodes("Step 10/100 | loss=2.0"), _nodes("Step 20/100 | loss=nan")])
    _, data = watch(kubeconfig, f"trainjob/{NAME}", tmp_path, polls=3)
    nan = next(a for a in data["anomalies_detected"] if a["type"] == "nan-inf")
    assert nan["step"] == 20 and data["decision"] == "NO-GO"
    cancel = next(a for a in data["actions"] if a["kind"] == "cancel-run")
    assert re.search(r"kubectl --kubeconfig=\S+ --context=\S+ delete trainjob llama-ft "
                     r"-n research", cancel["reason"]), cancel["reason"]


def test_a_trainjob_past_its_active_deadline_is_a_timeout(kube: KubeServer, kubeconfig: str,
                                                          tmp_path: Path):
    failed = condition("Failed", "DeadlineExceeded", "TrainJob exceeded its active deadline")
    kube.state.add("trainjobs", NAME, [
        _nodes("Step 10/100 | loss=2.0"),
        {"job": trainjob(NAME, deadline=600, conditions=(failed,)), "pods": []}])
    _, data = watch(kubeconfig, f"trainjob/{NAME}", tmp_path, polls=3)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "TIMEOUT")


def test_what_a_container_wrote_before_it_restarted_is_read_from_its_previous_log(
        kube: KubeServer, kubeconfig: str, tmp_path: Path):
    """Between two polls the trainer prints a NaN and crashes; the kubelet restarts it.
    Its last words are only in the `previous=true` log."""
    pod = "llama-ft-prev"
    kube.state.add("jobs", NAME, [
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(running()))],
         "logs": [(pod, "trainer", "Step 1/100 | loss=2.0")]},
        {"job": job(NAME), "pods": [job_pod(NAME, pod, "Running", trainer(
            running(1), restarts=1, last=terminated(1, "Error", finished=2)))],
         "logs_before": [(pod, "trainer", "Step 2/100 | loss=nan\nValueError: loss is nan")],
         "logs": [(pod, "trainer", "resuming from checkpoint")]},
    ])
    _, data = watch(kubeconfig, NAME, tmp_path, polls=3)
    nan = next(a for a in data["anomalies_detected"] if a["type"] == "nan-inf")
    assert nan["step"] == 2
    assert any("previous=True" in path for path, _ in kube.state.requests)

"""Vertex AI targets through the watch loop (a fake clock, the real Google clients, the
loopback server): failures and their causes, NaN in a replica's log, EXPIRED, a stuck
pipeline, a flaky service, resolution and credentials."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver, PollReport
from babysit.core.session import SessionResult, run_session
from babysit.exit_codes import ExitCode
from babysit.targets.base import Target
from babysit.targets.vertex.custom_job import CustomJobTarget
from babysit.targets.vertex.names import JobRef
from babysit.targets.vertex.pipeline import PipelineTarget
from babysit.targets.vertex.service import VertexService
from tests.conftest import FakeClock, validate_artifact
from tests.fakes.vertex_api import VertexServer, pipeline_log
from tests.forked_cli import run_babysit
from tests.targets.vertex.conftest import OFFLINE_ENV, need_google_clients
from tests.targets.vertex.scenarios import (
    PARENT,
    PROJECT,
    PROJECT_NUMBER,
    custom_job,
    lines,
    newer,
    pipeline,
    task,
)

need_google_clients()

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)

_GOOGLE = ["google.cloud.aiplatform_v1", "google.cloud.logging"]


class Recorder(NullObserver):
    """What a person would read: the notices and each poll's status lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def notice(self, text: str) -> None:
        self.lines.append(text)

    def poll(self, report: PollReport) -> None:
        self.lines += [*report.status, report.headline]

    baseline = poll


def watch(vertex: VertexServer, collection: str, job_id: str, tmp_path: Path, *,
          polls: int = 10, retry_seconds: float = 1.0, observer: NullObserver | None = None,
          ) -> tuple[SessionResult, dict[str, Any]]:
    ref = JobRef(PROJECT, "us-central1", collection, job_id)

    def open_target() -> Target:
        service = VertexService(PROJECT, "us-central1", vertex.endpoint,
                                retry_seconds=retry_seconds, timeout=5)
        kind = CustomJobTarget if collection == "customJobs" else PipelineTarget
        return kind(ref, service)

    settings = Settings(poll=replace(PollSettings(), interval=60, max_polls=polls), fix=False,
                        rules=replace(RuleSettings(), stall_polls=3), out_dir=tmp_path)
    result = run_session(open_target, ref.name, "vertex-" + ("training" if collection ==
                                                              "customJobs" else "pipeline"),
                         settings, observer or NullObserver(), clock=FakeClock())
    return result, validate_artifact(tmp_path / "babysit-training.json")


def types_of(data: dict[str, Any]) -> dict[str, str]:
    return {a["type"]: a["severity"] for a in data["anomalies_detected"]}


def test_custom_job_failing_with_oom_in_its_logs_is_no_go_with_the_cause_named(
        vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/11", [
        custom_job("RUNNING", logs=lines("11", "Step 10/100 | loss=2.0")),
        custom_job("FAILED", ended=0, error={"code": 13, "message": "The replica workerpool0-0 "
                   "exited with a non-zero status of 1."},
                   logs=lines("11", "Traceback (most recent call last):",
                              "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                              "2.00 GiB")),
    ])
    result, data = watch(vertex, "customJobs", "11", tmp_path)
    assert result.exit_code is ExitCode.NO_GO
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED")
    found = types_of(data)
    assert found["oom"] == "blocker"
    failure = next(a for a in data["anomalies_detected"] if a["type"] == "job-failure")
    assert "likely cause: GPU out of memory" in failure["description"]
    assert "non-zero status of 1" in failure["description"]
    assert not any(a["type"] == "crash" for a in data["anomalies_detected"])


def test_nan_in_a_workers_log_stops_with_a_cancel_proposal_for_the_running_job(
        vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/12", [
        custom_job("RUNNING", logs=lines("12", "Step 1/100 | loss=2.0", "Step 2/100 | loss=1.9")),
        custom_job("RUNNING", logs=lines("12", "Step 3/100 | loss=nan")),
    ])
    result, data = watch(vertex, "customJobs", "12", tmp_path)
    assert data["decision"] == "NO-GO" and data["terminal_state"] == "RUNNING"
    nan = next(a for a in data["anomalies_detected"] if a["type"] == "nan-inf")
    assert nan["step"] == 3
    cancel = next(a for a in data["actions"] if a["kind"] == "cancel-run")
    assert cancel["status"] == "needs-approval"
    assert "gcloud ai custom-jobs cancel 12 --region=us-central1 --project=my-gcp-proj" \
        in cancel["reason"]
    assert result.exit_code is ExitCode.NO_GO  # the code agrees with the decision


def test_a_replica_other_than_the_first_is_heard_for_its_failures(vertex: VertexServer,
                                                                  tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/13", [
        custom_job("RUNNING", logs=[*lines("13", "Step 5/100 | loss=2.0"),
                                    *lines("13", "RuntimeError: NCCL error in: "
                                                 "ProcessGroupNCCL.cpp:1207, unhandled system "
                                                 "error", task="workerpool1-2")]),
    ])
    _, data = watch(vertex, "customJobs", "13", tmp_path)
    nccl = next(a for a in data["anomalies_detected"] if a["type"] == "nccl")
    assert "rank 3 (replica workerpool1-2)" in nccl["description"]
    assert data["total_steps"] == 5


def test_expired_job_is_timeout_and_no_go(vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/14", [
        custom_job("RUNNING", logs=lines("14", "Step 10/1000 | loss=2.0")),
        custom_job("EXPIRED", ended=0),
    ])
    result, data = watch(vertex, "customJobs", "14", tmp_path)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "TIMEOUT")
    failure = next(a for a in data["anomalies_detected"] if a["type"] == "job-failure")
    assert "expired" in failure["description"] and "deadline exceeded" in failure["description"]
    assert result.exit_code is ExitCode.NO_GO


def test_cancelled_job_is_cancelled_and_no_go(vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/15", [custom_job("CANCELLED", ended=5)])
    _, data = watch(vertex, "customJobs", "15", tmp_path)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "CANCELLED")
    assert types_of(data)["job-failure"] == "high"


def test_quota_failure_is_named_before_anything_else(vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/16", [custom_job(
        "FAILED", started=None, ended=0, error={"code": 8, "message": "The following quota "
        "metrics exceed quota limits: aiplatform.googleapis.com/custom_model_training_nvidia_"
        "a100_gpus"})])
    _, data = watch(vertex, "customJobs", "16", tmp_path)
    failure = next(a for a in data["anomalies_detected"] if a["type"] == "job-failure")
    assert "likely cause: quota or capacity exhausted" in failure["description"]


def test_running_job_that_writes_nothing_for_three_polls_is_stalled(vertex: VertexServer,
                                                                   tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/17", [
        custom_job("RUNNING", logs=lines("17", "Step 10/1000 | loss=2.0"))])
    _, data = watch(vertex, "customJobs", "17", tmp_path, polls=6)
    stalled = next(a for a in data["anomalies_detected"] if a["type"] == "stalled")
    assert stalled["severity"] == "high"
    assert "none of its replicas wrote a log entry" in stalled["description"]


def test_queued_job_is_not_called_stalled(vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/18", [custom_job("PENDING", started=None)])
    _, data = watch(vertex, "customJobs", "18", tmp_path, polls=6)
    assert data["anomalies_detected"] == []
    assert data["decision"] == "CONDITIONAL"


def test_stuck_pipeline_is_stalled_after_three_quiet_polls(vertex: VertexServer,
                                                          tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/pipelineJobs/p1", [pipeline("RUNNING", [
        task(2, "prep", "SUCCEEDED", started=900), task(3, "train", "RUNNING", started=600)])])
    _, data = watch(vertex, "pipelineJobs", "p1", tmp_path, polls=6)
    stalled = next(a for a in data["anomalies_detected"] if a["type"] == "stalled")
    assert "no task changed state" in stalled["description"]


def test_pipeline_whose_tasks_move_is_not_stalled_and_succeeds(vertex: VertexServer,
                                                               tmp_path: Path):
    a, b = "prep", "train"
    vertex.state.add_job(f"{PARENT}/pipelineJobs/p2", [
        pipeline("RUNNING", [task(2, a, "RUNNING", started=60)], planned=(a, b)),
        pipeline("RUNNING", [task(2, a, "SUCCEEDED", started=60)], planned=(a, b)),
        pipeline("RUNNING", [task(2, a, "SUCCEEDED", started=60),
                             task(3, b, "RUNNING", started=10)], planned=(a, b)),
        pipeline("SUCCEEDED", [task(2, a, "SUCCEEDED", started=60),
                               task(3, b, "SUCCEEDED", started=10)], planned=(a, b)),
    ])
    result, data = watch(vertex, "pipelineJobs", "p2", tmp_path)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert data["anomalies_detected"] == []
    assert result.exit_code is ExitCode.GO


def test_failed_pipeline_is_a_blocker_naming_its_failed_task(vertex: VertexServer,
                                                             tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/pipelineJobs/p3", [
        pipeline("RUNNING", [task(2, "train", "RUNNING", started=60)]),
        pipeline("FAILED", [task(2, "train", "FAILED", started=60, error="boom")],
                 error={"code": 9, "message": "The DAG failed because some tasks failed."},
                 logs=[pipeline_log("p3", "Task train failed: boom")]),
    ])
    _, data = watch(vertex, "pipelineJobs", "p3", tmp_path)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED")
    found = {(a["type"], a["severity"]) for a in data["anomalies_detected"]}
    assert {("pipeline-failure", "blocker"), ("task-failure", "high")} <= found
    failure = next(a for a in data["anomalies_detected"] if a["type"] == "pipeline-failure")
    assert "failed: train" in failure["description"]
    assert "The DAG failed because some tasks failed." in failure["description"]
    errors = [a for a in data["anomalies_detected"] if "task events" in a["description"]]
    assert errors and errors[0]["severity"] == "medium"


def test_service_unavailable_is_connectivity_then_recovers(vertex: VertexServer,
                                                          tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/19", [
        custom_job("RUNNING", logs=lines("19", "Step 1/10 | loss=2.0")),
        {"fail": 503},
        custom_job("RUNNING", logs=lines("19", "Step 5/10 | loss=1.5")),
        custom_job("SUCCEEDED", ended=0, logs=lines("19", "Step 10/10 | loss=1.0",
                                                    "Training finished")),
    ])

    class Flaky(FakeClock):
        """The service answers 503 for the whole of one poll (however many times its
        retries ask: the client's backoff is jittered, so a count of failures could be
        outlasted by quick retries), then recovers before the next."""

        def sleep(self, seconds: float) -> None:
            super().sleep(seconds)
            if len(self.slept) == 1:
                vertex.state.fail_next[:] = [503] * 10_000
            elif len(self.slept) == 2:
                vertex.state.fail_next.clear()

    ref = JobRef(PROJECT, "us-central1", "customJobs", "19")

    def open_target() -> Target:
        return CustomJobTarget(ref, VertexService(PROJECT, "us-central1", vertex.endpoint,
                                                  retry_seconds=0.5, timeout=5))

    settings = Settings(poll=replace(PollSettings(), interval=60, max_polls=10), fix=False,
                        out_dir=tmp_path)
    vertex.state.jobs[ref.name].pop(1)  # the failures come from fail_next instead
    result = run_session(open_target, ref.name, "vertex-training", settings, NullObserver(),
                         clock=Flaky())
    data = validate_artifact(tmp_path / "babysit-training.json")
    connectivity = next(a for a in data["anomalies_detected"] if a["type"] == "connectivity")
    assert connectivity["severity"] == "medium" and "503" in connectivity["description"]
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert result.exit_code is ExitCode.GO


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    # Forked with the Google clients already imported (tests/forked_cli.py).
    return run_babysit(args, cwd=cwd, timeout=60, preload=_GOOGLE,
                       env={**os.environ, **OFFLINE_ENV, "COLUMNS": "200", **(env or {})})


def test_display_name_with_two_running_matches_is_a_usage_error_listing_them(
        vertex: VertexServer, tmp_path: Path):
    for job_id in ("21", "22"):
        vertex.state.add_job(f"{PARENT}/customJobs/{job_id}", [
            custom_job("RUNNING", display="nightly-finetune")])
    done = _cli("--vertex-training", "nightly-finetune", "--project", PROJECT,
                "--api-endpoint", vertex.endpoint, cwd=tmp_path)
    assert done.returncode == 2
    assert "2 custom jobs are named 'nightly-finetune'" in done.stderr
    assert f"{PARENT}/customJobs/21" in done.stderr and f"{PARENT}/customJobs/22" in done.stderr


def test_display_name_with_one_job_still_running_picks_it(vertex: VertexServer,
                                                           tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/31", [
        custom_job("SUCCEEDED", display="nightly", ended=3600)])
    vertex.state.add_job(f"{PARENT}/customJobs/32", [
        custom_job("RUNNING", display="nightly", logs=lines("32", "Step 3/9 | loss=1.0"))])
    done = _cli("--vertex-training", "nightly", "--project", PROJECT, "--once",
                "--api-endpoint", vertex.endpoint, cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["target"] == f"{PARENT}/customJobs/32" and data["total_steps"] == 3


def test_missing_credentials_exit_4_saying_how_to_authenticate(tmp_path: Path):
    done = _cli("--vertex-training", "123", "--project", PROJECT, "--once", cwd=tmp_path,
                env={"GOOGLE_APPLICATION_CREDENTIALS": "", "HOME": str(tmp_path)})
    assert done.returncode == 4, done.stdout + done.stderr
    assert "gcloud auth application-default login" in done.stdout + done.stderr
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["target_type"] == "vertex-training"


def test_unknown_job_exit_4_naming_what_to_check(vertex: VertexServer, tmp_path: Path):
    done = _cli("--vertex-training", "404404", "--project", PROJECT, "--once",
                "--api-endpoint", vertex.endpoint, cwd=tmp_path)
    assert done.returncode == 4
    assert "not found (check --project, --region and the job ID)" in done.stdout + done.stderr


def test_permission_denied_names_the_missing_role(vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/41", [{"fail": 403}])
    done = _cli("--vertex-training", "41", "--project", PROJECT, "--once",
                "--api-endpoint", vertex.endpoint, cwd=tmp_path)
    assert done.returncode == 4
    assert "roles/aiplatform.viewer" in done.stdout + done.stderr


@pytest.mark.parametrize("value, message", [
    ("projects/p/locations/us-central1/pipelineJobs/9", "watch it with --vertex-pipeline"),
    ("projects/nope", "is not a Vertex AI job name"),
])
def test_a_reference_that_cannot_be_a_custom_job_is_a_usage_error(value: str, message: str,
                                                                  tmp_path: Path):
    done = _cli("--vertex-training", value, "--once", cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr


def test_access_refused_mid_watch_is_connectivity_not_the_end_of_the_run(
        vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/42", [
        custom_job("RUNNING", logs=lines("42", "Step 1/10 | loss=2.0")),
        {"fail": 403},
        custom_job("SUCCEEDED", ended=0, logs=lines("42", "Step 10/10 | loss=1.0")),
    ])
    _, data = watch(vertex, "customJobs", "42", tmp_path)
    refused = next(a for a in data["anomalies_detected"] if a["type"] == "connectivity")
    assert "roles/aiplatform.viewer" in refused["description"]
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")


def test_enum_values_newer_than_the_installed_library_are_read_not_a_crash(
        vertex: VertexServer, tmp_path: Path):
    from google.cloud.aiplatform_v1.types import AcceleratorType, JobState

    job = f"{PARENT}/customJobs/51"
    vertex.state.add_job(job, [
        custom_job(newer(JobState), accelerator=(newer(AcceleratorType), 8), started=None),
        custom_job("RUNNING", accelerator=(newer(AcceleratorType), 8),
                   logs=lines("51", "Step 1/10 | loss=2.0")),
        custom_job("SUCCEEDED", ended=0, accelerator=(newer(AcceleratorType), 8),
                   logs=lines("51", "Step 10/10 | loss=1.0")),
    ])
    seen = Recorder()
    result, data = watch(vertex, "customJobs", "51", tmp_path, observer=seen)
    # google-cloud-aiplatform >= 1.80 asks for numbers on every REST call; older ones for
    # names, and the service then sends the number of a value it has no name for there.
    asked = {"enum-encoding=int" in unquote(path) for method, path, _ in
             vertex.state.requests if method == "GET"}
    assert len(asked) == 1
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert result.exit_code is ExitCode.GO
    text = "\n".join(seen.lines)
    assert f"n1-standard-8 + 8x accelerator #{newer(AcceleratorType)}" in text
    assert f"in state {newer(JobState)}, which the installed google-cloud-aiplatform does " \
           "not know" in text


def test_a_pipeline_task_in_a_state_newer_than_the_library_is_neither_done_nor_failed(
        vertex: VertexServer, tmp_path: Path):
    from google.cloud.aiplatform_v1.types import PipelineTaskDetail

    vertex.state.add_job(f"{PARENT}/pipelineJobs/p51", [
        pipeline("RUNNING", [task(2, "train", newer(PipelineTaskDetail.State), started=60)]),
        pipeline("SUCCEEDED", [task(2, "train", "SUCCEEDED", started=60)]),
    ])
    result, data = watch(vertex, "pipelineJobs", "p51", tmp_path)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
    assert data["anomalies_detected"] == []


def test_a_failed_job_whose_error_never_comes_ends_after_two_more_polls(
        vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/52", [custom_job("FAILED", ended=0)])
    seen = Recorder()
    _, data = watch(vertex, "customJobs", "52", tmp_path, observer=seen)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED")
    assert sum("has not said why yet" in line for line in seen.lines) == 2


def test_a_gcpc_tasks_training_job_is_followed_past_its_launcher(vertex: VertexServer,
                                                                  tmp_path: Path):
    """CustomTrainingJobOp: the task's container is a launcher; its gcp_resources name
    the CustomJob that trains (with the project number, as Vertex AI writes it)."""
    launcher = f"{PARENT}/customJobs/700"
    trainer = f"projects/{PROJECT_NUMBER}/locations/us-central1/customJobs/888"

    def train(**kw: Any) -> dict[str, Any]:
        return task(2, "custom-training-job", "RUNNING", started=300, job=launcher,
                    launched=trainer, **kw)

    vertex.state.add_job(f"{PARENT}/pipelineJobs/p52", [
        pipeline("RUNNING", [train()], logs=[
            *lines("700", "Job projects/x/locations/us-central1/customJobs/888 is running"),
            *lines("888", "Step 1/100 | loss=2.0", "Step 2/100 | loss=1.9")]),
        pipeline("RUNNING", [train()], logs=lines("888", "Step 3/100 | loss=nan")),
    ])
    seen = Recorder()
    _, data = watch(vertex, "pipelineJobs", "p52", tmp_path, observer=seen)
    nan = next(a for a in data["anomalies_detected"] if a["type"] == "nan-inf")
    assert nan["step"] == 3 and data["decision"] == "NO-GO"
    assert nan["description"].startswith("task custom-training-job: ")  # which task NaN'd
    assert f"task custom-training-job: reading the logs of custom job {trainer}" in seen.lines


def test_a_resource_name_with_the_project_number_goes_with_the_projects_id(
        vertex: VertexServer, tmp_path: Path):
    """Vertex AI prints and returns names with the project number; pasting one beside
    --project with the ID is the same project, not a usage error."""
    vertex.state.add_job(f"{PARENT}/customJobs/61", [
        custom_job("RUNNING", logs=lines("61", "Step 4/9 | loss=1.0"))])
    name = f"projects/{PROJECT_NUMBER}/locations/us-central1/customJobs/61"
    done = _cli("--vertex-training", name, "--project", PROJECT, "--once",
                "--api-endpoint", vertex.endpoint, cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["target"] == name and data["total_steps"] == 4


def test_parallel_for_iterations_sharing_a_name_are_each_their_own_task(
        vertex: VertexServer, tmp_path: Path):
    """ParallelFor runs its body once per item: task details with one task_name (and
    unique name), told apart only by task_id."""
    loop = {"taskId": "2", "parentTaskId": "1", "taskName": "for-loop-2", "state": "RUNNING"}

    def shard(task_id: int, state: str, error: str | None = None) -> dict[str, Any]:
        return {**task(task_id, "train-shard", state, started=60, parent=2, error=error),
                "taskUniqueName": "for-loop-2.train-shard"}

    vertex.state.add_job(f"{PARENT}/pipelineJobs/p53", [
        pipeline("RUNNING", [loop, shard(3, "RUNNING"), shard(4, "RUNNING")]),
        pipeline("RUNNING", [loop, shard(3, "FAILED", "shard 0: bad input"),
                             shard(4, "RUNNING")]),
        pipeline("RUNNING", [loop, shard(3, "FAILED", "shard 0: bad input"),
                             shard(4, "FAILED", "shard 1: disk full")]),
    ])
    _, data = watch(vertex, "pipelineJobs", "p53", tmp_path, polls=4)
    failed = sorted(a["description"] for a in data["anomalies_detected"]
                    if a["type"] == "task-failure")
    assert len(failed) == 2, failed
    # google-cloud-aiplatform 1.60 has no task_unique_name: its client drops it, and the
    # task's own name is shown.
    from google.cloud.aiplatform_v1.types import PipelineTaskDetail

    known = "task_unique_name" in PipelineTaskDetail.meta.fields
    shown = "for-loop-2.train-shard" if known else "train-shard"
    assert f"task {shown} [task 3] failed" in failed[0]
    assert "shard 0: bad input" in failed[0] and "shard 1: disk full" in failed[1]


def test_a_custom_job_that_will_not_finish_before_its_timeout_raises_deadline(
        vertex: VertexServer, tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/62", [
        custom_job("RUNNING", started=3000, timeout=3600,
                   logs=lines("62", f"Step {100 * n}/100000 | loss=1.0")) for n in range(1, 5)])
    _, data = watch(vertex, "customJobs", "62", tmp_path, polls=4)
    deadline = next(a for a in data["anomalies_detected"] if a["type"] == "deadline")
    assert "its time limit (Vertex AI scheduling.timeout, 1h" in deadline["description"]


def test_a_job_id_is_looked_for_in_gcloud_s_ai_region(vertex: VertexServer, tmp_path: Path):
    config = tmp_path / "gcloud"
    (config / "configurations").mkdir(parents=True)
    (config / "configurations" / "config_default").write_text("[ai]\nregion = europe-west4\n")
    vertex.state.add_job(f"projects/{PROJECT}/locations/europe-west4/customJobs/63", [
        custom_job("RUNNING", logs=lines("63", "Step 2/9 | loss=1.0"))])
    done = _cli("--vertex-training", "63", "--project", PROJECT, "--once",
                "--api-endpoint", vertex.endpoint, cwd=tmp_path,
                env={"CLOUDSDK_CONFIG": str(config)})
    assert done.returncode == 3, done.stdout + done.stderr
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["target"] == f"projects/{PROJECT}/locations/europe-west4/customJobs/63"


def test_a_running_custom_job_with_a_timeout_shows_the_time_left(vertex: VertexServer,
                                                                  tmp_path: Path):
    vertex.state.add_job(f"{PARENT}/customJobs/64", [
        custom_job("RUNNING", started=600, timeout=3600,
                   logs=lines("64", "Step 1/10 | loss=1.0"))])
    seen = Recorder()
    watch(vertex, "customJobs", "64", tmp_path, polls=1, observer=seen)
    # Started 10 minutes ago with a one-hour timeout (a few seconds pass in the test).
    assert any(re.search(r"\| Left: (49|50)m \d+s of the timeout", line)
               for line in seen.lines), seen.lines

"""Vertex AI jobs as the service returns them, over time (frames for the fake server)."""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.vertex_api import ago, job_log

PROJECT = "my-gcp-proj"
PROJECT_NUMBER = "123456789012"  # what Vertex AI writes in the resource names it makes
PARENT = f"projects/{PROJECT}/locations/us-central1"


def newer(enum: Any) -> int:
    """A number past every value of one of the installed library's enums: what the
    service sends once the API has grown a value (a new accelerator, a new state)."""
    return max(int(member) for member in enum) + 1


def custom_job(state: str | int, *, display: str = "my-gpt2-finetune", started: float | None = 600,
               ended: float | None = None, error: dict[str, Any] | None = None,
               logs: list[dict[str, Any]] | None = None,
               accelerator: tuple[str | int, int] = ("NVIDIA_TESLA_V100", 2),
               timeout: int | None = None) -> dict[str, Any]:
    """One frame of a custom job; times are seconds ago; a number is an enum value as sent."""
    frame: dict[str, Any] = {
        "displayName": display,
        "state": state if isinstance(state, int) else f"JOB_STATE_{state}",
        "createTime": ago((started or 0) + 120),
        "jobSpec": {"workerPoolSpecs": [{
            "machineSpec": {"machineType": "n1-standard-8", "acceleratorType": accelerator[0],
                            "acceleratorCount": accelerator[1]},
            "replicaCount": "1", "containerSpec": {"imageUri": "gcr.io/x/trainer:1"}}],
            **({"scheduling": {"timeout": f"{timeout}s"}} if timeout else {})},
        "logs": logs or [],
    }
    if started is not None:
        frame["startTime"] = ago(started)
    if ended is not None:
        frame["endTime"] = ago(ended)
    if error is not None:
        frame["error"] = error
    return frame


def task(task_id: int, name: str, state: str | int, *, started: float | None = None,
         job: str | None = None, error: str | None = None, parent: int = 1,
         launched: str | None = None) -> dict[str, Any]:
    """launched: the custom job a Google Cloud Pipeline Components task creates (its
    container, `job`, being the launcher), as its `gcp_resources` output names it in
    the execution's metadata (the shape of google-cloud-aiplatform's own test data,
    `tests/unit/aiplatform/test_model_evaluation.py`, `_BP_JOB_GCP_RESOURCES_STR`)."""
    detail: dict[str, Any] = {"taskId": str(task_id), "parentTaskId": str(parent),
                              "taskName": name, "state": state, "createTime": ago(3600)}
    if started is not None:
        detail["startTime"] = ago(started)
    if state in ("SUCCEEDED", "FAILED"):
        detail["endTime"] = ago(1)
    if job is not None and launched is not None:
        detail["executorDetail"] = {"containerDetail": {"mainJob": job}}
        detail["execution"] = {"metadata": {"output:gcp_resources": json.dumps({
            "resources": [{"resourceType": "CustomJob", "resourceUri":
                           f"https://us-central1-aiplatform.googleapis.com/v1/{launched}"}]},
            indent=2)}}
    elif job is not None:
        detail["executorDetail"] = {"customJobDetail": {"job": job}}
    if error is not None:
        detail["error"] = {"code": 9, "message": error}
    return detail


def pipeline(state: str, tasks: list[dict[str, Any]], *, display: str = "my-llm-pipeline",
             planned: tuple[str, ...] = (), started: float = 600,
             logs: list[dict[str, Any]] | None = None,
             error: dict[str, Any] | None = None) -> dict[str, Any]:
    root = {"taskId": "1", "taskName": display, "state": "RUNNING", "createTime": ago(started)}
    frame: dict[str, Any] = {
        "displayName": display, "state": f"PIPELINE_STATE_{state}",
        "createTime": ago(started + 30), "startTime": ago(started),
        "pipelineSpec": {"root": {"dag": {"tasks": {name: {} for name in planned}}}},
        "jobDetail": {"taskDetails": [root, *tasks]},
        "logs": logs or [],
    }
    if error is not None:
        frame["error"] = error
    return frame


def lines(job_id: str, *texts: str, task: str = "workerpool0-0") -> list[dict[str, Any]]:
    return [job_log(job_id, text, task=task, seconds_ago=len(texts) - i)
            for i, text in enumerate(texts)]

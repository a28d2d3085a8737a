"""Both of the seed's example sessions, and `--once --json`, through the command line
and the real Google clients against the loopback server."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import validate_artifact
from tests.fakes.vertex_api import VertexServer
from tests.forked_cli import run_babysit
from tests.targets.vertex.conftest import OFFLINE_ENV, need_google_clients
from tests.targets.vertex.scenarios import PARENT, PROJECT, custom_job, lines, pipeline, task

need_google_clients()

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)

_GOOGLE = ["google.cloud.aiplatform_v1", "google.cloud.logging"]


def babysit(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE_ENV, "COLUMNS": "200", "NO_COLOR": "1"}
    # Forked with the Google clients already imported (tests/forked_cli.py).
    return run_babysit(args, cwd=cwd, env=env, timeout=timeout, preload=_GOOGLE)


def elapsed_in(pattern: str, text: str, at_least: float, slack: float) -> bool:
    """Whether `pattern` (its `(?P<m>)` minutes and `(?P<s>)` seconds) is in `text`, with a
    time between `at_least` and `at_least + slack` seconds. The fake's times are set when
    the scenario is built and babysit reads them after it started, however long that took
    on a busy machine: the slack is the time the test really took, not a guess."""
    match = re.search(pattern, text)
    if match is None:
        return False
    seconds = 60 * int(match["m"]) + int(match["s"])
    return at_least <= seconds <= at_least + slack + 1


def test_seed_custom_job_session_runs_to_success_with_its_report_lines(vertex: VertexServer,
                                                                       tmp_path: Path):
    built = time.monotonic()
    job = f"{PARENT}/customJobs/9876543210"
    vertex.state.add_job(job, [
        custom_job("RUNNING", logs=lines("9876543210", "Step 100/5000 | loss=2.52 | lr=3e-4",
                                         "Step 200/5000 | loss=2.31 | lr=3e-4")),
        custom_job("SUCCEEDED", started=4 * 3600 + 12 * 60, ended=0, logs=lines(
            "9876543210", "Step 5000/5000 | loss=1.12 | lr=1e-5",
            "Training complete. Best checkpoint: gs://my-bucket/checkpoints/step-4800/")),
    ])
    done = babysit("--vertex-training", "9876543210", "--project", PROJECT,
                   "--api-endpoint", vertex.endpoint, "--interval", "0.2", cwd=tmp_path)
    out = done.stdout
    slack = time.monotonic() - built
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Custom job: my-gpt2-finetune ({job})" in out
    assert elapsed_in(r"State: RUNNING \| Elapsed: (?P<m>\d+)m (?P<s>\d+)s \| Machine: "
                      r"n1-standard-8 \+ 2x V100", out, 600, slack), out
    assert "Recent logs: Step 200/5000 (4.0%) | loss=2.31 | lr=3e-4" in out
    assert "State: SUCCEEDED | Duration: 4h 12m" in out
    assert "Final log: Training complete. Best checkpoint: gs://my-bucket/checkpoints/" \
           "step-4800/" in out
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert (data["decision"], data["terminal_state"], data["target_type"]) == \
        ("GO", "SUCCEEDED", "vertex-training")
    assert data["total_steps"] == 5000 and data["target_steps"] == 5000
    assert all(host.startswith("127.0.0.1:") for _, _, host in vertex.state.requests)


def test_seed_pipeline_session_reports_tasks_then_the_failed_task_and_its_oom(
        vertex: VertexServer, tmp_path: Path):
    built = time.monotonic()
    trainer = f"{PARENT}/customJobs/777"
    planned = ("data-validation", "model-training", "evaluation", "export", "deploy")
    ok = task(2, "data-validation", "SUCCEEDED", started=900)
    name = f"{PARENT}/pipelineJobs/1234567890"
    vertex.state.add_job(name, [
        pipeline("RUNNING", [ok, task(3, "model-training", "RUNNING", started=600, job=trainer)],
                 planned=planned),
        pipeline("RUNNING", [ok, task(3, "model-training", "RUNNING", started=720, job=trainer)],
                 planned=planned),
        pipeline("RUNNING", [ok, task(3, "model-training", "FAILED", started=840, job=trainer,
                                      error="The replica workerpool0-0 exited with a non-zero "
                                            "status of 1.")], planned=planned),
    ])
    vertex.state.jobs[name][0]["logs"] = lines(
        "777", " 40%|####      | 400/1000 [05:00<07:30,  1.33it/s]",
        "{'loss': 2.1, 'learning_rate': 3e-4, 'epoch': 0.4}")
    # The trainer's last words arrive when the task fails.
    vertex.state.jobs[name][2]["logs"] = lines(
        "777", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 24.50 GiB. GPU 0 "
               "has a total capacity of 23.80 GiB")
    done = babysit("--vertex-pipeline", "my-llm-pipeline", "--project", PROJECT,
                   "--api-endpoint", vertex.endpoint, "--interval", "0.2", cwd=tmp_path)
    out = done.stdout
    slack = time.monotonic() - built
    # NO-GO, and waiting for the user to approve cancelling what is left of it: the exit
    # code is the NO-GO's (1), the proposal in the verdict.
    assert done.returncode == 1, out + done.stderr
    assert f"Pipeline: my-llm-pipeline ({name})" in out
    assert elapsed_in(r"State: RUNNING \| Elapsed: (?P<m>\d+)m (?P<s>\d+)s", out, 600, slack), out
    assert "Tasks: 1 SUCCEEDED (data-validation), 1 RUNNING (model-training), 3 PENDING" in out
    assert elapsed_in(r"Running task: model-training — started (?P<m>\d+)m (?P<s>\d+)s ago", out,
                      600, slack), out
    assert elapsed_in(r"Tasks: 1 SUCCEEDED, 1 RUNNING \(model-training — (?P<m>\d+)m "
                      r"(?P<s>\d+)s elapsed\), 3 PENDING — OK", out, 720, slack), out
    assert "Tasks: 1 SUCCEEDED, 1 FAILED (model-training), 3 PENDING — ANOMALY:" in out
    assert "Recent logs: Step 400/1000 (40%) | loss=2.1" in out  # the task's job, followed
    assert "likely cause: GPU out of memory" in out
    data = validate_artifact(tmp_path / "babysit-training.json")
    assert data["decision"] == "NO-GO"
    assert data["target"] == name  # the display name resolved to the job
    types = {a["type"] for a in data["anomalies_detected"]}
    assert {"task-failure", "oom"} <= types
    cancel = next(a for a in data["actions"] if a["kind"] == "cancel-run")
    assert cancel["status"] == "needs-approval"
    assert f'cancel_pipeline_job(name="{name}")' in cancel["reason"]
    # The proposal is a shell word list whose Python is one call, nothing more.
    command = cancel["reason"].split("cancel the run (", 1)[1].split(") — because")[0]
    argv = shlex.split(command)
    assert argv[:2] == ["python", "-c"] and len(argv) == 3
    calls = [n for n in ast.walk(ast.parse(argv[2])) if isinstance(n, ast.Call)]
    assert [c.func.attr for c in calls if isinstance(c.func, ast.Attribute)] == [
        "cancel_pipeline_job", "PipelineServiceClient"]


def test_once_json_gives_the_verdict_and_the_exit_code_of_the_spec(vertex: VertexServer,
                                                                   tmp_path: Path):
    job = f"{PARENT}/customJobs/456"
    vertex.state.add_job(job, [custom_job("RUNNING", logs=lines(
        "456", "Step 4200/10000 | loss=0.842"))])
    done = babysit("--vertex-training", job, "--once", "--json", "--api-endpoint",
                   vertex.endpoint, cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "baseline" and events[0]["step"] == 4200
    assert events[0]["status"][0] == f"Custom job: my-gpt2-finetune ({job})"
    final = events[-1]
    assert final["event"] == "final"
    assert (final["artifact"]["decision"], final["artifact"]["terminal_state"]) == \
        ("CONDITIONAL", "RUNNING")

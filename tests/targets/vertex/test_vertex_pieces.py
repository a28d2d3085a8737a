"""The pure parts of the Vertex AI targets: references, causes, descriptions, and the
incremental Cloud Logging reader against the loopback server."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from babysit.targets.base import TargetUnavailable
from babysit.targets.vertex.causes import likely_cause
from babysit.targets.vertex.cloud_logs import EntryReader
from babysit.targets.vertex.describe import Task, machine, task_counts
from babysit.targets.vertex.names import CUSTOM_JOBS, PIPELINE_JOBS, JobRef, read_reference
from babysit.targets.vertex.service import LOGS_ROLE, VertexService
from tests.fakes.vertex_api import VertexServer, job_log, served
from tests.targets.vertex.conftest import need_google_clients

need_google_clients()
# (after the check: without the extra the module skips, naming it, instead of failing)
json_format = pytest.importorskip("google.protobuf.json_format")


@pytest.mark.parametrize("value, collection, expected", [
    ("456", CUSTOM_JOBS, JobRef("proj-p", "us-central1", CUSTOM_JOBS, "456")),
    ("projects/proj-q/locations/europe-west4/customJobs/9", CUSTOM_JOBS,
     JobRef("proj-q", "europe-west4", CUSTOM_JOBS, "9")),
    ("my-pipeline-20261130100000", PIPELINE_JOBS,
     JobRef("proj-p", "us-central1", PIPELINE_JOBS, "my-pipeline-20261130100000")),
])
def test_references_name_the_job_and_take_the_region_from_a_resource_name(
        value: str, collection: str, expected: JobRef):
    assert read_reference(value, collection, None if value.startswith("projects/") else "proj-p",
                          "us-central1").ref == expected


def test_a_display_name_is_looked_up_and_a_pipeline_id_may_be_one_too():
    assert read_reference("My Finetune", CUSTOM_JOBS, "proj-p", "us-central1").display_name \
        == "My Finetune"
    maybe = read_reference("nightly", PIPELINE_JOBS, "proj-p", "us-central1")
    assert maybe.maybe_id and maybe.display_name == "nightly"


@pytest.mark.parametrize("value", [
    'projects/p");__import__("os").system("id");("/locations/us-central1/pipelineJobs/j1',
    "projects/my-proj/locations/us\"+__import__('os').system('id')+\"/pipelineJobs/j1",
    "projects/my-proj/locations/us-central1/pipelineJobs/J1;id",
    "projects/-oops/locations/us-central1/customJobs/12",
])
def test_a_resource_name_with_parts_outside_their_grammar_is_refused(value: str):
    collection = PIPELINE_JOBS if "pipelineJobs" in value else CUSTOM_JOBS
    with pytest.raises(ValueError):
        read_reference(value, collection, None, "us-central1")


@pytest.mark.parametrize("code, message, logs, title", [
    (13, "The replica workerpool0-0 exited with a non-zero status of 1.",
     ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"], "GPU out of memory"),
    (8, "Resources are insufficient in region: us-central1", [], "quota or capacity exhausted"),
    (13, "The replica workerpool0-0 ran out-of-memory and exited with a non-zero status of "
         "9(SIGKILL)", [], "host out of memory (killed)"),
    (4, "Job exceeded the maximum duration", [], "deadline exceeded"),
    (7, "Permission 'storage.objects.get' denied", [], "permission denied"),
    (13, "The replica workerpool0-0 exited with a non-zero status of 1.",
     ["Traceback (most recent call last):", "KeyError: 'labels'"], "a worker exited with status 1"),
    (13, "Spot VM was preempted", [], "spot capacity preempted"),
    (0, "", [], None),
])
def test_likely_cause_names_the_most_specific_evidence(code: int, message: str,
                                                       logs: list[str], title: str | None):
    cause = likely_cause(code, message, logs)
    assert (cause.title if cause else None) == title


def test_task_counts_read_like_the_seed():
    now = datetime(2026, 11, 30, 10, 12, tzinfo=timezone.utc)
    tasks = [Task("data-validation", "SUCCEEDED"),
             Task("model-training", "RUNNING", started=now - timedelta(minutes=12)),
             Task("evaluate", "PENDING"), Task("export", "PENDING"), Task("deploy", "PENDING")]
    assert task_counts(tasks, now, brief=False) == \
        "Tasks: 1 SUCCEEDED (data-validation), 1 RUNNING (model-training), 3 PENDING"
    assert task_counts(tasks, now, brief=True) == \
        "Tasks: 1 SUCCEEDED, 1 RUNNING (model-training — 12m 0s elapsed), 3 PENDING"
    assert machine("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8, 2) == "2 × (a2-highgpu-8g + 8x A100)"


def test_log_reader_pages_takes_the_newest_first_then_only_new_entries_once(
        vertex: VertexServer, monkeypatch: pytest.MonkeyPatch):
    service = VertexService("p", "us-central1", vertex.endpoint)
    store = vertex.state.entries
    for n in range(2500):  # more than one read takes at the start, over several pages
        store.append({**job_log("5", f"line {n}", seconds_ago=3000 - n), "insertId": f"a{n}"})
    reader = EntryReader(lambda **kw: service.logging.list_entries(**kw), "p",
                         'resource.type="ml_job" AND resource.labels.job_id="5"')
    first = reader.read()
    assert [e.text for e in first[:1] + first[-1:]] == ["line 500", "line 2499"]
    assert len(first) == 2000
    store.append({**job_log("5", "late", seconds_ago=3000 - 2490), "insertId": "late"})
    store.append({**job_log("5", "new", seconds_ago=0), "insertId": "new"})
    store.append({**job_log("6", "another job", seconds_ago=0), "insertId": "other"})
    assert [e.text for e in reader.read()] == ["late", "new"]
    assert reader.read() == []
    filters = [path for method, path, _ in vertex.state.requests if method == "POST"]
    assert len(filters) >= 4  # two pages at the start, then one request per read


def test_a_logging_endpoint_given_as_a_host_is_reached_over_https(vertex: VertexServer):
    """`--logging-endpoint HOST:PORT`, as documented: google-cloud-logging takes it as its
    base URL, so without a scheme requests refused it (InvalidSchema) and the watch
    crashed. Here the host answers plain HTTP, so HTTPS to it fails as a transport
    error: the logs are unreachable this poll, nothing worse."""
    host = vertex.endpoint.removeprefix("http://")
    service = VertexService("p", "us-central1", vertex.endpoint, host, timeout=5,
                            retry_seconds=0.5)
    reader = EntryReader(lambda **kw: service.logging.list_entries(**kw), "p",
                         'resource.type="ml_job" AND resource.labels.job_id="5"')
    with pytest.raises(TargetUnavailable, match=f"cannot reach {host}: SSLError"):
        service.guard(reader.read, "reading the job's logs", LOGS_ROLE)


def test_the_fake_refuses_a_job_field_or_enum_name_the_api_does_not_have():
    assert served("customJobs", {"state": "JOB_STATE_RUNNING"}, True) == {"state": 3}
    for made_up in ({"state": "JOB_STATE_STUCK"}, {"jobSpec": {"workerPools": []}}):
        with pytest.raises(json_format.ParseError):
            served("customJobs", made_up, False)


def test_gcloud_ai_region_is_read_from_the_active_configuration(tmp_path):
    from babysit.targets.vertex.gcloud_config import gcloud_region

    (tmp_path / "configurations").mkdir()
    (tmp_path / "active_config").write_text("work\n")
    (tmp_path / "configurations" / "config_work").write_text(
        "[core]\nproject = my-gcp-proj\n\n[ai]\nregion = europe-west4\n")
    assert gcloud_region({"CLOUDSDK_CONFIG": str(tmp_path)}) == "europe-west4"
    assert gcloud_region({"CLOUDSDK_CONFIG": str(tmp_path),
                          "CLOUDSDK_AI_REGION": "asia-east1"}) == "asia-east1"
    assert gcloud_region({"CLOUDSDK_CONFIG": str(tmp_path / "none")}) is None
    (tmp_path / "configurations" / "config_work").write_text("[ai]\nregion = ../../etc\n")
    assert gcloud_region({"CLOUDSDK_CONFIG": str(tmp_path)}) is None

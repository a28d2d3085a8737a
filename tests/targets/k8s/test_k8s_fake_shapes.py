"""The fake API server's objects hold to the Kubernetes API's own schema: each one is
read into the official client's generated model (which checks required fields and
enums, `client_side_validation`) and written back, losing nothing babysit reads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.k8s_api import (
    condition,
    container,
    event,
    job,
    job_pod,
    node_pod,
    operator_failed,
    replica_pod,
    running,
    terminated,
    waiting,
)
from tests.targets.k8s.conftest import need_kubernetes_client

need_kubernetes_client()


class _Response:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body)


def _timeless(value: Any) -> Any:
    """Without the times (the client writes `+00:00` where the server wrote `Z`)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items()
                if not k.endswith(("Time", "At", "Timestamp"))}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _round_trip(body: dict[str, Any], model: str) -> dict[str, Any]:
    # Imported here, not at the top: every worker collects this module, and importing
    # the client costs a second or more; only the worker that runs these tests needs it.
    from kubernetes.client import ApiClient

    client = ApiClient()
    value = client.deserialize(_Response(body), model)
    return client.sanitize_for_serialization(value)  # type: ignore[no-any-return]


@pytest.mark.parametrize("body, model", [
    (job("x", conditions=(condition("Complete", "CompletionsReached"),), ttl=0), "V1Job"),
    (job("x", active=0, failed=1, conditions=(
        condition("Failed", "DeadlineExceeded", "Job was active longer than specified "
                  "deadline"),)), "V1Job"),
    (job_pod("x", "x-abc", "Running", [container("trainer", running())]), "V1Pod"),
    (job_pod("x", "x-abc", "Running", [container(
        "trainer", waiting("CrashLoopBackOff", "back-off"), restarts=2,
        last=terminated(1))]), "V1Pod"),
    (replica_pod("x", "Worker", 0, "Failed", [container("pytorch", terminated(137))],
                 reason="Evicted", attempt=1), "V1Pod"),
    (node_pod("x", "node", 1, "Running", [container("node", running())]), "V1Pod"),
    (event("Pod", "x-abc", "BackOff", "Back-off restarting failed container"),
     "CoreV1Event"),
])
def test_the_fakes_objects_are_valid_api_objects(body: dict[str, Any], model: str):
    written = _round_trip(body, model)
    assert written["metadata"]["name"] == body["metadata"]["name"]
    if model == "V1Pod":
        assert _timeless(written["status"]["containerStatuses"]) == \
            _timeless(body["status"]["containerStatuses"])
        assert written["metadata"]["labels"] == body["metadata"]["labels"]
    if model == "V1Job":
        assert _timeless(written["status"]["conditions"]) == \
            _timeless(body["status"]["conditions"])


def test_the_operators_condition_is_a_valid_job_condition():
    """The training-operator's JobCondition has the batch/v1 JobCondition's fields."""
    found = operator_failed("x", deadline=True)
    written = _round_trip(found, "V1JobCondition")
    assert _timeless(written) == _timeless(found)

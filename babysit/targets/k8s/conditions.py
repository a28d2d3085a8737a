"""How a job's conditions say where it stands: a batch/v1 Job, a kubeflow.org/v1
PyTorchJob, a trainer.kubeflow.org/v1alpha1 TrainJob. Pure functions over the API's JSON."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from babysit import lazy_re
from babysit.model import TerminalState
from babysit.targets.k8s.pods import PodView

# How a timeout reads in a Failed condition. batch/v1 Jobs say DeadlineExceeded; the
# Kubeflow training-operator (pkg/controller.v1/common/job.go) says `<Kind>Failed` for
# every failure and only its message, "Job X has failed because it was active longer
# than specified deadline", tells a deadline from a backoff limit.
_DEADLINE = lazy_re.compile(r"DeadlineExceeded|active longer than specified deadline|"
                            r"ActiveDeadlineSeconds", re.I)


@dataclass(frozen=True)
class JobState:
    words: str  # for people and the backoff: RUNNING, PENDING, COMPLETE, FAILED ...
    run_state: TerminalState | None
    reason: str = ""
    message: str = ""


def _true(obj: dict[str, Any]) -> list[dict[str, Any]]:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return [c for c in conditions if str(c.get("status")) == "True"]


def _ended(job: dict[str, Any], done: str, failed_with_reason: bool) -> JobState | None:
    """The final state a true condition gives (`done` succeeded; Failed past a deadline
    is a timeout), or None while none does."""
    for condition in _true(job):
        kind = condition.get("type")
        reason = str(condition.get("reason") or "")
        message = str(condition.get("message") or "")
        if kind == done:
            return JobState(done.upper(), TerminalState.SUCCEEDED, reason, message)
        if kind == "Failed":
            timeout = bool(_DEADLINE.search(reason) or _DEADLINE.search(message))
            return JobState(f"FAILED ({reason})" if reason and failed_with_reason else "FAILED",
                            TerminalState.TIMEOUT if timeout else TerminalState.FAILED,
                            reason, message)
    return None


def job_state(job: dict[str, Any], pods: list[PodView]) -> JobState:
    """A batch/v1 Job: Complete and Failed are final (DeadlineExceeded is a timeout)."""
    ended = _ended(job, "Complete", failed_with_reason=True)
    if ended is not None:
        return ended
    if any(c.get("type") == "Suspended" for c in _true(job)):
        return JobState("SUSPENDED", None)
    return JobState("RUNNING" if any(p.phase == "Running" for p in pods) else "PENDING", None)


def pytorchjob_state(job: dict[str, Any], pods: list[PodView]) -> JobState:
    """A kubeflow.org/v1 PyTorchJob: its newest true condition (Created, Running,
    Restarting, Succeeded, Failed, Suspended)."""
    ended = _ended(job, "Succeeded", failed_with_reason=False)
    if ended is not None:
        return ended
    true = _true(job)
    if not true:
        return JobState("PENDING", None)
    newest = max(true, key=lambda c: str(c.get("lastTransitionTime") or ""))
    words = str(newest.get("type") or "Created").upper()
    if words == "RUNNING" and not any(p.phase == "Running" for p in pods):
        words = "PENDING"
    return JobState(words, None)


def trainjob_state(job: dict[str, Any], pods: list[PodView]) -> JobState:
    """A trainer.kubeflow.org/v1alpha1 TrainJob: Complete, Failed (reason DeadlineExceeded
    past activeDeadlineSeconds), Suspended (kubeflow/trainer trainjob_types.go); running
    while its JobSet's pods run."""
    ended = _ended(job, "Complete", failed_with_reason=True)
    if ended is not None:
        return ended
    for condition in _true(job):
        if condition.get("type") == "Suspended":
            return JobState("SUSPENDED", None, str(condition.get("reason") or ""),
                            str(condition.get("message") or ""))
    return JobState("RUNNING" if any(p.phase == "Running" for p in pods) else "PENDING", None)


STATE_OF = {"job": job_state, "pytorchjob": pytorchjob_state, "trainjob": trainjob_state}

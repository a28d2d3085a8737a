"""A job's pods as the API returns them: which rank each is, and what their containers'
states say (OOM kills, non-zero exits, crash loops, restarts, images that cannot be
pulled).

Severity and type, from the existing catalogue:
- `OOMKilled` is the kernel's cgroup OOM killer: `oom`, a blocker (as a CUDA OOM in a
  log is), with the container's memory limit as evidence.
- a non-zero exit or a crash loop is `crash` (a blocker); it is keyed per pod, so a
  loop that restarts a hundred times is one anomaly, and it resolves when training goes
  on to a new step (the catalogue's `recovers_on_progress`).
- an image that cannot be pulled, or a container that cannot be created, is
  `job-failure` at high: nothing of the run can start until someone fixes the spec, but
  Kubernetes keeps retrying, so it is not the job's end.
"""

from __future__ import annotations

import contextlib
import signal
from dataclasses import dataclass
from typing import Any

from babysit.model import AnomalyType, Severity
from babysit.redact import clip
from babysit.snapshot import ServiceAnomaly

_BAD_WAITING = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName",
                "CreateContainerConfigError", "CreateContainerError", "RunContainerError")
_REPLICA_ORDER = {"master": 0, "launcher": 0, "chief": 0, "node": 0, "worker": 1}


@dataclass(frozen=True)
class PodView:
    name: str
    rank: int
    phase: str
    containers: tuple[dict[str, Any], ...]  # containerStatuses (init ones left out)
    limits: dict[str, str]  # container -> its memory limit
    uid: str
    created: str
    node: str
    reason: str  # status.reason (Evicted, ...)
    message: str

    @property
    def identity(self) -> str:
        """Which pod this is. Controllers give a pod the name of its place (the
        training-operator's `<job>-<type>-<index>`), and make a deleted or evicted one
        again under that name with a new UID: what is known of a pod (its restarts, its
        log read so far, that it ended) belongs to the UID, not the name."""
        return self.uid or self.name

    @property
    def restarts(self) -> int:
        return sum(int(c.get("restartCount") or 0) for c in self.containers)


def rank_key(pod: dict[str, Any]) -> tuple[int, int, str, str]:
    """How pods sort: the master (or a Job's completion index 0) first, then workers by
    index; pods without either in creation order."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    replica = str(labels.get("training.kubeflow.org/replica-type")
                  or labels.get("replica-type") or "").lower()
    # A TrainJob's JobSet: its trainer nodes ("node", ranked by completion index) and
    # its initializers (dataset-initializer, model-initializer), ranked after them.
    replicated = str(labels.get("jobset.sigs.k8s.io/replicatedjob-name") or "").lower()
    if replicated and not replica:
        replica = "node" if replicated in ("node", "trainer-node") else replicated
    index_text = (labels.get("training.kubeflow.org/replica-index")
                  or labels.get("replica-index")
                  or labels.get("batch.kubernetes.io/job-completion-index")
                  or annotations.get("batch.kubernetes.io/job-completion-index"))
    try:
        index = int(index_text) if index_text is not None else 0
    except ValueError:
        index = 0
    return (_REPLICA_ORDER.get(replica, 2 if replica else 0), index,
            str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))


def views(pods: list[dict[str, Any]]) -> list[PodView]:
    """Pods with ranks: torch's numbering for a PyTorchJob (master 0, worker i → i + 1),
    the completion index for an indexed Job. Pods of the same rank (a replacement after a
    failure) share it: the newest is the rank's current attempt."""
    ordered = sorted(pods, key=rank_key)
    masters = len({rank_key(p)[1] for p in ordered if rank_key(p)[0] == 0})
    out: list[PodView] = []
    for pod in ordered:
        group, index, _, _ = rank_key(pod)
        rank = index if group == 0 else index + masters if group == 1 else 1000 + index
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        spec = pod.get("spec") or {}
        limits = {str(c.get("name")): str(((c.get("resources") or {}).get("limits") or {})
                                          .get("memory", ""))
                  for c in spec.get("containers") or []}
        out.append(PodView(
            name=str(meta.get("name") or "?"), rank=rank,
            phase=str(status.get("phase") or "Unknown"),
            containers=tuple(status.get("containerStatuses") or ()), limits=limits,
            uid=str(meta.get("uid") or ""), created=str(meta.get("creationTimestamp") or ""),
            node=str(spec.get("nodeName") or ""), reason=str(status.get("reason") or ""),
            message=str(status.get("message") or "")))
    return out


def _exit_words(terminated: dict[str, Any]) -> str:
    code = terminated.get("exitCode")
    reason = terminated.get("reason") or ""
    text = f"exit code {code}" if code is not None else "ended"
    if isinstance(code, int) and code > 128:
        with contextlib.suppress(ValueError):
            text += f" ({signal.Signals(code - 128).name})"
    if reason:
        text += f", {reason}"
    message = str(terminated.get("message") or "").strip()
    if message:
        text += f": {clip(message.splitlines()[-1], 200)}"
    return text


class PodStates:
    """What changed in the pods' containers since the previous poll."""

    def __init__(self) -> None:
        self._restarts: dict[tuple[str, str], int] = {}
        self._seen_end: set[tuple[str, str, str]] = set()
        self._noted_waiting: set[tuple[str, str, str]] = set()

    def look(self, pods: list[PodView]) -> tuple[list[ServiceAnomaly], list[str]]:
        raised: list[ServiceAnomaly] = []
        notices: list[str] = []
        for pod in pods:
            for container in pod.containers:
                raised += self._container(pod, container, notices)
        return raised, notices

    def _container(self, pod: PodView, status: dict[str, Any],
                   notices: list[str]) -> list[ServiceAnomaly]:
        name = str(status.get("name") or "?")
        where = f"pod {pod.name} (rank {pod.rank}) container {name}"
        state = status.get("state") or {}
        last = (status.get("lastState") or {}).get("terminated") or {}
        count = int(status.get("restartCount") or 0)
        before = self._restarts.get((pod.identity, name), 0)
        self._restarts[(pod.identity, name)] = count
        raised: list[ServiceAnomaly] = []
        ends: list[tuple[dict[str, Any], str]] = []
        if count > before:
            times = "once" if count - before == 1 else f"{count - before} times"
            notices.append(f"{where} restarted {times} (restart count {count}; a new "
                           f"attempt): the previous one ended with {_exit_words(last)}"
                           if last else f"{where} restarted {times} (restart count {count}; "
                           f"a new attempt)")
            if last:
                ends.append((last, f"restart {count}"))
        terminated = state.get("terminated")
        if terminated:
            ends.append((terminated, "final"))
        for ended, which in ends:
            key = (pod.identity, name, f"{ended.get('finishedAt')}|{which}")
            if key in self._seen_end:
                continue
            self._seen_end.add(key)
            found = self._ended(pod, name, where, ended, count)
            if found is not None:
                raised.append(found)
        waiting = state.get("waiting") or {}
        reason = str(waiting.get("reason") or "")
        message = str(waiting.get("message") or "").strip()
        if reason == "CrashLoopBackOff":
            evidence = _exit_words(last) if last else "its last exit is not reported"
            raised.append(ServiceAnomaly(
                AnomalyType.CRASH, Severity.BLOCKER,
                f"{where} is in CrashLoopBackOff after {count} restart(s): the run fails again "
                f"on every start (last: {evidence}); Kubernetes waits longer before each "
                f"retry", key=f"crash:{pod.name}"))
        elif reason in _BAD_WAITING:
            raised.append(ServiceAnomaly(
                AnomalyType.JOB_FAILURE, Severity.HIGH,
                f"{where} cannot start: {reason}" + (f" ({clip(message, 300)})" if message else "")
                + " — fix the image or the pod spec; Kubernetes keeps retrying meanwhile",
                key=f"start:{pod.name}"))
        elif reason and (pod.identity, name, reason) not in self._noted_waiting \
                and reason not in ("ContainerCreating", "PodInitializing"):
            self._noted_waiting.add((pod.identity, name, reason))
            notices.append(f"{where} is waiting: {reason}" + (f" ({clip(message, 200)})"
                                                              if message else ""))
        return raised

    @staticmethod
    def _ended(pod: PodView, name: str, where: str, ended: dict[str, Any],
               count: int) -> ServiceAnomaly | None:
        code = ended.get("exitCode")
        reason = str(ended.get("reason") or "")
        if reason == "OOMKilled":
            limit = pod.limits.get(name) or ""
            return ServiceAnomaly(
                AnomalyType.OOM, Severity.BLOCKER,
                f"{where} was OOMKilled — the kernel killed it for using more host memory "
                f"than its limit" + (f" ({limit})" if limit else "") + f" (evidence: "
                f"{_exit_words(ended)}, restart count {count}); raise "
                f"resources.limits.memory or lower data-loader workers and host-side "
                f"buffers", key=f"oom:{pod.name}")
        if code in (0, None):
            return None
        return ServiceAnomaly(AnomalyType.CRASH, Severity.BLOCKER,
                              f"{where} exited with {_exit_words(ended)}"
                              + (f" (restart count {count})" if count else ""),
                              key=f"crash:{pod.name}")

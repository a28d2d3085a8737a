"""The likely cause of a failed Vertex AI job, from its error and the end of its logs.

Pure. Ordered so the most specific evidence wins: an out-of-memory line in the logs
explains a "non-zero exit" error better than the error does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from babysit import lazy_re


@dataclass(frozen=True)
class Cause:
    title: str
    advice: str
    evidence: str  # the error text or log line that points to it


# google.rpc.Code values that Vertex AI puts in a job's `error.code`.
_DEADLINE, _NOT_FOUND, _PERMISSION, _EXHAUSTED, _UNAUTHENTICATED = 4, 5, 7, 8, 16

_GPU_OOM = lazy_re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|"
                           r"RESOURCE_EXHAUSTED: Out of memory|OOM when allocating", re.I)
_HOST_OOM = lazy_re.compile(r"ran out[- ]of[- ]memory|status of 137\b|SIGKILL|Killed\b|"
                            r"exceeded (?:the )?memory limit", re.I)
_QUOTA = lazy_re.compile(r"quota|resources? (?:are |is )?(?:insufficient|exhausted|not available)|"
                         r"RESOURCE_POOL_EXHAUSTED|stockout|Resources are insufficient", re.I)
_PREEMPTED = lazy_re.compile(r"preempt|spot (?:vm|capacity|instance)|reclaimed", re.I)
_DEADLINE_TEXT = lazy_re.compile(
    r"deadline|timed? ?out|exceeded the maximum|maximum duration", re.I)
_PERMISSION_TEXT = lazy_re.compile(r"permission|does not have .*access|forbidden|403\b", re.I)
_NOT_FOUND_TEXT = lazy_re.compile(r"not found|No such file|does not exist|404\b", re.I)
_EXIT = lazy_re.compile(r"non-zero (?:exit )?(?:status|code) of (\d+)|exited with (?:a )?"
                        r"(?:non-zero )?(?:status|code) (\d+)", re.I)
_NCCL = lazy_re.compile(r"NCCL (?:error|WARN .*timeout)|ProcessGroupNCCL.*Timeout", re.I)


def likely_cause(code: int | None, message: str, lines: Sequence[str]) -> Cause | None:
    """What most probably made the job fail; None when nothing points anywhere."""
    logs = list(lines)

    def in_logs(pattern: re.Pattern[str]) -> str | None:
        return next((line for line in reversed(logs) if pattern.search(line)), None)

    found = in_logs(_GPU_OOM)
    if found:
        return Cause("GPU out of memory", "reduce the per-device batch size, enable gradient "
                     "checkpointing or mixed precision, or use a machine with more GPU "
                     "memory", found)
    if _QUOTA.search(message) or code == _EXHAUSTED:
        return Cause("quota or capacity exhausted", "request more quota for the machine and "
                     "accelerator type in this region, try another region, or use a "
                     "reservation", message)
    if _PREEMPTED.search(message) or in_logs(_PREEMPTED):
        return Cause("spot capacity preempted", "resubmit (on-demand capacity, or spot with "
                     "a restart policy and checkpoints to resume from)",
                     message if _PREEMPTED.search(message) else in_logs(_PREEMPTED) or "")
    host = (_HOST_OOM.search(message) and message) or in_logs(_HOST_OOM)
    if host:
        return Cause("host out of memory (killed)", "the replica used more memory than its "
                     "machine has: a larger machine type, fewer data-loader workers or a "
                     "smaller prefetch", host)
    found = in_logs(_NCCL)
    if found:
        return Cause("NCCL communication failure", "check that every replica started and "
                     "the network between them; an earlier error on one rank often causes "
                     "the others' timeouts", found)
    if code == _DEADLINE or _DEADLINE_TEXT.search(message):
        return Cause("deadline exceeded", "the job ran past its timeout "
                     "(scheduling.timeout): raise it, or resume from a checkpoint", message)
    if code in (_PERMISSION, _UNAUTHENTICATED) or _PERMISSION_TEXT.search(message):
        return Cause("permission denied", "grant the job's service account the role it "
                     "needs (storage access for its buckets, Artifact Registry for its image)",
                     message)
    if code == _NOT_FOUND or _NOT_FOUND_TEXT.search(message):
        return Cause("something the job needs was not found", "check the container image, "
                     "the gs:// paths and the package the job names", message)
    exit_match = _EXIT.search(message)
    if exit_match:
        status = exit_match.group(1) or exit_match.group(2)
        last_error = next((line for line in reversed(logs)
                           if re.search(r"Error|Exception|Traceback", line)), "")
        return Cause(f"a worker exited with status {status}",
                     "the training code failed: read the traceback at the end of the "
                     "worker's log", last_error or message)
    return None

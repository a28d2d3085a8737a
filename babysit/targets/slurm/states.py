"""What Slurm's commands print about a job, read into plain values: `scontrol show job
-o` records, `sacct -P` rows, the job's states and what each means for the run."""

from __future__ import annotations

import re
from dataclasses import dataclass

from babysit import lazy_re
from babysit.model import AnomalyType, Severity, TerminalState
from babysit.redact import clip
from babysit.snapshot import ServiceAnomaly

# scontrol -o: `Key=value Key=value …` on one line. A key follows a space; values may
# hold `=` (TRES=cpu=1,mem=4G) and the odd `:` or `/` in a key (CPUs/Task, AllocNode:Sid).
_FIELD = lazy_re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=")

TERMINAL: dict[str, TerminalState] = {
    "COMPLETED": TerminalState.SUCCEEDED,
    "FAILED": TerminalState.FAILED,
    "NODE_FAIL": TerminalState.FAILED,
    "BOOT_FAIL": TerminalState.FAILED,
    "OUT_OF_MEMORY": TerminalState.FAILED,
    "TIMEOUT": TerminalState.TIMEOUT,
    "DEADLINE": TerminalState.TIMEOUT,
    "CANCELLED": TerminalState.CANCELLED,
    "REVOKED": TerminalState.CANCELLED,  # a federation sibling ran it instead
}
# Not running yet, or between attempts: the job is not stuck, the queue is.
WAITING = ("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
           "RESV_DEL_HOLD", "SUSPENDED", "STOPPED", "RESIZING", "PREEMPTED")
# Pending reasons that the job cannot get past as submitted: the queue will not move it.
NEVER_STARTS = {
    "PartitionConfig": "it asks for more than its partition allows (CPUs, memory, GPUs, "
                       "nodes)",
    "BadConstraints": "its constraints match no node",
    "PartitionNodeLimit": "it asks for more nodes than its partition allows",
    "PartitionTimeLimit": "its --time is longer than its partition allows",
    "InvalidQOS": "its QOS is not valid",
    "InvalidAccount": "its account is not valid",
    "DependencyNeverSatisfied": "a job it depends on ended in a way its dependency excludes",
    "JobHeldAdmin": "an administrator holds it",
}
# What the common pending reasons mean, for the status line.
PENDING_MEANS = {
    "Resources": "waiting for resources to free up",
    "Priority": "jobs of higher priority go first",
    "Dependency": "waiting for the jobs it depends on",
    "QOSMaxJobsPerUserLimit": "you already run as many jobs as your QOS allows",
    "QOSMaxJobsPerUser": "you already run as many jobs as your QOS allows",
    "AssocMaxJobsLimit": "your account already runs as many jobs as it may",
    "AssocGrpGRES": "your account's GPU share is in use",
    "ReqNodeNotAvail": "a node it needs is down, drained or reserved",
    "BeginTime": "its --begin time has not come",
    "JobHeldUser": "held by its user (scontrol release)",
    "Reservation": "waiting for its reservation",
    "None": "just submitted",
}


def parse_record(line: str) -> dict[str, str]:
    """One `scontrol show job -o` line as a dict (values stripped)."""
    found = list(_FIELD.finditer(line))
    fields: dict[str, str] = {}
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(line)
        fields[match.group(1)] = line[match.end():end].strip()
    return fields


def parse_records(text: str) -> list[dict[str, str]]:
    return [parse_record(line) for line in text.splitlines() if line.startswith("JobId=")]


def small_int(text: str, digits: int = 9) -> int | None:
    """`text` as an integer when it is 1 to `digits` ASCII digits, else None: Slurm's
    numbers are ASCII, and `str.isdigit` also accepts `²` and `٣`, which `int` refuses
    or reads as another number."""
    if 0 < len(text) <= digits and text.isascii() and text.isdecimal():
        return int(text)
    return None


def task_id(record: dict[str, str]) -> str:
    """`123_4` for an array task, else the job ID."""
    array, task = record.get("ArrayJobId"), record.get("ArrayTaskId", "")
    if array and small_int(task) is not None:
        return f"{array}_{task}"
    return record.get("JobId", "")


def pick(records: list[dict[str, str]], wanted: str) -> dict[str, str] | None:
    """The record of `wanted` (a job ID or `ARRAY_TASK`) among what scontrol printed."""
    for record in records:
        if ("_" in wanted and task_id(record) == wanted) or record.get("JobId") == wanted:
            return record
    return None


def array_tasks(records: list[dict[str, str]], wanted: str) -> list[str]:
    """The array tasks (`123_1`, …) scontrol printed for array job `wanted`."""
    found = [task_id(r) for r in records if r.get("ArrayJobId") == wanted
             and small_int(r.get("ArrayTaskId", "")) is not None]
    return sorted(found, key=lambda t: int(t.split("_")[1]))


def base_state(state: str) -> str:
    """`CANCELLED by 1000` -> `CANCELLED`; `RUNNING+` (sacct) -> `RUNNING`."""
    return state.split()[0].rstrip("+") if state.strip() else "UNKNOWN"


def cancelled_by(state: str) -> str | None:
    match = re.search(r"\bby ([0-9]{1,10})\b", state)
    return match.group(1) if match else None


@dataclass(frozen=True)
class AccountingRow:
    job_id: str
    state: str  # as sacct prints it: `CANCELLED by 1000`
    exit_code: str
    reason: str
    elapsed: str
    nodes: str
    tres: str


# JobIDRaw first: sacct prints an array task's JobID as `ARRAY_TASK` (`2280887_0`), so
# `--slurm` with the task's own (raw) ID, as scontrol and the job's environment give it,
# is found only by JobIDRaw (`2281126`).
SACCT_FORMAT = "JobIDRaw,JobID,State,ExitCode,Reason,Elapsed,NodeList,AllocTRES"


def parse_sacct(text: str, wanted: str) -> AccountingRow | None:
    """The job's own row of `sacct -n -P --format=SACCT_FORMAT` (not its steps'), by
    its raw ID or its JobID (`ARRAY_TASK`)."""
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) < 8 or wanted not in (parts[0], parts[1]):
            continue
        return AccountingRow(parts[1], *parts[2:8])
    return None


_DURATION = lazy_re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$", re.ASCII)


def slurm_seconds(text: str) -> float | None:
    """A duration as Slurm prints one (`[DAYS-]HH:MM:SS`, `MM:SS`); None for
    `UNLIMITED`, `Partition_Limit`, `INVALID` or anything else."""
    match = _DURATION.match(text.strip())
    if match is None:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def gpus(tres: str) -> str | None:
    """`4x a100` or `4` from TRES / TresPerNode (`gres/gpu:a100=4`, `gres:gpu:4`); an
    allocation lists `gres/gpu=4,gres/gpu:h100=4`, and the typed entry says more."""
    found = list(re.finditer(r"gres[/:]gpu(?::([\w.\-]+))?[=:]([0-9]{1,6})\b", tres))
    if not found:
        return None
    match = next((m for m in found if m.group(1) and not m.group(1).isdecimal()), found[0])
    kind, count = match.group(1), match.group(2)
    if kind and small_int(kind) is not None:  # `gres:gpu:4` read as kind 4 with no count
        kind, count = None, kind
    return f"{count}x {kind}" if kind else count


def job_failure(what: str, state: str, exit_code: str, reason: str, who: str | None,
                tail: str) -> ServiceAnomaly | None:
    """The anomaly an ended job raises, or None when it succeeded."""
    name = base_state(state)
    where = f" Last log line: {clip(tail, 300)}" if tail else ""
    code = f"ExitCode {exit_code}" if exit_code else "exit code unknown"
    why = f", Reason {reason}" if reason and reason != "None" else ""
    if name == "COMPLETED":
        return None
    if name == "OUT_OF_MEMORY":
        return ServiceAnomaly(AnomalyType.OOM, Severity.BLOCKER,
                              f"{what} ran out of memory: Slurm killed it (OUT_OF_MEMORY, "
                              f"{code}). Ask for more --mem / --mem-per-gpu or lower the batch "
                              f"size.{where}", key="slurm-oom")
    if name in ("TIMEOUT", "DEADLINE"):
        return ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.BLOCKER,
                              f"{what} ran past its time limit ({name}{why}); resume from its "
                              f"last checkpoint with a longer --time.{where}", key="slurm-timeout")
    if name in ("CANCELLED", "REVOKED"):
        by = f" by {who}" if who else ""
        return ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.HIGH,
                              f"{what} was cancelled{by} ({name}{why}).", key="slurm-cancelled")
    meaning = {"NODE_FAIL": "a node it ran on failed", "BOOT_FAIL": "its node failed to boot",
               "PREEMPTED": "it was preempted and not requeued"}.get(name, "it failed")
    return ServiceAnomaly(AnomalyType.JOB_FAILURE, Severity.BLOCKER,
                          f"{what} failed: {meaning} ({name}, {code}{why}).{where}",
                          key="slurm-failed")

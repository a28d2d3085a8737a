"""One job as `scontrol show job -o` describes it: its state, request and files, with
the %-patterns of its output paths filled, and Slurm's clock times read. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from babysit import lazy_re
from babysit.targets.slurm.states import base_state, small_int

_PATTERN = lazy_re.compile(r"%([0-9]*)([jJAaxuNns%])")
_MAX_PAD = 10  # sbatch(1): "the maximal number is 10": a wider pad is padded to 10


@dataclass(frozen=True)
class JobView:
    """What the controller (or accounting) said of the job at one poll."""

    state: str  # as Slurm prints it, `CANCELLED by 1000` included
    reason: str = ""
    exit_code: str = ""
    restarts: int = 0
    requeue: bool = True
    name: str = ""
    partition: str = ""
    user: str = ""
    nodes: str = ""
    tres: str = ""
    run_time: str = ""
    time_limit: str = ""
    submitted: str = ""
    stdout: str = ""
    stderr: str = ""
    source: str = "scontrol"

    @property
    def base(self) -> str:
        return base_state(self.state)


def view_of(record: dict[str, str]) -> JobView:
    """A `scontrol show job -o` record, with the %-patterns of its files resolved."""
    user = record.get("UserId", "").split("(")[0]
    # What was allocated: `AllocTRES=` since Slurm 23.02 (src/api/job_info.c prints
    # `ReqTRES=` then `AllocTRES=`), `TRES=` before; what was asked for otherwise.
    gres = record.get("AllocTRES", "") or record.get("TRES", "")
    if gres in ("", "(null)"):
        gres = record.get("ReqTRES", "")
    if "gpu" not in gres:
        gres = record.get("TresPerNode", "") or record.get("TresPerJob", "") or gres
    restarts = record.get("Restarts", "0")
    return JobView(
        state=record.get("JobState", "UNKNOWN"), reason=record.get("Reason", ""),
        exit_code=record.get("ExitCode", ""), restarts=small_int(restarts) or 0,
        requeue=record.get("Requeue", "1") != "0", name=record.get("JobName", ""),
        partition=record.get("Partition", ""), user=user,
        nodes=record.get("NodeList", "") if record.get("NodeList") != "(null)" else "",
        tres=gres, run_time=record.get("RunTime", ""), time_limit=record.get("TimeLimit", ""),
        submitted=record.get("SubmitTime", ""),
        stdout=resolve_path(record.get("StdOut", ""), record),
        stderr=resolve_path(record.get("StdErr", ""), record))


def resolve_path(path: str, record: dict[str, str]) -> str:
    """A StdOut/StdErr path with the %-patterns scontrol left in it filled (it fills
    most itself); relative paths start at the job's WorkDir."""
    if not path or path in ("(null)", "/dev/null"):
        return ""
    job = record.get("JobId", "")
    array = record.get("ArrayJobId", "") or job
    task = record.get("ArrayTaskId", "")
    first_node = (record.get("BatchHost") or record.get("NodeList", "")).split(",")[0]
    values = {"j": job, "J": job, "A": array,
              "a": task if small_int(task) is not None else "4294967294",
              "x": record.get("JobName", ""), "u": record.get("UserId", "").split("(")[0],
              "N": first_node, "n": "0", "s": "batch", "%": "%"}

    def fill(match: re.Match[str]) -> str:
        width, key = match.group(1), match.group(2)
        value = values[key]
        if not width or small_int(value, 20) is None:
            return value
        return value.zfill(min(_MAX_PAD, int(width)) if len(width) <= 2 else _MAX_PAD)

    path = _PATTERN.sub(fill, path) if "%" in path else path
    workdir = record.get("WorkDir", "")
    if not path.startswith("/") and workdir:
        path = f"{workdir.rstrip('/')}/{path}"
    return path


def slurm_time(text: str) -> datetime | None:
    """A clock time Slurm printed (`2026-12-01T10:00:00`, no zone): UTC, as the runners
    ask for it (`TZ=UTC`)."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)

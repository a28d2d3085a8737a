"""Where a task or rank ran, as the launchers' own lines say it.

Each shape is one a launcher or library prints (the source is named beside it); a line
says either which node a task (or set of tasks) ran on, or, in torchelastic's failure
summary, which global rank a local rank was and on which host.
"""

from __future__ import annotations

from dataclasses import dataclass

from babysit import lazy_re

# Slurm's srun, when a task ends badly (src/plugins/launch/slurm/launch_slurm.c,
# `_task_finish`: `error("%s: %s %s: Exited with exit code %d", hosts, task_str, tasks,
# rc)`, and `"%s: %s %s: %s%s"` with the signal's name): `srun: error: gpu-12: task 3:
# Exited with exit code 1`, `srun: error: gpu-12: tasks 0-3: Killed`. `hosts` is a
# host list; only a single host names the tasks' node.
_SRUN_TASKS = lazy_re.compile(
    r"^srun: error: ([A-Za-z0-9][\w.-]*): tasks? ([\d,\-]+): ")
# NCCL's debug lines (src/debug.cc: `"%s:%d:%d [%d] NCCL INFO "`, host, pid, thread,
# CUDA device): `gpu-12:4242:4300 [3] NCCL INFO Bootstrap : Using eth0`.
_NCCL = lazy_re.compile(r"^([A-Za-z0-9][\w.-]*):\d+:\d+ \[\d+\] NCCL ")
# Open MPI's signal handler (opal/util/stacktrace.c: `[%s:%05d] *** Process received
# signal ***`), and any `[host:pid]` prefix written the same way.
_HOST_PID = lazy_re.compile(r"^\[([A-Za-z][\w.-]*):\d+\] ")
# torchelastic's failure summary (torch/distributed/elastic/multiprocessing/errors,
# seen in a public OLMo log, tests/fixtures/logs/public/olmo_fork_…):
#   host      : ripe-sun-crunches-fin-03.datacrunch.io
#   rank      : 0 (local_rank: 0)
_ELASTIC_HOST = lazy_re.compile(r"^\s+host\s+: ([A-Za-z0-9][\w.-]*)\s*$")
_ELASTIC_RANK = lazy_re.compile(r"^\s+rank\s+: (\d+) \(local_rank: (\d+)\)\s*$")


@dataclass(frozen=True)
class Placed:
    """What one line said: the tasks (or the line's own unit, when `tasks` is empty) ran
    on `host`; `ranks` pairs a local rank with its global rank when the line says so."""

    host: str
    tasks: tuple[int, ...] = ()
    ranks: tuple[tuple[int, int], ...] = ()  # (local rank, global rank)


def task_list(text: str) -> tuple[int, ...]:
    """Slurm's compact task list: `3`, `0-3`, `0,2,5-6` (empty when it is not one)."""
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        if not low.isdecimal() or (high and not high.isdecimal()):
            return ()
        out.extend(range(int(low), int(high or low) + 1))
    return tuple(out[:4096])


class HostReader:
    """Reads the lines that say where a task or rank ran (see the shapes above)."""

    def __init__(self) -> None:
        self._elastic_host: str | None = None  # the summary entry being read

    def unlabelled(self, line: str) -> Placed | None:
        """A line no task label or rank prefix came with: srun's own messages."""
        if not line.startswith("srun: error: "):
            return None
        match = _SRUN_TASKS.match(line)
        if match is None:
            return None
        tasks = task_list(match.group(2))
        return Placed(match.group(1), tasks) if tasks else None

    def own(self, line: str) -> Placed | None:
        """A line of one task or rank that says where that task or rank runs."""
        head = line[:1]
        if head == "[":
            match = _HOST_PID.match(line)
            return Placed(match.group(1)) if match else None
        if head == " ":
            lead = line[:16]
            if "host" not in lead and "rank" not in lead:
                return None  # an indented line like any other (a traceback's, a table's)
            found = _ELASTIC_HOST.match(line)
            if found is not None:
                self._elastic_host = found.group(1)
                return None
            ranked = _ELASTIC_RANK.match(line) if self._elastic_host else None
            if ranked is not None:
                host, self._elastic_host = self._elastic_host or "", None
                return Placed(host, ranks=((int(ranked.group(2)), int(ranked.group(1))),))
            return None
        if " NCCL " in line:
            match = _NCCL.match(line)
            return Placed(match.group(1)) if match else None
        return None

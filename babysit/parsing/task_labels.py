"""Who printed a line of a multi-process log, and where it ran.

Slurm's `srun -l` (`--label`) prefixes each task's output with its task number,
right-aligned to the widest one: `3: step 100 loss …`, ` 0: …`, `12: …`.

A bare number and a colon also starts lines no launcher wrote (a loop printing
`{step}: loss …`, a terminal capture that wrapped `aux_loss_0: 0.31` after its `_`), so
a label is taken for a task only once the log shows it is one: most of its lines are
labelled, and the labels went back down (`3:` then `0:`: several tasks interleaved,
which a counter never does) or only `0:` was seen (a single task). Until then the line
is read as it stands, as before.

torchrun prefixes each worker's lines with `[${role_name}${local_rank}]:` by default
(`[default3]:`: the LOCAL rank on its node; torch/distributed/elastic/agent/server/
local_elastic_agent.py documents the template and its `${rank}` for the global one). Run
under `srun -l` with one torchrun per node (torchtitan's multinode_trainer.slurm, `srun
torchrun --nnodes 4 --nproc_per_node 8 --rdzv_backend c10d …`), a line reads
`1: [default3]:…`: local rank 3 of task 1, whose global rank the rendezvous chose and
the log does not say (until torchelastic's failure summary pairs them). `[rankN]:` is
read as the global rank N, unless the same N shows under two tasks (torchtitan's
`--role rank` gives `[rank0]:` on every node: a local rank again).

A rank's records carry a key (`Record.rank`) and, in `Record.source`, where it ran (the
node, from srun's, NCCL's, Open MPI's or torchelastic's own lines: see `rank_hosts`). A
local rank of a task has a key of its own above `NESTED` (see `nested_key`); naming it
takes its source alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.rank_hosts import HostReader, Placed
from babysit.parsing.text import split_rank

_LABEL = lazy_re.compile(r" {0,4}(\d{1,4}): ")
_TORCHRUN = lazy_re.compile(r"\[(rank|default)(\d{1,5})\]:\s?")
# torchelastic's agent naming the worker that failed first
# (torch/distributed/elastic/multiprocessing/api.py: `"failed (exitcode: %s) local_rank:
# %s (pid: %s) of binary: %s"`, as public logs in tests/fixtures/logs/public print it).
_AGENT_FAILED = lazy_re.compile(r"failed \(exitcode: -?\d+\) local_rank: (\d+) \(pid: ")
_REACH = 10  # the longest label: four spaces, four digits and `: `
_LEAST = 3  # labelled lines before the labels can count
_SHARE = 0.5  # of the lines: srun labels every line its tasks print

NESTED = 1 << 24  # keys of a task's local ranks start here
_WIDTH = 1 << 12  # local ranks per task a key leaves room for


def nested_key(task: int, local: int) -> int:
    """The key of local rank `local` of srun task `task`: unique, and ordered as the
    tasks then the local ranks are (task 0's local rank 0 is the lowest: it speaks for
    the run)."""
    return NESTED + task * _WIDTH + local


def is_nested(key: int) -> bool:
    return key >= NESTED


def _non_finite(metrics: Mapping[str, float]) -> bool:
    total = sum(metrics.values()) if metrics else 0.0
    return total != total or total in (math.inf, -math.inf)


class TaskLabels:
    """Reads who printed each line of one log (srun's labels, torchrun's prefixes, both
    at once) and where they ran."""

    def __init__(self) -> None:
        self._highest: int | None = None
        self._lines = 0
        self._labelled = 0
        self._went_back = False
        self._confirmed = False
        self._hosts = HostReader()
        self._where: dict[int, str] = {}  # task (or rank, without srun) -> host
        self._global: dict[tuple[int, int], int] = {}  # (task, local) -> global rank
        self._rank_tasks: dict[int, set[int]] = {}  # [rankN] -> the tasks it showed under
        self._global_style: set[int] = set()  # keys of `[rankN]:` workers (else [defaultN])
        self._named: dict[int, str] = {}  # key -> the source its records last carried
        self._news: list[int] = []  # units (tasks, ranks) whose place became known
        self._due: list[int] = []  # keys to announce their new place, one a line
        self._notable: set[int] = set()  # keys whose records had events or non-finite values
        self._workers = False  # torchrun's workers print under the tasks' labels
        self._local_prefix = False  # one torchrun's `[defaultN]:` lines, no srun labels

    def split(self, line: str) -> tuple[int | None, str]:
        """The key of who printed the line and the line without its prefixes, or (None,
        line) when it has none (or the log has not shown its labels to be tasks yet)."""
        self._lines += 1
        rank, rest = split_rank(line)
        if rank is not None:
            self._place(rank, self._hosts.own(rest), None)
            self._local_prefix = self._local_prefix or line.lstrip().startswith("[default")
            return rank, rest
        label, rest = self._label(line)
        if label is None:
            if self._local_prefix and "local_rank: " in line:
                failed = _AGENT_FAILED.search(line)  # one torchrun: its local ranks are ranks
                if failed is not None:
                    return int(failed.group(1)), line
            if line.startswith(("srun: ", "  ")):
                self._place(None, self._hosts.unlabelled(line) or self._hosts.own(line),
                            None)
            return None, line
        if rest[:1] != "[":
            self._place(label, self._hosts.own(rest), label)
            if not self._workers:
                return label, rest
            # A task's own line in a log of torchrun workers is its agent's: the run's,
            # unless it says which of its workers failed.
            failed = _AGENT_FAILED.search(rest) if "local_rank: " in rest else None
            if failed is not None and not self._rank_tasks:
                return nested_key(label, int(failed.group(1))), rest
            return None, rest
        match = _TORCHRUN.match(rest)
        if match is None:
            self._place(label, self._hosts.own(rest), label)
            return label, rest
        number, rest = int(match.group(2)), rest[match.end():]
        self._workers = True
        key = nested_key(label, number)
        if match.group(1) == "rank":
            # Keyed by task and number all the same: whether N is global is known only
            # once every task has printed (a second task's `[rank0]:` says it is local),
            # and a worker must keep one key meanwhile. Its name says which it is.
            tasks = self._rank_tasks.setdefault(number, set())
            if label not in tasks:
                tasks.add(label)
                if len(tasks) == 2:
                    self._news.append(min(tasks))  # its name changes: "local rank N"
            self._global_style.add(key)
        self._place(key, self._hosts.own(rest), label)
        return key, rest

    def _label(self, line: str) -> tuple[int | None, str]:
        if not line or not (line[0].isdecimal() or line[0] == " ") or ": " not in line[:_REACH]:
            return None, line
        match = _LABEL.match(line)
        if match is None:
            return None, line
        label = int(match.group(1))
        self._labelled += 1
        if not self._confirmed:
            if self._highest is not None and label < self._highest:
                self._went_back = True
            self._highest = label if self._highest is None else max(self._highest, label)
            self._confirmed = (self._labelled >= _LEAST
                               and self._labelled >= _SHARE * self._lines
                               and (self._went_back or self._highest == 0))
            if not self._confirmed:
                return None, line
        return label, line[match.end():]

    def _place(self, key: int | None, placed: Placed | None, task: int | None) -> None:
        """Note where a task or rank ran. `key` is the line's own key, `task` its srun
        task (None without srun labels)."""
        if placed is None:
            return
        units: tuple[int, ...]
        if placed.tasks:
            units = placed.tasks  # srun naming tasks: the unit is the task
        elif task is not None:
            units = (task,)
        elif placed.ranks:  # torchelastic's summary without srun: global = the key
            units = tuple(g for _, g in placed.ranks)
        elif key is not None:
            units = (key,)
        else:
            return
        for unit in units:
            if placed.host and self._where.get(unit) != placed.host:
                self._where[unit] = placed.host
                self._news.append(unit)
        if task is not None:
            for local, global_rank in placed.ranks:
                if self._global.get((task, local)) != global_rank:
                    self._global[(task, local)] = global_rank
                    self._news.append(task)

    def source_of(self, key: int) -> str:
        """Where the records of `key` came from, as a finding names it ("" unknown)."""
        if is_nested(key):
            task, local = divmod(key - NESTED, _WIDTH)
            host = self._where.get(task)
            global_rank = self._global.get((task, local))
            said = f"local rank {local} of task {task}"
            if key in self._global_style and len(self._rank_tasks.get(local, ())) == 1:
                return f"rank {local} (task {task}" + (f", node {host})" if host else ")")
            if global_rank is not None:
                said = f"rank {global_rank} ({said}"
                return said + (f", node {host})" if host else ")")
            return said + (f" on node {host}" if host else "")
        host = self._where.get(key)
        return f"node {host}" if host else ""

    def place(self, record: Record | None) -> Record | None:
        """The record with where its rank ran; for a line that made none, a record that
        only says where a rank ran, when that became known (so a finding already made
        on it can name the node)."""
        if record is None:
            if not self._news and not self._due:
                return None
            return self._announce()
        if record.rank is None and (self._news or self._due):
            # The line that said where a task ran said something else too (srun's
            # `task 2: Exited with exit code 1`, a failure): it is that task's.
            announced = self._announce()
            if announced is not None:
                return replace(record, rank=announced.rank, source=announced.source)
            return record
        if record.rank is None or record.source:
            return record
        if record.events or _non_finite(record.metrics):
            self._notable.add(record.rank)  # a finding may name it: announced first
        source = self.source_of(record.rank)
        if not source:
            if record.rank not in self._named:
                self._named[record.rank] = ""  # to announce, once its place is known
            return record
        self._named[record.rank] = source
        return replace(record, source=source)

    def _announce(self) -> Record | None:
        """One rank whose place changed since its records were named (one a line: the
        lines that say where tasks ran are seldom many in a row)."""
        units, self._news = set(self._news), []
        for key in sorted(self._named, key=lambda k: (k not in self._notable, k)):
            if self._unit(key) in units and key not in self._due:
                self._due.append(key)
        while self._due:
            key = self._due.pop(0)
            source = self.source_of(key)
            if source != self._named[key]:
                self._named[key] = source
                return Record(rank=key, source=source)
        return None

    def _unit(self, key: int) -> int:
        """The task (or, without srun labels, the rank) whose place a key shares."""
        return (key - NESTED) // _WIDTH if is_nested(key) else key

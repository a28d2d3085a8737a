"""The training process on the remote host: alive or not, its tree, its GPUs.

Everything goes over the session's one SSH connection, one `ps` per poll (the whole
process table, parsed here) and nvidia-smi through the same channel. PIDs are
checked against the start time seen first, so a recycled PID is not taken for the
run. babysit never acts on remote processes: the fix policy is for local runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from babysit.redact import redact_argv, scrub
from babysit.remote.connection import SshCommandTimeout, SshConnection, SshError
from babysit.snapshot import ProcessView
from babysit.telemetry.gpu import GpuQueryError
from babysit.telemetry.processes import is_babysit_command


class RemoteProcessError(Exception):
    """The process cannot be found (or pinned down) on the remote host."""


@dataclass(frozen=True)
class _Row:
    pid: int
    ppid: int
    stat: str
    cpu: float
    elapsed: int
    args: str


_PS = ["ps", "-eo", "pid=,ppid=,stat=,times=,etimes=,args="]


def _table(connection: SshConnection) -> dict[int, _Row]:
    status, out, err = connection.run(_PS, timeout=20)
    if status != 0:
        raise RemoteProcessError(f"`ps` failed on {connection.where}: "
                                 f"{err.decode(errors='replace').strip()}")
    rows: dict[int, _Row] = {}
    for line in out.decode(errors="replace").splitlines():
        parts = line.split(None, 5)
        if len(parts) < 5:
            continue
        try:
            row = _Row(int(parts[0]), int(parts[1]), parts[2], float(parts[3]), int(parts[4]),
                       parts[5] if len(parts) > 5 else "")
        except ValueError:
            continue
        rows[row.pid] = row
    return rows


def find_remote(connection: SshConnection, name: str) -> list[tuple[int, str]]:
    """(pid, command) of remote processes whose command line contains `name` (a fixed
    string, matched here, never handed to a remote shell), launchers only."""
    rows = _table(connection)
    # babysit itself is left out by its program name, as the local finder does: an
    # interpreter under a venv with "babysit" in its path may well be the run.
    matches = {pid for pid, row in rows.items()
               if name in row.args and not is_babysit_command(row.args.split())
               and not row.args.startswith("ps -eo")}
    roots = [pid for pid in matches if rows[pid].ppid not in matches]
    return [(pid, scrub(" ".join(redact_argv(rows[pid].args.split())))) for pid in sorted(roots)]


class RemoteProcess:
    def __init__(self, connection: SshConnection, pid: int) -> None:
        self.connection = connection
        self.pid = pid
        rows = _table(connection)
        if pid not in rows:
            raise RemoteProcessError(f"no process with PID {pid} on {connection.where}")
        row = rows[pid]
        self._started = connection.now() - row.elapsed
        self.command = scrub(" ".join(redact_argv(row.args.split())))
        self._descendants: set[int] = set()

    def run(self, argv: Sequence[str], timeout: float) -> str:
        """nvidia-smi (or any query) on the remote host, as GpuProbe expects."""
        try:
            status, out, err = self.connection.run(argv, timeout=timeout)
        except SshCommandTimeout as error:
            raise GpuQueryError(f"{argv[0]} timed out after {timeout:g}s on the remote "
                                f"host") from error
        except SshError as error:
            raise GpuQueryError(str(error)) from error
        if status == 127:
            raise GpuQueryError(f"no {argv[0]} on the remote host")
        if status != 0:
            text = (out or err).decode(errors="replace").strip().splitlines()
            raise GpuQueryError(f"{argv[0]} failed on the remote host (exit {status}): "
                                f"{text[0] if text else ''}")
        return out.decode(errors="replace")

    def view(self) -> ProcessView:
        rows = _table(self.connection)
        row = rows.get(self.pid)
        same = row is not None and abs((self.connection.now() - row.elapsed) - self._started) < 5
        alive = bool(same and row is not None and not row.stat.startswith("Z"))
        if alive:
            children = {pid for pid, r in rows.items() if r.ppid == self.pid}
            frontier = set(children)
            while frontier:
                frontier = {pid for pid, r in rows.items() if r.ppid in frontier} - children
                children |= frontier
            self._descendants |= children
        tree = [self.pid] if alive else []
        tree += [pid for pid in self._descendants if pid in rows]
        cpu = sum(rows[pid].cpu for pid in tree if pid in rows) if tree else None
        return ProcessView(pid=self.pid, alive=alive,
                           status=("gone" if not same else (row.stat if row else "gone")),
                           command=self.command, tree=tuple(tree), cpu_seconds=cpu)

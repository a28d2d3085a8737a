"""The run's processes, as the OS shows them (psutil, /proc, pidfd).

Identity is a (pid, create time) pair so that a recycled PID is never mistaken for
the run; where the kernel offers a pidfd, liveness is read from it, which cannot race
with PID reuse at all. Everything here observes; acting on processes is in
`targets/process.py` and only on the fix policy's say."""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import psutil

from babysit import lazy_re
from babysit.model import ExitInfo
from babysit.redact import redacted_command
from babysit.telemetry.writers import writes


class ProcessGone(Exception):
    """The process does not exist (or is no longer the one we started watching)."""


@dataclass(frozen=True)
class Identity:
    pid: int
    create_time: float

    def process(self) -> psutil.Process | None:
        """The live process with this identity, or None if it is gone (or the PID now
        belongs to someone else)."""
        try:
            proc = psutil.Process(self.pid)
            if abs(proc.create_time() - self.create_time) > 0.01:
                return None
            return proc
        except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
            return None


@dataclass(frozen=True)
class LaunchSpec:
    """How to start the run again: captured from the live process or given by the user.
    `env` is kept in memory only; it is never printed or stored."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    origin: str  # "--restart-cmd" or "captured from PID N"

    def describe(self) -> str:
        return f"{redacted_command(self.argv)}  (cwd {self.cwd}; {self.origin})"


def identity_of(pid: int) -> Identity:
    try:
        return Identity(pid, psutil.Process(pid).create_time())
    except psutil.NoSuchProcess as error:
        raise ProcessGone(f"no process with PID {pid}") from error
    except psutil.AccessDenied as error:
        raise ProcessGone(f"PID {pid} exists but cannot be inspected "
                          f"(permission denied)") from error


class WatchedProcess:
    """One run's main process and every descendant it has had."""

    def __init__(self, identity: Identity, popen: subprocess.Popen[bytes] | None = None) -> None:
        self.identity = identity
        self._popen = popen
        self._pidfd = _open_pidfd(identity.pid)
        self._descendants: dict[int, Identity] = {}
        self._last_status = "running"
        self._exit: ExitInfo | None = None
        self._cpu_seen: dict[int, float] = {}
        self.command = "?"
        proc = identity.process()
        if proc is not None:
            with contextlib.suppress(psutil.Error):
                self.command = redacted_command(proc.cmdline()) or proc.name()
        self.refresh()

    @property
    def pid(self) -> int:
        return self.identity.pid

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    # --- observation --------------------------------------------------------------

    def refresh(self) -> None:
        """Learn about new descendants; remember the status while it can be read."""
        proc = self.identity.process()
        if proc is None:
            return
        try:
            self._last_status = proc.status()
            for child in proc.children(recursive=True):
                if child.pid not in self._descendants:
                    with contextlib.suppress(psutil.Error):
                        self._descendants[child.pid] = Identity(child.pid, child.create_time())
        except psutil.Error:
            pass

    def alive(self) -> bool:
        """True while the main process runs (a zombie has exited: not alive)."""
        if self._popen is not None:
            return self._popen.poll() is None
        if self._pidfd is not None:
            exited = select.select([self._pidfd], [], [], 0)[0]
            if exited:
                return False
        proc = self.identity.process()
        if proc is None:
            return False
        try:
            return proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def status(self) -> str:
        proc = self.identity.process()
        if proc is not None:
            with contextlib.suppress(psutil.Error):
                self._last_status = proc.status()
                return self._last_status
        return "gone"

    def exit_info(self) -> ExitInfo:
        """How it ended, when the OS lets us see it: our own child's return code, or the
        exit status a zombie still carries in /proc. Otherwise unknown."""
        if self._exit is not None:
            return self._exit
        if self._popen is not None:
            code = self._popen.poll()
            if code is not None:
                self._exit = (ExitInfo(None, -code, "own child") if code < 0
                              else ExitInfo(code, None, "own child"))
                return self._exit
        zombie = _zombie_exit_status(self.identity)
        if zombie is not None:
            self._exit = zombie
            return zombie
        return ExitInfo(None, None, "unknown")

    def tree(self) -> list[int]:
        """The main process (if alive) and the descendants still alive."""
        pids = [self.pid] if self.identity.process() is not None else []
        pids += [i.pid for i in self._descendants.values() if i.process() is not None]
        return pids

    def leftovers(self) -> list[Identity]:
        """Descendants still alive although the main process is gone."""
        return [i for i in self._descendants.values() if i.process() is not None]

    def adopt(self, identities: Iterable[Identity]) -> None:
        """Count these processes as the run's own from now on (a launcher's workers
        that were re-parented before babysit saw them)."""
        for ident in identities:
            if ident.pid != self.pid:
                self._descendants.setdefault(ident.pid, ident)

    def successors(self, log_path: str | None) -> list[Identity]:
        """Processes that carry the run on after the main process is gone: its
        descendants still running, and any other process writing the run's log (a
        launcher that double-forked its workers, `nohup … &`)."""
        found = {i.pid: i for i in self._descendants.values() if _running(i)}
        if log_path is not None:
            for ident in log_writers(log_path):
                if ident.pid != self.pid:
                    found.setdefault(ident.pid, ident)
        return list(found.values())

    def cpu_seconds(self) -> float | None:
        """User+system CPU time of the whole tree; descendants that exited keep the
        last value seen, so the sum never goes backwards."""
        for ident in [self.identity, *self._descendants.values()]:
            proc = ident.process()
            if proc is None:
                continue
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                self._cpu_seen[ident.pid] = times.user + times.system
        return sum(self._cpu_seen.values()) if self._cpu_seen else None

    def launch_spec(self) -> LaunchSpec | None:
        """The command line, working directory and environment, while it is alive."""
        proc = self.identity.process()
        if proc is None:
            return None
        try:
            argv = tuple(proc.cmdline())
            cwd = proc.cwd()
            env = dict(proc.environ())
        except psutil.Error:
            return None
        if not argv:
            return None
        return LaunchSpec(argv, cwd, env, f"captured from PID {self.pid}")

    def terminate_tree(self, grace: float = 10.0) -> list[int]:
        """SIGTERM the main process and its descendants, SIGKILL what is left after
        `grace` seconds. Only processes whose identity still matches are touched.
        Returns the PIDs signalled."""
        return terminate([self.identity, *self._descendants.values()], grace)


def _running(identity: Identity) -> bool:
    proc = identity.process()
    return proc is not None and _still_running(proc)


def log_writers(path: str) -> list[Identity]:
    """Processes other than babysit (and its children) that hold `path` open for
    writing, found through /proc/<pid>/fd and the open flags in fdinfo."""
    try:
        wanted = os.stat(path)
    except OSError:
        return []
    own = {os.getpid()}
    with contextlib.suppress(psutil.Error):
        own.update(c.pid for c in psutil.Process().children(recursive=True))
    found: list[Identity] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdecimal() or int(entry.name) in own:
            continue
        if writes(int(entry.name), wanted):
            with contextlib.suppress(ProcessGone):
                found.append(identity_of(int(entry.name)))
    return found


def terminate(identities: Iterable[Identity], grace: float = 10.0) -> list[int]:
    procs = [p for p in (i.process() for i in identities) if p is not None]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    alive = _wait_gone(procs, grace)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    _wait_gone(alive, grace)
    return [p.pid for p in procs]


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until the processes have exited; a zombie has exited (its parent, not
    babysit, reaps it). Returns those still running after `timeout`."""
    deadline = time.monotonic() + timeout
    running = procs
    while running:
        running = [p for p in running if _still_running(p)]
        if not running or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    return running


def _still_running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _open_pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
        return fd
    except OSError:
        return None


def _zombie_exit_status(identity: Identity) -> ExitInfo | None:
    """A zombie's wait status is field 52 of /proc/<pid>/stat (Linux ≥ 3.5)."""
    proc = identity.process()
    if proc is None:
        return None
    try:
        if proc.status() != psutil.STATUS_ZOMBIE:
            return None
        with open(f"/proc/{identity.pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        status = int(fields[49])  # field 52 counted from 1, after pid and comm
    except (OSError, IndexError, ValueError, psutil.Error):
        return None
    if os.WIFSIGNALED(status):
        return ExitInfo(None, os.WTERMSIG(status), "zombie")
    return ExitInfo(os.WEXITSTATUS(status), None, "zombie")


# --- finding the run ------------------------------------------------------------------

def is_babysit_command(cmdline: Sequence[str]) -> bool:
    """Whether this command line runs babysit itself: the program's own name says so
    (`babysit`, `/venv/bin/python /venv/bin/babysit …`, `python -m babysit`). Only the
    program is looked at, never the folder it lives in: a venv or conda env with
    "babysit" in its path runs training scripts too."""
    if not cmdline:
        return False
    program = os.path.basename(cmdline[0])
    if "babysit" in program:
        return True
    if not program.startswith("python"):
        return False
    # A console script runs as `<interpreter> <script>`: the script is the program.
    rest = list(cmdline[1:3])
    return (rest[:2] == ["-m", "babysit"] or rest[:1] == ["-mbabysit"]
            or (bool(rest) and os.path.basename(rest[0]) == "babysit"))


def find_processes(name: str) -> list[psutil.Process]:
    """pgrep-style: processes whose name is `name` or whose command line contains it,
    leaving out babysit itself, its ancestors, and other babysit processes."""
    own = {os.getpid()}
    with contextlib.suppress(psutil.Error):
        own.update(p.pid for p in psutil.Process().parents())
    found: list[psutil.Process] = []
    for proc in psutil.process_iter(["pid", "name", "cmdline"]):
        info = proc.info
        if info["pid"] in own:
            continue
        cmdline = info.get("cmdline") or []
        if is_babysit_command(cmdline):
            continue
        if info.get("name") == name or name in " ".join(cmdline):
            found.append(proc)
    return found


def topmost(procs: list[psutil.Process]) -> list[psutil.Process]:
    """Of matching processes, those with no matching ancestor: a launcher and its
    workers (torchrun and its ranks) count as one run."""
    pids = {p.pid for p in procs}
    roots = []
    for proc in procs:
        try:
            ancestors = {a.pid for a in proc.parents()}
        except psutil.Error:
            ancestors = set()
        if not ancestors & pids:
            roots.append(proc)
    return roots


@dataclass(frozen=True)
class LogChoice:
    path: str
    reason: str


_LOG_NAME = lazy_re.compile(r"\.(?:log|out|err|txt)$|(?:^|/)logs?/", re.IGNORECASE)


def find_log(identity: Identity, descendants: Iterable[Identity] = (),
             trains: Callable[[str], bool] | None = None) -> LogChoice | None:
    """The file the run writes its output to, and why it was chosen, from the candidates
    of `log_candidates` in their order — except that where the first shows no training
    (`trains`, given by the caller that can read logs) and a later one does, the later
    one is the run's log: `nohup python train.py > console.out 2>&1 &` for a script that
    writes its metrics to `logs/train.log` itself, the console holding only a banner."""
    candidates = log_candidates(identity, descendants)
    if not candidates:
        return None
    first = candidates[0]
    if trains is None or len(candidates) == 1 or trains(first.path):
        return first
    for other in candidates[1:]:
        if trains(other.path):
            return LogChoice(other.path, f"{other.reason}; {first.path}, {first.reason}, "
                                         f"shows no training")
    return first


def log_candidates(identity: Identity, descendants: Iterable[Identity] = ()) -> list[LogChoice]:
    """The files the run may write its output to, most likely first:

    1. the main process's stdout, then stderr, when redirected to a regular file;
    2. when stdout is a pipe, the regular files written by the process reading that pipe
       (`python train.py | tee train.log`) — never that reader's own stdout and stderr
       (a `tee` in a shell whose stderr is a capture file writes train.log, not that);
    3. log-like files (`*.log`, `*.out`, `logs/…`) open for writing by the process or
       its descendants, the most recently modified first."""
    pid = identity.pid
    found: list[LogChoice] = []

    def add(path: str, reason: str) -> None:
        if all(choice.path != path for choice in found):
            found.append(LogChoice(path, reason))

    for fd, stream in ((1, "stdout"), (2, "stderr")):
        target = _fd_target(pid, fd)
        if target and _regular_file(target):
            add(target, f"the {stream} of PID {pid} is redirected to it")
    pipe = _fd_target(pid, 1)
    if pipe and pipe.startswith("pipe:"):
        reader = _pipe_reader(pipe, exclude=pid)
        if reader is not None:
            own = {_fd_target(reader.pid, 1), _fd_target(reader.pid, 2)}
            for path in _files_open_for_writing(reader.pid):
                if path not in own:
                    add(path, f"PID {pid} pipes its output to {reader.name()} (PID "
                              f"{reader.pid}), which writes it")
    candidates: list[tuple[float, str, int]] = []
    for ident in [identity, *descendants]:
        for path in _files_open_for_writing(ident.pid):
            if _LOG_NAME.search(path):
                with contextlib.suppress(OSError):
                    candidates.append((os.stat(path).st_mtime, path, ident.pid))
    for _, path, owner in sorted(candidates, reverse=True):
        add(path, f"PID {owner} has it open for writing (a log-like file of the run)")
    return found


def _fd_target(pid: int, fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None


def _regular_file(path: str) -> bool:
    return path.startswith("/") and not path.endswith(" (deleted)") and os.path.isfile(path) \
        and not path.startswith("/dev/")


def _pipe_reader(pipe: str, exclude: int) -> psutil.Process | None:
    for proc in psutil.process_iter(["pid"]):
        if proc.pid == exclude:
            continue
        if _fd_target(proc.pid, 0) == pipe:
            return proc
    return None


def _files_open_for_writing(pid: int) -> list[str]:
    try:
        files = psutil.Process(pid).open_files()
    except psutil.Error:
        return []
    written = [f.path for f in files
               if getattr(f, "mode", "r") in ("w", "a", "r+", "a+", "w+") and _regular_file(f.path)]
    return written


# --- kernel evidence --------------------------------------------------------------------

_OOM_KILL = lazy_re.compile(r"(?:Out of memory|Memory cgroup out of memory): Killed process (\d+)|"
                            r"oom-kill:.*\bpid=(\d+)")


def kernel_oom_killed(pid: int, run: Callable[[list[str]], str] | None = None) -> bool | None:
    """Whether the kernel log says its OOM killer killed `pid`: True / False when the
    log can be read, None when it cannot (no permission, containers)."""
    reader = run or _read_kernel_log
    try:
        text = reader(["dmesg"])
    except (OSError, subprocess.SubprocessError):
        return None
    if not text.strip():
        return None
    return any(int(m.group(1) or m.group(2)) == pid for m in _OOM_KILL.finditer(text))


def _read_kernel_log(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=5, check=True)
    return done.stdout


def describe_process(proc: psutil.Process) -> str:
    """One line for a person choosing between processes: PID, user, age, command."""
    try:
        with proc.oneshot():
            user = proc.username()
            started = proc.create_time()
            command = redacted_command(proc.cmdline()) or proc.name()
    except psutil.Error:
        return f"PID {proc.pid} (gone)"
    age = int(time.time() - started)
    return f"PID {proc.pid}  {user}  up {age // 3600}h{age % 3600 // 60:02d}m  {command}"

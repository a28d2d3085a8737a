"""A training process on this machine (`--pid N`, `--proc NAME`), with its log.

The kinds themselves are in the package (`targets.process`), which imports this module
only when a process is watched.

Composed from the parts every process-like target shares: the log (found from the
process when not given), a liveness probe that also knows how the process ended, and
the GPUs where its processes hold memory. It is the only target babysit can act on,
and only through the methods the fix policy calls: `restart`, `free_leftovers`,
`cancel`. A remote log with `--pid`/`--proc` is the same composition over SSH
(`process.remote`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Sequence

from babysit.model import ExitInfo
from babysit.parsing.evaluation import trains
from babysit.parsing.parser import LogParser
from babysit.snapshot import ProcessView
from babysit.targets.base import Target, TargetError
from babysit.targets.common.composed import WatchedRun
from babysit.targets.common.log_file import LocalLogTarget
from babysit.telemetry.gpu import GpuProbe, RunGpuSource
from babysit.telemetry.processes import (
    Identity,
    LaunchSpec,
    LogChoice,
    ProcessGone,
    WatchedProcess,
    find_log,
    identity_of,
    kernel_oom_killed,
    terminate,
)

# How long a launcher's workers may leave the log still before babysit stops taking
# them for the run going on (and the launcher's own exit decides).
FOLLOW_GRACE_SECONDS = 20.0


class FixError(Exception):
    """A fix was attempted and did not work (the command could not start...)."""


class LocalProcessProbe:
    """Liveness, tree, CPU time and exit status of the run's process on this machine.

    When the main process exits cleanly (or unseen) while other processes carry the
    run on — its workers after a double fork, a `nohup … &` it started — the probe
    follows them for as long as the log keeps moving."""

    def __init__(self, process: WatchedProcess, log_path: str | None,
                 kernel_log: Callable[[list[str]], str] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 follow_grace: float = FOLLOW_GRACE_SECONDS) -> None:
        self.process = process
        self.log_path = log_path
        self._kernel_log = kernel_log
        self._clock = clock
        self._follow_grace = follow_grace
        self._oom_checked: bool | None = None
        self._workers: list[Identity] | None = None  # followed after the main exited
        self._log_moved_at = 0.0
        self._followed_moved = False
        self.notices: list[str] = []

    @property
    def pid(self) -> int:
        return self.process.pid

    def replace(self, process: WatchedProcess) -> None:
        """Watch a new process from now on (a restart)."""
        old, self.process = self.process, process
        self._oom_checked = None
        self._workers = None
        old.close()

    def take_notices(self) -> list[str]:
        notices, self.notices = self.notices, []
        return notices

    def view(self, log_moved: bool = False) -> ProcessView:
        process = self.process
        process.refresh()
        now = self._clock()
        if log_moved:
            self._log_moved_at = now
        alive = process.alive()
        exit_info = None if alive else process.exit_info()
        if not alive and exit_info is not None:
            alive, exit_info = self._follow(exit_info, now, log_moved)
        if not alive and self._oom_checked is None and exit_info is not None \
                and exit_info.signal == 9:
            self._oom_checked = kernel_oom_killed(process.pid, self._kernel_log)
        return ProcessView(
            pid=process.pid,
            alive=alive,
            status=process.status() if self._workers is None else "launcher exited; "
                                                                  "following its workers",
            command=process.command,
            tree=tuple(process.tree()),
            cpu_seconds=process.cpu_seconds(),
            exit=exit_info,
            oom_killed=self._oom_checked,
        )

    def _follow(self, launcher: ExitInfo, now: float,
                log_moved: bool) -> tuple[bool, ExitInfo | None]:
        """Whether the run lives on in the main process's successors."""
        clean = launcher.signal is None and launcher.code in (0, None)
        if self._workers is None:
            if not clean:
                return False, launcher  # a crash; what is left over is leftovers
            workers = self.process.successors(self.log_path)
            if not workers:
                return False, launcher
            self._workers = workers
            self.process.adopt(workers)
            self._log_moved_at = now
            self.notices.append(
                f"PID {self.process.pid} {launcher.describe()}, but PIDs "
                f"{sorted(w.pid for w in workers)} carry the run on (its workers, or "
                f"processes writing its log): following them")
            return True, None
        if log_moved:
            self._followed_moved = True
        running = [w for w in self._workers if _running(w)]
        if running and now - self._log_moved_at <= self._follow_grace:
            return True, None
        if self._followed_moved:
            # The workers trained and are gone; how they ended is not visible.
            return False, ExitInfo(None, None, "unknown")
        self.notices.append(f"PIDs {sorted(w.pid for w in self._workers)} did not move the log "
                            f"for {self._follow_grace:g}s: the run ended with its launcher")
        return False, launcher

    def close(self) -> None:
        self.process.close()


def _running(identity: Identity) -> bool:
    proc = identity.process()
    if proc is None:
        return False
    try:
        return bool(proc.status() != "zombie")
    except Exception:  # gone between the two calls
        return False


_TAIL_BYTES = 64 * 1024  # enough for the run's latest records; a log may be huge


def shows_training(path: str) -> bool:
    """Whether the end of a file holds a training record (a step, or a training metric):
    what tells a run's log from its console when it writes both. Bounded: the last 64 KiB
    only, read once when the log is chosen."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - _TAIL_BYTES))
            text = handle.read(_TAIL_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    parser = LogParser()
    records = parser.feed_lines(text.splitlines()[1:] if len(text) >= _TAIL_BYTES
                                else text.splitlines())  # (the first may be cut)
    return any(r.step is not None or (r.metrics and trains(r.metrics))
               for r in [*records, *parser.finish()])


class ProcessTarget(WatchedRun):
    """`--pid N`: the process, its log and its GPUs, and the controls the fix policy
    may use."""

    def __init__(self, pid: int, *, name: str | None = None, log: str | None = None,
                 restart_cmd: Sequence[str] | None = None, gpu: GpuProbe | None = None,
                 kernel_log: Callable[[list[str]], str] | None = None,
                 target_type: str = "pid", follow_grace: float = FOLLOW_GRACE_SECONDS) -> None:
        try:
            identity = identity_of(pid)
        except ProcessGone as error:
            raise TargetError(str(error)) from error
        process = WatchedProcess(identity)
        notices = [f"process found: PID {pid} ({process.command}, in "
                   f"{_cwd(identity) or 'an unknown directory'})"]
        self.log_choice: LogChoice | None = (
            LogChoice(log, "given on the command line") if log is not None
            else find_log(identity, process.leftovers(), trains=shows_training))
        log_target: Target | None = None
        if self.log_choice is not None:
            log_target = LocalLogTarget(self.log_choice.path)
            notices.append(f"log: {self.log_choice.path} ({self.log_choice.reason})")
        else:
            notices.append("no log found (stdout is not a file and no log-like file is open "
                           "for writing): watching the process only; pass the log path to "
                           "see training metrics")
        self._probe = LocalProcessProbe(process, self.log_path, kernel_log,
                                        follow_grace=follow_grace)
        self._gpu = RunGpuSource(gpu if gpu is not None else GpuProbe())
        super().__init__(label=name if name is not None else str(pid),
                         target_type=target_type, log=log_target, probe=self._probe,
                         gpu=self._gpu, notices=notices)
        # Captured now, while the process lives: its command line, directory and
        # environment. A --restart-cmd replaces the command line only.
        captured = process.launch_spec()
        self.launch: LaunchSpec | None = captured
        if restart_cmd is not None:
            self.launch = LaunchSpec(
                tuple(restart_cmd),
                captured.cwd if captured else os.getcwd(),
                captured.env if captured else dict(os.environ),
                "--restart-cmd")

    @property
    def process(self) -> WatchedProcess:
        return self._probe.process

    @property
    def restart_known(self) -> bool:
        return self.launch is not None

    @property
    def control_pid(self) -> int:
        return self.process.pid

    @property
    def log_path(self) -> str | None:
        return self.log_choice.path if self.log_choice else None

    # --- what the fix policy may do ----------------------------------------------------

    def leftovers_holding_gpu(self) -> dict[int, float]:
        """The dead run's own leftover processes that still hold GPU memory (MiB)."""
        reading = self._gpu.last
        if self.process.alive() or reading is None:
            return {}
        mine = {ident.pid for ident in self.process.leftovers()}
        held: dict[int, float] = {}
        for proc in reading.processes:
            if proc.pid in mine:
                held[proc.pid] = held.get(proc.pid, 0.0) + (proc.used_mib or 0.0)
        return held

    def free_leftovers(self, pids: set[int]) -> list[int]:
        """Terminate the named leftovers, which must be the run's own descendants."""
        own: list[Identity] = [i for i in self.process.leftovers() if i.pid in pids]
        return terminate(own, grace=5.0)

    def restart(self) -> str:
        """Start the run again with the known command, output appended to its log,
        and watch the new process from now on."""
        if self.launch is None:
            raise FixError("no restart command is known")
        log_handle = None
        try:
            if self.log_path is not None:
                log_handle = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
            popen = subprocess.Popen(
                list(self.launch.argv), cwd=self.launch.cwd, env=dict(self.launch.env),
                stdin=subprocess.DEVNULL,
                stdout=log_handle if log_handle is not None else subprocess.DEVNULL,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        except OSError as error:
            raise FixError(f"could not start {self.launch.argv[0]}: "
                           f"{error.strerror or error}") from error
        finally:
            if log_handle is not None:
                log_handle.close()
        self._probe.replace(WatchedProcess(identity_of(popen.pid), popen))
        return f"restarted as PID {popen.pid}: {self.launch.describe()}"

    def stop_hung(self) -> list[int]:
        """Terminate the hung run (its whole tree) before a restart."""
        return self.process.terminate_tree()

    def cancel(self) -> list[int]:
        """Stop the run for good (only ever with the user's approval)."""
        return self.process.terminate_tree()


def _cwd(identity: Identity) -> str | None:
    proc = identity.process()
    if proc is None:
        return None
    with contextlib.suppress(Exception):
        return str(proc.cwd())
    return None

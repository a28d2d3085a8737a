"""A training process (`--pid N`, `--proc NAME`), with its log when one can be found.

The process says whether the run is alive and how it ended; the log says how training
is going. GPU telemetry covers the GPUs where the run's processes hold memory. This
target is also the only place that can act on the run, and only through the methods
the fix policy calls: `restart`, `free_leftovers`, `cancel`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable
from typing import ClassVar

from babysit.model import ProcessView, Snapshot
from babysit.procs import (
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
from babysit.targets.base import TargetError
from babysit.targets.local_log import LocalLogTarget
from babysit.telemetry.gpu import GpuProbe, GpuReading, for_run


class FixError(Exception):
    """A fix was attempted and did not work (the command could not start...)."""


class ProcessTarget:
    target_type: ClassVar[str] = "pid"

    def __init__(self, pid: int, *, name: str | None = None, log: str | None = None,
                 restart_cmd: list[str] | None = None, gpu: GpuProbe | None = None,
                 kernel_log: Callable[[list[str]], str] | None = None) -> None:
        try:
            identity = identity_of(pid)
        except ProcessGone as error:
            raise TargetError(str(error)) from error
        self._label = name if name is not None else str(pid)
        self._kernel_log = kernel_log
        self.process = WatchedProcess(identity)
        self._gpu = gpu if gpu is not None else GpuProbe()
        self._last_gpu: GpuReading | None = None
        self._oom_checked: bool | None = None
        self._notices: list[str] = [f"process found: PID {pid} ({self.process.command})"]
        self.log_choice: LogChoice | None = None
        if log is not None:
            self.log_choice = LogChoice(log, "given on the command line")
        else:
            self.log_choice = find_log(identity, self.process.leftovers())
        self._log = LocalLogTarget(self.log_choice.path) if self.log_choice else None
        if self.log_choice is not None:
            self._notices.append(f"log: {self.log_choice.path} ({self.log_choice.reason})")
        else:
            self._notices.append("no log found (stdout is not a file and no log-like file is "
                                 "open for writing): watching the process only; pass the log "
                                 "path to see training metrics")
        # Captured now, while the process lives: its command line, directory and
        # environment. A --restart-cmd replaces the command line only.
        captured = self.process.launch_spec()
        self.launch: LaunchSpec | None = captured
        if restart_cmd is not None:
            self.launch = LaunchSpec(
                tuple(restart_cmd),
                captured.cwd if captured else os.getcwd(),
                captured.env if captured else dict(os.environ),
                "--restart-cmd")

    @property
    def label(self) -> str:
        return self._label  # as given, even after a restart changed the PID

    @property
    def restart_known(self) -> bool:
        return self.launch is not None

    @property
    def control_pid(self) -> int:
        return self.process.pid

    @property
    def log_path(self) -> str | None:
        return self.log_choice.path if self.log_choice else None

    def poll(self, final: bool = False) -> Snapshot:
        log = self._log.poll(final) if self._log is not None else Snapshot()
        self.process.refresh()
        alive = self.process.alive()
        tree = self.process.tree()
        exit_info = None if alive else self.process.exit_info()
        if not alive and self._oom_checked is None and exit_info is not None \
                and exit_info.signal == 9:
            self._oom_checked = kernel_oom_killed(self.process.pid, self._kernel_log)
        view = ProcessView(
            pid=self.process.pid,
            alive=alive,
            status=self.process.status(),
            command=self.process.command,
            tree=tuple(tree),
            cpu_seconds=self.process.cpu_seconds(),
            exit=exit_info,
            oom_killed=self._oom_checked,
        )
        self._last_gpu = self._gpu.read()
        run_gpu = for_run(self._last_gpu, tree)
        gpu = None
        if run_gpu is not None:
            gpu = {"text": run_gpu.text(), "util_percent": run_gpu.util_percent,
                   "mem_used_mib": run_gpu.mem_used_mib, "mem_total_mib": run_gpu.mem_total_mib,
                   "gpus": [d.index for d in run_gpu.devices],
                   "process_mib": {str(k): v for k, v in run_gpu.process_mib.items()}}
        notices, self._notices = tuple(self._notices), []
        return Snapshot(
            records=log.records,
            new_bytes=log.new_bytes,
            new_lines=log.new_lines,
            formats=log.formats,
            notices=notices + log.notices,
            quiet_for=log.quiet_for,
            alive=alive,
            process=view,
            gpu=gpu,
        )

    # --- what the fix policy may do ----------------------------------------------------

    def leftovers_holding_gpu(self) -> dict[int, float]:
        """The dead run's own leftover processes that still hold GPU memory (MiB)."""
        if self.process.alive() or self._last_gpu is None:
            return {}
        mine = {ident.pid for ident in self.process.leftovers()}
        held: dict[int, float] = {}
        for proc in self._last_gpu.processes:
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
        old = self.process
        self.process = WatchedProcess(identity_of(popen.pid), popen)
        self._oom_checked = None
        old.close()
        return f"restarted as PID {popen.pid}: {self.launch.describe()}"

    def stop_hung(self) -> list[int]:
        """Terminate the hung run (its whole tree) before a restart."""
        return self.process.terminate_tree()

    def cancel(self) -> list[int]:
        """Stop the run for good (only ever with the user's approval)."""
        return self.process.terminate_tree()

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
        self.process.close()
        with contextlib.suppress(Exception):
            self._gpu.close()


class NamedProcessTarget(ProcessTarget):
    """`--proc NAME`: the same target, found by name."""

    target_type: ClassVar[str] = "process"

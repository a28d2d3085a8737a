"""`--pid`/`--proc` with a remote log: the run's process on that host, found and probed
over the log's own SSH connection, composed with the log and the host's GPUs.

Imported only when such a run is opened (paramiko is the [ssh] extra)."""

from __future__ import annotations

from babysit.remote.connection import SshError, SshSettings
from babysit.remote.process import RemoteProcess, RemoteProcessError, find_remote
from babysit.snapshot import ProcessView
from babysit.targets.base import Target, TargetError, TargetUnavailable
from babysit.targets.common.addresses import remote_address
from babysit.targets.common.composed import WatchedRun
from babysit.targets.common.ssh_log import RemoteLogTarget
from babysit.telemetry.gpu import GpuProbe, RunGpuSource


class RemoteProcessProbe:
    """Liveness of the run's process on the remote host, over the log's connection."""

    def __init__(self, log: RemoteLogTarget, process: RemoteProcess) -> None:
        self._log = log
        self.process = process
        self._notices = [f"process found on {log.address.display()}: PID {process.pid} "
                         f"({process.command})"]

    @property
    def pid(self) -> int:
        return self.process.pid

    def view(self, log_moved: bool = False) -> ProcessView:
        try:
            return self.process.view()
        except (RemoteProcessError, SshError) as error:
            self._log.link_lost()
            raise TargetUnavailable(f"{self._log.address.display()} unreachable: "
                                    f"{error}") from error

    def take_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    def close(self) -> None:
        pass  # the connection belongs to the log target


def remote_process_target(text: str, *, pid: int | None = None, proc: str | None = None,
                          accept_new: bool = False,
                          settings: SshSettings | None = None) -> Target:
    """A remote log together with the run's process on that host (`--pid`/`--proc`), its
    GPUs read with the host's nvidia-smi, all over one SSH connection."""
    address = remote_address(text)
    log = RemoteLogTarget(text, address, settings=settings or SshSettings(accept_new=accept_new))
    try:
        if pid is None:
            assert proc is not None
            found = find_remote(log.connection, proc)
            if not found:
                raise TargetError(f"no process matches {proc!r} on {address.display()}")
            if len(found) > 1:
                listing = "; ".join(f"PID {p}: {c}" for p, c in found)
                raise TargetError(f"{len(found)} unrelated processes match {proc!r} on "
                                  f"{address.display()} ({listing}); pick one with --pid")
            pid = found[0][0]
        process = RemoteProcess(log.connection, pid)
    except (RemoteProcessError, SshError) as error:
        log.close()
        raise TargetError(str(error)) from error
    except TargetError:
        log.close()
        raise
    gpu = RunGpuSource(GpuProbe(runner=process.run, use_nvml=False))
    return WatchedRun(label=text, target_type=RemoteLogTarget.target_type, log=log,
                      probe=RemoteProcessProbe(log, process), gpu=gpu)

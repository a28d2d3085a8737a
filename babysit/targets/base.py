"""The interface every target implements, and the errors it may raise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # the model is imported when a target polls, not to build the CLI
    from babysit.clock import Waker
    from babysit.snapshot import Snapshot


class TargetError(Exception):
    """The target cannot be watched at all (missing file, bad path, no permission).

    Raised at baseline it ends the session with exit code 4. The message names what
    to check or which flag to change."""


def cannot_open(name: str, error: BaseException) -> TargetError:
    """The message for a log that cannot be opened at the start, whatever holds it."""
    if isinstance(error, FileNotFoundError):
        return TargetError(f"log file not found: {name}")
    if isinstance(error, PermissionError):
        return TargetError(f"cannot read {name}: permission denied")
    reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
    return TargetError(f"cannot open {name}: {reason}")


class TargetUnavailable(Exception):
    """A transient fault (a dropped link, an API timeout): the loop reports a
    connectivity problem, backs off, and tries again. Never evidence about the run."""


@runtime_checkable
class Target(Protocol):
    """A source of observations about one training run.

    `poll()` returns everything new since the previous call, without sleeping or
    retrying; the loop owns timing. `poll(final=True)` also hands over anything held
    back waiting for more input (a last line without its newline)."""

    @property
    def target_type(self) -> str:
        """The artifact's `target_type`: local-log, remote-log, pid, process, mlflow..."""
        ...

    @property
    def label(self) -> str:
        """How the target is named in reports and in the artifact's `target`."""
        ...

    def poll(self, final: bool = False) -> Snapshot: ...

    def close(self) -> None: ...


# --- capabilities a target may have, checked by protocol, not by class ------------------

@runtime_checkable
class Wakes(Protocol):
    """A target that can tell, between polls, that something new arrived (a local file
    grew), so the loop reads it at once instead of at the next poll."""

    def change_waker(self) -> Waker | None: ...


@runtime_checkable
class RunControls(Protocol):
    """A target babysit can act on (within the fix policy): a process on this machine."""

    @property
    def restart_known(self) -> bool:
        """Whether the exact command to start the run again is known."""
        ...

    @property
    def control_pid(self) -> int:
        """The PID a person would signal to stop the run."""
        ...

    def restart(self) -> str:
        """Start the run again; returns what was started. Raises on failure."""
        ...

    def stop_hung(self) -> list[int]: ...

    def cancel(self) -> list[int]: ...

    def leftovers_holding_gpu(self) -> dict[int, float]: ...

    def free_leftovers(self, pids: set[int]) -> list[int]: ...


@runtime_checkable
class HasLogPath(Protocol):
    """A target that reads a log file on this machine (for `tail`/`grep` next steps and
    the last lines in notifications)."""

    @property
    def log_path(self) -> str | None: ...

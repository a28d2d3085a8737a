"""The interface every target implements, and the errors it may raise."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from babysit.model import Snapshot


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

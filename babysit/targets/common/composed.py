"""A run seen through three sources: its log, a liveness probe, and a GPU source.

A process on this machine, a process on another host over SSH (and, later, a cluster
job) are the same thing configured differently: where the log comes from, who says
whether the run lives, who reads its GPUs. This module composes them once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from babysit.clock import Waker
from babysit.snapshot import GpuSample, ProcessSnapshot, ProcessView, Snapshot
from babysit.targets.base import Target, Wakes


class LivenessProbe(Protocol):
    """Whether the run's process lives, its tree and, once gone, how it ended. Raises
    TargetUnavailable when the link to the host fails (not evidence about the run)."""

    @property
    def pid(self) -> int: ...

    def view(self, log_moved: bool) -> ProcessView:
        """This poll's view; `log_moved`: the run's log grew since the last one."""
        ...

    def take_notices(self) -> list[str]:
        """What the probe has to tell people since the last call."""
        ...

    def close(self) -> None: ...


class GpuSource(Protocol):
    def for_pids(self, pids: Sequence[int]) -> GpuSample | None:
        """The GPUs where these processes hold memory: text, util, memory; None when
        there are none (or no GPU can be read)."""
        ...

    def close(self) -> None: ...


class WatchedRun:
    """A log (optional), a liveness probe and a GPU source (optional) behind the one
    Target interface."""

    def __init__(self, *, label: str, target_type: str, log: Target | None,
                 probe: LivenessProbe, gpu: GpuSource | None,
                 notices: Sequence[str] = ()) -> None:
        self._label = label
        self._type = target_type
        self.log = log
        self.probe = probe
        self.gpu = gpu
        self._notices = list(notices)

    @property
    def label(self) -> str:
        return self._label

    @property
    def target_type(self) -> str:
        return self._type

    def poll(self, final: bool = False) -> Snapshot:
        snapshot = self.log.poll(final) if self.log is not None else Snapshot()
        view = self.probe.view(log_moved=snapshot.log.new_bytes > 0)
        if not view.alive and self.log is not None:
            # It died between the read and the look: what it wrote last (its traceback,
            # on stderr after stdout) may have landed after the read. Nothing more can
            # come from it, so read to the end once more, as a final read.
            snapshot = _joined(snapshot, self.log.poll(final=True))
        gpu = self.gpu.for_pids(view.tree) if self.gpu is not None and view.tree else None
        notices = (*self._notices, *self.probe.take_notices())
        self._notices = []
        return replace(snapshot, notices=notices + snapshot.notices,
                       process=ProcessSnapshot(alive=view.alive, view=view, gpu=gpu))

    def change_waker(self) -> Waker | None:
        """The log's: a process that writes nothing new is looked at on the backoff."""
        return self.log.change_waker() if isinstance(self.log, Wakes) else None

    def note(self, text: str) -> None:
        """A notice for the next snapshot."""
        self._notices.append(text)

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
        self.probe.close()
        if self.gpu is not None:
            self.gpu.close()


def _joined(first: Snapshot, then: Snapshot) -> Snapshot:
    """Two reads of one log in a row, as one snapshot."""
    return replace(then, log=replace(then.log, records=first.log.records + then.log.records,
                                     new_bytes=first.log.new_bytes + then.log.new_bytes,
                                     new_lines=first.log.new_lines + then.log.new_lines),
                   notices=first.notices + then.notices)

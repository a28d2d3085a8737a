"""A launcher's restart that cannot cure the failure it answers.

torch.distributed.elastic's agent restarts the whole worker group when a worker fails
(`torch/distributed/elastic/agent/server/api.py`, `_invoke_run`: `[default] Worker group
FAILED. 3/3 attempts left; will restart worker group`, then `Stopping worker group`,
`Rendezvous'ing worker group` and `restart_count=1`). It restarts them unchanged: the
same script, the same model, the same batch size, on the same devices. A worker that
died of a lost peer, a timed-out barrier or a node that went away may well come back;
one that ran out of memory runs out again at the same batch (and a script that does not
resume starts over from its first step). A restart after an out-of-memory failure, with
nothing trained since, is therefore no new attempt: the failure stands (FAILED) until
the restarted workers train past it — then the run is RUNNING again, as after any
failure that training went on from (mmediting's BasicVSR on 2 GPUs, sealed-10: `CUDA out
of memory` in its Charbonnier loss, then the agent's restart, and the log ends).
"""

from __future__ import annotations

from babysit.model import EventKind, LogEvent

# What the crash's description adds about the restart.
UNCHANGED_RESTART = ("the launcher restarted the workers unchanged, and the same batch "
                     "runs out of memory again")


class MemoryFailures:
    """When the run last ran out of memory: in which attempt, after how many advances
    of training in it (a restart answers it only while nothing trained since)."""

    def __init__(self) -> None:
        self._at: tuple[int, int] | None = None

    def seen(self, event: LogEvent, attempt: int, advances: int) -> None:
        if event.kind is EventKind.OOM:
            self._at = (attempt, advances)

    def since_training(self, attempt: int, advances: int) -> bool:
        """Whether the run ran out of memory since training last moved on."""
        return self._at == (attempt, advances)

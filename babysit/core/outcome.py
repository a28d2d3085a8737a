"""WatchOutcome: everything a watch established, frozen, for the verdict to judge.

`core.verdict.decide` is a pure function of this value, so every verdict babysit can
give is a row of a table a test can write down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from babysit.core.checkpoints import CheckpointChoice
from babysit.core.efficiency_meter import Efficiency
from babysit.core.lifecycle import Ending
from babysit.model import Action, Anomaly, Reading, TerminalState


@dataclass(frozen=True)
class WatchOutcome:
    target: str
    target_type: str
    state: TerminalState
    ending: Ending | None = None
    step: int | None = None
    # `step` is an index from 0 (a tracker's): the steps completed are step + 1.
    steps_from_zero: bool = False
    target_steps: int | None = None
    # A log that prints epochs and no step: how far it went in them (a summary says so).
    epoch: float | None = None
    total_epochs: int | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    saw_training: bool = False
    anomalies: tuple[Anomaly, ...] = ()
    suppressed: int = 0  # anomalies left out because their type reached the cap
    checkpoint: CheckpointChoice | None = None
    actions: tuple[Action, ...] = ()
    awaiting: tuple[str, ...] = ()  # proposals waiting for the user's approval
    commands: tuple[str, ...] = ()  # exact commands the fixer left for the user
    log_path: str | None = None  # a log on this machine, for `tail`/`grep` next steps
    rewatch: tuple[str, ...] = ()  # the command that watches the same target again
    stop_reason: str = ""
    watched_seconds: float = 0.0
    polls: int = 0
    interrupted: bool = False
    formats: tuple[str, ...] = ()
    evidence_url: str | None = None
    unreachable: str | None = None  # why the target could not be read at all
    efficiency: Efficiency | None = None
    reading: Reading | None = None  # how much of the log babysit understood

    def unresolved(self) -> list[Anomaly]:
        return [a for a in self.anomalies if not a.resolved]

    @property
    def awaiting_approval(self) -> bool:
        """Proposals are waiting, and there is still a run for them to apply to."""
        return bool(self.awaiting) and self.state is TerminalState.RUNNING

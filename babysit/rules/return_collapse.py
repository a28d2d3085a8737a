"""A policy that learned and then collapsed: its return pinned at its floor, the very same
value episode after episode, long after it had stood well above it.

An RL agent's return is noisy from one episode to the next (Seaquest's 0 to 500 while a
double DQN learns), so a single bad stretch says little. One printed value repeated
exactly, the lowest the run has seen, over the last hundred episodes and more says
something else: the policy has found one behaviour and keeps to it (a Keras double DQN
on Seaquest: a mean near 300, then `total rewards: 0.0` on each of its last 650
episodes, each one running to the 3,000-step cap: the submarine hides and never
shoots). A run that starts at its floor (Pong's `-21.0` while a policy is random) has
no best above it to have fallen from: the flat-return rule judges it. A return printed
to many digits never repeats by chance: the replayed-trajectory check judges that.

A blocker at once: whatever the run does next, the policy it holds scores nothing, and
the best one is behind it (a checkpoint from before the collapse is the one to keep).
Resolved once the return leaves the floor.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules import no_progress
from babysit.rules.signals import Observation, Raise, Resolve, Signal

_PINNED = 100  # episodes in a row at the floor, at the least
_PINNED_SHARE = 0.05  # ... and this share of the episodes read
_LEVEL = 20  # episodes in a level (its median): the best one is the policy's best
# The best level stood this share of its own size above the floor: the policy had
# learned something the floor has lost (not a random policy's level near its floor).
_ABOVE = 0.5


class ReturnCollapseRule:
    """Not learning: a return that fell to its floor and stays there (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._key: str | None = None
        self._points = 0
        self._floor = math.inf  # the lowest return read
        self._pinned = 0  # returns in a row at exactly the floor
        self._recent: deque[float] = deque(maxlen=_LEVEL)
        self._best_level = -math.inf  # the best median of `_LEVEL` returns in a row
        self._raised = False

    def observe(self, point: Observation) -> list[Signal]:
        if point.loss is not None:
            # (an episode's summary carries no training loss: a line that does may restate
            # the last episode's return at every step of the next, the same value again)
            return []
        if self._key is None:
            self._key = no_progress.return_key(point.metrics)
            if self._key is None:
                return []
        value = point.metrics.get(self._key)
        if value is None or not math.isfinite(value):
            return []
        self._points += 1
        if value < self._floor:
            self._floor, self._pinned = value, 1
        elif value == self._floor:
            self._pinned += 1
        else:
            self._pinned = 0
        self._recent.append(value)
        if len(self._recent) == _LEVEL:
            self._best_level = max(self._best_level, statistics.median(self._recent))
        if self._raised:
            if self._pinned:
                return []
            self._raised = False
            return [Resolve(AnomalyType.NOT_LEARNING, f"{self._key} left its floor "
                            f"({value:.4g})", key="collapsed return")]
        fallen = self._best_level - self._floor
        if self._pinned < max(_PINNED, _PINNED_SHARE * self._points) \
                or fallen <= _ABOVE * abs(self._best_level) or fallen <= 0:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING,
                      f"not learning: the policy collapsed: {self._key} has been "
                      f"{self._floor:.4g}, the lowest it ever was, on each of the last "
                      f"{self._pinned} episodes, after a best level of "
                      f"{self._best_level:.4g}: it keeps to one behaviour that scores "
                      f"nothing, and its best policy is behind it",
                      key="collapsed return", severity=Severity.BLOCKER)]

"""An agent whose exploration rate is still near 1 when its run finishes: it acted at
random nearly all the time, so nothing in the run shows a policy it learned (issue 24).

An epsilon-greedy agent (DQN, DDPG with epsilon noise) starts at `epsilon` 1.0 and anneals
it towards a small value over many episodes; its return says what its own policy is
worth only once epsilon is low. A run that ends with epsilon still at 0.9 or above — a
smoke test of a few episodes, a schedule far longer than the run — delivers an agent
whose every score was a random policy's (a TensorFlowOnSpark DDPG recommender whose
three workers print `recommended items : 43,  epsilon : 0.999, reward : -0.5` for ten
episodes each, then shut the cluster down cleanly). The run itself may be sound; its
result cannot be called trained. Judged at the run's end only (core/run.py): while the
run goes on, a high epsilon is its schedule's ordinary start.

The rate must have begun to move (an annealing schedule): a constant `eps: 1.0` may be
something else entirely, and an optimizer's `eps: 1e-08` is never near 1. Unless it stood
at 1 on every one of many records that count episodes or their returns: an epsilon-greedy
DQN whose schedule never started (`n_episode :480, score : -0.030, …, eps : 100.0%` from
the first line to `RL end`). A rate above 1 is a percentage.
"""

from __future__ import annotations

import math
import re
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.rules.signals import Observation, Signal

EXPLORATION = re.compile(r"(?:\w+[/_])?(?:epsilon|eps|exploration(?:_rate)?|explore_rate)",
                         re.IGNORECASE)
_STILL_RANDOM = 0.9  # an exploration rate at or above this: actions mostly random
_NEVER_MOVED = 10  # records at a rate of 1 that show a schedule never started
# What an agent's records count: its episodes, or what they returned.
_EPISODIC = re.compile(r"episode|reward|return|score", re.IGNORECASE)


class ExplorationRule:
    """Keeps an exploration rate's first and latest values; `still_random` says whether
    the run would end with its agent acting mostly at random."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._key: str | None = None
        self._first: float | None = None
        self._latest: float | None = None
        self._records = 0  # records that gave the rate
        self._episodic = False  # they count episodes or their returns

    def observe(self, point: Observation) -> list[Signal]:
        if self._key is None:
            if not any("eps" in k.lower() or "explor" in k.lower() for k in point.metrics):
                return []  # the cheap test first: most runs have no exploration rate
            self._key = next((k for k in point.metrics if EXPLORATION.fullmatch(k)), None)
        value = point.metrics.get(self._key) if self._key is not None else None
        if value is not None and math.isfinite(value) and 1 < value <= 100:
            value /= 100  # (`eps : 100.0%`)
        if value is not None and math.isfinite(value) and 0 <= value <= 1:
            if self._first is None:
                self._first = value
            self._latest = value
            self._records += 1
            self._episodic = self._episodic or any(_EPISODIC.search(k) for k in point.metrics)
        return []

    def still_random(self) -> tuple[str, bool] | None:
        """Why the agent acts mostly at random now, after its rate began to anneal from
        near 1, and whether it never acted otherwise (its rate at 1 throughout: nothing
        it did was its own, a blocker); None otherwise."""
        first, latest = self._first, self._latest
        if first is None or latest is None or latest < _STILL_RANDOM:
            return None
        if latest >= first:
            if latest < 1 or self._records < _NEVER_MOVED or not self._episodic:
                return None
            return (f"not learning: the exploration rate {self._key} stood at {latest:.4g} on "
                    f"all {self._records} records: the agent acted at random every time "
                    f"(its schedule never started), so nothing in the run shows a policy it "
                    f"learned"), True
        return (f"not learning: the exploration rate {self._key} is still {latest:.4g} (from "
                f"{first:.4g}) as the run ends: the agent acted at random nearly every "
                f"time, so nothing in the run shows a policy it learned (a schedule far "
                f"longer than the run, or a smoke test)"), False

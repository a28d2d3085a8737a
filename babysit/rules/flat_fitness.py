"""An evolutionary search that never found anything better than where it started (issue
24, item 2: not learning).

A genetic algorithm, NEAT or an evolution strategy keeps its best individual from one
generation to the next (elitism), so its best fitness can only hold or move towards the
goal; each generation it does not move, the search found nothing better. Held from the
very first generation, over many, the search has learned nothing at all: neat-python's
`Best fitness: 50.42000` on each of 23 generations, the same genome each time (a platformer
whose agents never got past where a do-nothing agent stands, sealed-132). One that moved
and then holds is a search converged or stuck on a plateau, which a run may well escape
(a string-matching GA one letter short for 1,300 generations, then solved): not this.

The best fitness is the one a generation prints as its best (`best_fitness`,
`max_fitness`, `Fitness` where the run prints no other: a GA that prints its champion's);
whether the goal is to raise it or lower it does not matter, since a value held to every
printed digit moved neither way. The population's average is no such measure (it rises
as the population converges on the same champion).

Raised once, at `_HELD_GENERATIONS` generations at the very same value from the first:
a blocker at once, since the search burns its compute where it began; resolved when the
best moves.
"""

from __future__ import annotations

import functools
import math
import re
from typing import ClassVar

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.signals import Observation, Raise, Resolve, Signal, at_run_start

_WORDS = re.compile(r"[/_\-. ']+")
_BEST = frozenset({"best", "max", "top", "elite", "champion"})
# Not the search's best: a spread, a population's mean, a species' adjusted share.
_NOT_BEST = frozenset({"average", "avg", "mean", "std", "stdev", "min", "adjusted", "adj",
                       "population", "species"})
_HELD_GENERATIONS = 20  # generations at one best fitness, from the first


@functools.lru_cache(maxsize=256)
def fitness_kind(key: str) -> str | None:
    """`best` for a generation's best fitness (`best_fitness`, `max_fitness`), `plain` for
    a bare `fitness`, None for any other metric."""
    words = [w for w in _WORDS.split(key.lower()) if w]
    if "fitness" not in words or _NOT_BEST.intersection(words):
        return None
    if _BEST.intersection(words):
        return "best"
    return "plain" if words == ["fitness"] else None


class FlatFitnessRule:
    """A generation's best fitness at one value on each of the search's first
    `_HELD_GENERATIONS` generations (see the module)."""

    windowed: ClassVar[bool] = True

    def __init__(self, rules: RuleSettings) -> None:
        self.rules = rules
        self._key: str | None = None
        self._value = math.nan
        self._held = 0  # generations at that value, from the first
        self._generation: float | None = None  # the generation last counted
        self._from_start = False
        self._best_seen = False  # a best fitness was printed: a bare one is no longer judged
        self._raised = False

    def observe(self, point: Observation) -> list[Signal]:
        key = self._pick(point)
        if key is None:
            return []
        value = point.metrics[key]
        if not math.isfinite(value):
            return []
        generation = point.epoch if point.epoch is not None else point.step
        if self._key is None:
            self._key, self._value, self._held = key, value, 1
            self._generation = generation
            self._from_start = at_run_start(point, self.rules.divergence_start_steps)
            return []
        if value != self._value:
            self._value, self._held, self._generation = value, 1, generation
            self._from_start = False  # (moved: a later hold is a plateau, not this)
            if self._raised:
                self._raised = False
                return [Resolve(AnomalyType.NOT_LEARNING, f"{key} moved ({value:.6g})",
                                key="fitness")]
            return []
        if generation is None or generation == self._generation:
            return []  # (the same generation printed again)
        self._generation = generation
        self._held += 1
        if self._raised or not self._from_start or self._held < _HELD_GENERATIONS:
            return []
        self._raised = True
        return [Raise(AnomalyType.NOT_LEARNING, (
            f"not learning: {key} has been exactly {value:.6g} on each of the search's "
            f"first {self._held} generations: it never found anything better than its "
            f"first generation's best, and it burns its compute there"), key="fitness",
            severity=Severity.BLOCKER)]

    def _pick(self, point: Observation) -> str | None:
        """The best fitness this record prints, if it is the one judged: a best one
        outranks a bare `fitness` for the rest of the run."""
        found = None
        for key in point.metrics:
            kind = fitness_kind(key)
            if kind == "best":
                if not self._best_seen:
                    self._best_seen = True
                    if self._key is not None and fitness_kind(self._key) != "best":
                        self._key = None  # (a bare column until now: start over on the best)
                return key if self._key in (None, key) else None
            if kind == "plain" and not self._best_seen and self._key in (None, key):
                found = key
        return found

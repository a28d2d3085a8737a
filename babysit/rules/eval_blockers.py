"""Which of the evaluation rule's blocker judgements hold for each metric.

An evaluation metric can be judged a blocker for several reasons at once: it ran away,
it stands several times above its first evaluation or its best, it is back where the
run began, or a score fell to a fifth of its best. Each judgement is raised and withdrawn
on its own evidence, but the anomaly is one (one key, one severity): withdrawing one
judgement may lower the severity only when no other still holds. One ledger keeps that
true for every judgement, old and new, instead of each withdrawal asking the others.
"""

from __future__ import annotations

from enum import Enum


class Why(Enum):
    """A reason the evaluation rule holds a metric's degradation at blocker."""

    RUNAWAY = "running away"
    MULTIPLIED = "several times its first or its best"
    UNDONE = "back where the run began"
    COLLAPSED = "a score at a fifth of its best"


class BlockerLedger:
    """The blocker judgements holding for each metric key."""

    def __init__(self) -> None:
        self._held: dict[str, set[Why]] = {}

    def holds(self, key: str, why: Why) -> bool:
        return why in self._held.get(key, ())

    def hold(self, key: str, why: Why) -> bool:
        """Record `why` for `key`; True when it did not hold before (the blocker is to
        be raised now)."""
        held = self._held.setdefault(key, set())
        if why in held:
            return False
        held.add(why)
        return True

    def release(self, key: str, why: Why) -> bool:
        """Withdraw `why` for `key`; True when it held and no other judgement holds now
        (the severity goes back to the usual medium)."""
        held = self._held.get(key)
        if not held or why not in held:
            return False
        held.discard(why)
        if held:
            return False
        del self._held[key]
        return True

    def drop(self, key: str, why: Why) -> None:
        """Forget `why` for `key` with no severity change of its own (the anomaly was
        resolved, or the metric starts a curve of its own)."""
        held = self._held.get(key)
        if held is not None:
            held.discard(why)
            if not held:
                del self._held[key]

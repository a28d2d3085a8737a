"""Checkpoints the run saved, and which one can be trusted.

A checkpoint written while a blocker is open (after the first NaN, say) holds the
damage, so it is never the one to go back to.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckpointChoice:
    path: str
    why: str  # "the run's best", "newest saved before any blocker"


class Checkpoints:
    def __init__(self) -> None:
        self.newest_good: str | None = None
        self.best: str | None = None  # the one the run itself called best

    def saved(self, path: str, blocked: bool) -> None:
        if path and not blocked:
            self.newest_good = path

    def named_best(self, path: str, blocked: bool) -> None:
        if path and not blocked:
            self.best = path

    def choice(self) -> CheckpointChoice | None:
        if self.best:
            return CheckpointChoice(self.best, "the run's best")
        if self.newest_good:
            return CheckpointChoice(self.newest_good, "newest saved before any blocker")
        return None

    def good_path(self) -> str | None:
        chosen = self.choice()
        return chosen.path if chosen else None

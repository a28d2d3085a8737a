"""The best round a boosting library restates as its fit ends: not a round trained.

XGBoost (`Stopping. Best iteration:`), LightGBM (`Early stopping, best iteration is:`,
`Did not meet early stopping. Best iteration is:`) print the best round's row again
under their closing line — `[20]<TAB>valid_0's l2: 0.7` after round 30. Read as a record
it would take the run back to round 20, as a relaunch does, and reopen the run the
closing line ended. The row is understood, and left out of the run's series.
"""

from __future__ import annotations

from babysit import lazy_re

_ANNOUNCED = lazy_re.compile(r"[Bb]est iteration(?: is)?:\s*$")
_ROUND_ROW = lazy_re.compile(r"^\s*\[\d+\]\t")


class BestRoundEcho:
    """Spots the row that restates the best round, right after its announcement."""

    def __init__(self) -> None:
        self._announced = False

    def restated(self, line: str) -> bool:
        """Whether `line` is that row (the line before it announced the best round)."""
        if self._announced:
            self._announced = False
            return _ROUND_ROW.match(line) is not None
        if "est iteration" in line and _ANNOUNCED.search(line):
            self._announced = True
        return False

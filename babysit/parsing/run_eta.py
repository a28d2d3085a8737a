"""An ETA that is the whole run's, read at the last print of the last epoch.

MMCV's and MMEngine's loggers print the time left to the end of the run (`Epoch [9][20/
16043] … eta: 1 day, 1:45:44, time: 4.393`), not to the end of the epoch: at the first
print of epoch 9 of 10 it covers two epochs. A log prints every so many iterations, so
its last print of the run comes a few iterations before the end and its ETA is a few
seconds, not zero (`Epoch [10][16040/16043] … eta: 0:00:08, time: 2.892`). Such an
estimate, once the log has shown that its ETA outlasts the epoch under way, and covering
no more than the rest of this epoch at the last print of the epoch, says the run ends
with it. Torchvision's reference scripts print the epoch's own ETA (`eta: 0:00:00` at
the end of every epoch): it never outlasts its epoch, and says nothing here.
"""

from __future__ import annotations

from babysit import lazy_re

_ETA = lazy_re.compile(r"\b[Ee]ta:\s*(?:(\d+)\s+days?,\s*)?(\d+):(\d\d):(\d\d)\b")
_TIME = lazy_re.compile(r"(?<![\w_])time:\s*(\d+(?:\.\d+)?)\b")
_BATCH = lazy_re.compile(r"\]\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]")
_SLACK = 1.5  # times the rest of the epoch's time: a per-iteration time varies
_LONGER = 60.0  # seconds an ETA outlasts its epoch by to be the whole run's


class RunEta:
    """Whether a line's run-wide ETA says the run ends with the epoch under way."""

    def __init__(self) -> None:
        self._runs_wide = False  # an ETA was seen to outlast its epoch
        self._said = False
        self._done: int | None = None  # the batch counter of the print before

    def ends_here(self, text: str) -> bool:
        """True once, at a line whose run-wide ETA covers only the rest of its epoch, at
        the epoch's last print (the next print, one interval on, would be past its end)."""
        if self._said or "ta:" not in text or "time:" not in text:
            return False
        eta, took, batch = _ETA.search(text), _TIME.search(text), _BATCH.search(text)
        if eta is None or took is None or batch is None:
            return False
        days, hours, minutes, seconds = (int(g) if g else 0 for g in eta.groups())
        left = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
        done, total = int(batch.group(1)), int(batch.group(2))
        before, self._done = self._done, done
        if total <= 0 or done > total:
            return False
        # (the epoch's last print: the next, one interval on, would be past its end)
        last = before is not None and done - before > 0 and total - done < done - before
        epoch_left = (total - done) * float(took.group(1))
        if left > epoch_left * _SLACK + _LONGER:
            self._runs_wide = True
            return False
        if self._runs_wide and last and left <= epoch_left * _SLACK + 1:
            self._said = True
            return True
        return False

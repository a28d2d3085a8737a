"""Slurm's `srun -l` (`--label`) prefixes each task's output with its task number,
right-aligned to the widest one: `3: step 100 loss …`, ` 0: …`, `12: …`.

A bare number and a colon also starts lines no launcher wrote (a loop printing
`{step}: loss …`, a terminal capture that wrapped `aux_loss_0: 0.31` after its `_`), so
a label is taken for a task only once the log shows it is one: most of its lines are
labelled, and the labels went back down (`3:` then `0:`: several tasks interleaved,
which a counter never does) or only `0:` was seen (a single task). Until then the line
is read as it stands, as before.
"""

from __future__ import annotations

from babysit import lazy_re

_LABEL = lazy_re.compile(r" {0,4}(\d{1,4}): ")
_REACH = 10  # the longest label: four spaces, four digits and `: `
_LEAST = 3  # labelled lines before the labels can count
_SHARE = 0.5  # of the lines: srun labels every line its tasks print


class TaskLabels:
    """Reads `srun -l` labels off the lines of one log, once they have shown themselves."""

    def __init__(self) -> None:
        self._highest: int | None = None
        self._lines = 0
        self._labelled = 0
        self._went_back = False
        self._confirmed = False

    def split(self, line: str) -> tuple[int | None, str]:
        """The task number and the line without its label, or (None, line) when the line
        has none or the log has not shown its labels to be tasks yet."""
        self._lines += 1
        if not line or not (line[0].isdigit() or line[0] == " ") or ": " not in line[:_REACH]:
            return None, line
        match = _LABEL.match(line)
        if match is None:
            return None, line
        label = int(match.group(1))
        self._labelled += 1
        if not self._confirmed:
            if self._highest is not None and label < self._highest:
                self._went_back = True
            self._highest = label if self._highest is None else max(self._highest, label)
            self._confirmed = (self._labelled >= _LEAST
                               and self._labelled >= _SHARE * self._lines
                               and (self._went_back or self._highest == 0))
            if not self._confirmed:
                return None, line
        return label, line[match.end():]

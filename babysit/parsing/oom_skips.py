"""Out of memory caught and skipped, batch after batch.

Some training loops catch the CUDA OOM and go on to the next batch (GPT2-Chinese and
CPM's `WARNING: ran out of memory`, fairseq's `WARNING: ran out of memory with exception:
…; Skipping batch`): no traceback, no exit. One such skip is survivable; the same skip
again and again with no training record between is a run in which every batch is too
big: nothing is trained, and it is an out of memory as surely as a traceback's.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.model import EventKind, LogEvent

_SKIPPED_OOM = lazy_re.compile(r"\bran out of (?:GPU |CUDA )?memory\b", re.IGNORECASE)
# Skips in a row, no training record between, before they are the run's out of memory.
OOM_SKIPS_IN_A_ROW = 20


class OomSkips:
    """Counts caught out-of-memory skips between training records (see the module)."""

    def __init__(self) -> None:
        self._skips = 0

    def trained(self) -> None:
        self._skips = 0

    def read(self, line: str, found: tuple[LogEvent, ...]) -> tuple[LogEvent, ...]:
        """An OOM event when this line's skip is the `OOM_SKIPS_IN_A_ROW`-th in a row."""
        if "memory" not in line or _SKIPPED_OOM.search(line) is None \
                or any(e.kind is EventKind.OOM for e in found):
            return ()
        self._skips += 1
        if self._skips != OOM_SKIPS_IN_A_ROW:
            return ()
        return (LogEvent(EventKind.OOM, line.strip()[:500],
                         f"every batch ran out of memory: {self._skips} caught and skipped "
                         f"in a row, no training step between"),)

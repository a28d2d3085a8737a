"""A failure while the run was saving: the checkpoint it was writing is not whole.

Many loops announce a save in a sentence that names no file (`(Saving model ...)` in
neuralconvo's Torch7 loop, `Saving the model weights`) and then die inside it — a Lua
`write error: wrote 0 blocks instead of 70610`, an OSError, a killed process. The
failure is the crash it is, and the save it interrupted is a checkpoint failure as well:
the last checkpoint on disk may be truncated, and the one before it is the one to keep.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.model import EventKind, LogEvent

# A sentence that the run is writing its model or checkpoint now.
_SAVING = lazy_re.compile(r"^\W*(?:[Ss]aving|[Ww]riting|[Ss]toring|[Dd]umping|SAVING)\b"
                          r"[^.;]{0,40}?\b(?:model|checkpoint|weights|state|snapshot|"
                          r"MODEL|CHECKPOINT)")
# ... and that it is written.
_SAVED = lazy_re.compile(r"^\W*saved\b|\b(?:model|checkpoint|weights|pipeline)\s+"
                         r"(?:was\s+|were\s+|has\s+been\s+)?saved\b", re.IGNORECASE)
# Lines within which the failure must follow the announcement.
_REACH = 4
_FAILURES = (EventKind.EXCEPTION, EventKind.TRACEBACK_START, EventKind.SEGFAULT,
             EventKind.OOM, EventKind.HOST_KILL)
SAVE_FAILED = "the run failed while saving"


class SaveFailures:
    def __init__(self) -> None:
        self._left = 0  # lines left in which a failure interrupts the announced save

    def line(self, text: str, events: list[LogEvent]) -> LogEvent | None:
        """A checkpoint failure when this line's failure came right after a save began."""
        if self._left and any(e.kind in _FAILURES for e in events) \
                and not any(e.kind is EventKind.CHECKPOINT_ERROR for e in events):
            self._left = 0
            return LogEvent(EventKind.CHECKPOINT_ERROR, text.strip()[:500], SAVE_FAILED)
        # (the verbs' stems first: this runs on every line of a poll)
        if ("aving" in text or "riting" in text or "toring" in text or "umping" in text
                or "AVING" in text) and _SAVING.match(text) is not None:
            self._left = _REACH
        elif self._left and ("aved" in text or "AVED" in text) and _SAVED.search(text):
            self._left = 0  # (`Saved to: …/finetuned`: the save went through)
        elif self._left and text.strip():
            self._left -= 1
        return None

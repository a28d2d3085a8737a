"""A library's notice, printed as it writes a model, as the last thing a log says.

Keras and TensorFlow say so while `model.save()` runs, on stderr, where a job that
keeps only its stderr has nothing else of the save (ResTS on an A100, sealed-11: TF's
start-up, XLA's autotuning, shuffle buffers filling, then only this):

    WARNING:absl:You are saving your model as an HDF5 file via `model.save()` or
    `keras.saving.save_model(model)`. This file format is considered legacy. …

TF's SavedModel says `INFO:tensorflow:Assets written to: my_model/assets` (after
`Found untraced functions such as … while saving`). Said once, as the log's last line,
it is the script's final save: training is over once nothing more comes (and never well
short of a plan the run announced — `FINAL_PATH`'s rule). A checkpoint callback says it
after every epoch (`Assets written to: my_cifar10_selu_model/assets` eight times in
handson-ml3's run, sealed-6): said more than once, it is no final save.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.endings import FINAL_PATH

_NOTICE = lazy_re.compile(r"You are saving your model as an HDF5 file via `?model\.save\(\)|"
                          r"\bAssets written to:? \S|"
                          r"Found untraced functions such as .* while saving\b")
_TRIGGERS = ("saving your model", "Assets written", "untraced functions")


class FinalSaveNotice:
    """Reads every line; at the log's end, the completion its last save notice is."""

    def __init__(self) -> None:
        self._saves = 0  # notices said, the lines of one save counted once
        self._last: str | None = None  # the notice the log ends on, so far

    def line(self, text: str) -> None:
        if not text.strip():
            return
        if any(t in text for t in _TRIGGERS) and _NOTICE.search(text):
            if self._last is None:
                self._saves += 1
            self._last = text.strip()[:500]
        elif self._last is not None and text[:1].isspace():
            return  # a Python warning's source line under it (`  saving_api.save_model(`)
        else:
            self._last = None

    def finish(self) -> list[LogEvent]:
        """The final save, when the log ends on the only one it said."""
        if self._last is None or self._saves != 1:
            return []
        return [LogEvent(EventKind.COMPLETED, self._last, FINAL_PATH)]

"""The records of a pretty-printed JSON document: objects in a list, one field a line.

A trainer may write its history as one JSON document rather than as lines, and people
point babysit at that file. Hugging Face's `trainer_state.json` is the common one
(transformers/trainer_callback.py, `TrainerState.save_to_json`: `json.dumps(
dataclasses.asdict(self), indent=2, sort_keys=True)`), its records in `log_history`:

    {
      "best_metric": null,
      "epoch": 0.32,
      "global_step": 400,
      "log_history": [
        {
          "epoch": 0.1,
          "grad_norm": 1.9,
          "learning_rate": 4.5e-05,
          "loss": 1.38,
          "step": 10
        },
        …
      ],
      "max_steps": 500,
      …
    }

One line alone (`"loss": 1.38,`) says nothing of where the run is; the object it is in
does. So the lines of an object that is an element of a list are gathered and read
together when it closes: an object of numbers that has a step (`step`, `global_step`,
`iteration`...) is a record, whatever its metrics are called (an evaluation's `eval_*`
entries and the trainer's closing `train_runtime` summary are read as the key/value
formats read them). Every other line of the document (its top-level fields: `"max_steps":
500`, a configuration's values) is left to the formats, as any line: they read a plan
from it as before.

A document begins with a line that is only `{` or `[`; it ends where its brackets close.
"""

from __future__ import annotations

import json

from babysit.parsing.formats import Parsed, split_counters
from babysit.parsing.text import normalise_key

_OPENERS = frozenset({"{", "["})
# How every line of a pretty-printed JSON document begins: a key, a bracket, a value
# (`NaN` and `Infinity` as Python's json writes them). Any other line ends what was taken
# for a document (a lone `[` in a log, a Python dict printed over lines): the lines after
# it are the log's again.
_JSON_STARTS = frozenset('"{}[]-0123456789tfnNI')
_MAX_OBJECT_LINES = 400  # an element longer than this is no record: stop gathering it
_MAX_DEPTH = 64  # brackets open at once: deeper is no trainer's document


def _brackets(text: str) -> list[str]:
    """The brackets a line opens and closes outside its strings, in order."""
    marks: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[}]":
            marks.append(char)
    return marks


class JsonDocument:
    """Follows one pretty-printed JSON document through the log, line by line."""

    def __init__(self) -> None:
        self._stack: list[str] = []  # the open brackets, outermost first
        self._gathered: list[str] | None = None  # the lines of the list element being read
        self._element_depth = 0  # the stack's height just inside that element

    @property
    def open(self) -> bool:
        """Whether a document's brackets are open: every line until they close is the
        document's to follow, even one said before."""
        return bool(self._stack)

    def wants(self, text: str) -> bool:
        """Whether the line may be a document's (cheap: no pattern)."""
        return bool(self._stack) or text.strip() in _OPENERS

    def read(self, text: str) -> Parsed | bool | None:
        """A record when the line closes a list element that is one; True when the line
        is part of such an element (it is understood, and no format should read it);
        None for any other line (a top-level field: the formats read it)."""
        stripped = text.strip()
        if not self._stack:
            if stripped not in _OPENERS:
                return None
            self._stack.append(stripped)
            return True
        if stripped[:1] not in _JSON_STARTS:
            self._stack, self._gathered = [], None  # no JSON document after all
            return None
        marks = _brackets(stripped)
        if self._gathered is None and marks and marks[0] == "{" and self._stack[-1] == "[":
            # An object that is an element of a list: gather it whole.
            self._gathered, self._element_depth = [], len(self._stack) + 1
        gathering = self._gathered is not None
        if self._gathered is not None:
            self._gathered.append(stripped)
        for mark in marks:
            if mark in "{[":
                self._stack.append(mark)
            elif self._stack:
                self._stack.pop()
        if self._gathered is not None and len(self._stack) < self._element_depth:
            element, self._gathered = "\n".join(self._gathered).rstrip(","), None
            try:
                value = json.loads(element)
            except ValueError:
                # No JSON (a Python dict's repr, `{'loss': 2.0}`): no document after all;
                # the formats read the line.
                self._stack = []
                return None
            return _record(value) or True
        if len(self._stack) > _MAX_DEPTH:
            # Brackets nested deeper than any trainer's document (a line of `[` after
            # another): no document; what is held is dropped, so memory stays bounded.
            self._stack, self._gathered = [], None
            return None
        if self._gathered is not None and len(self._gathered) > _MAX_OBJECT_LINES:
            self._gathered = None  # too long for a record: stop gathering it
        if not self._stack:
            return True  # the document's last bracket
        return True if gathering else None


def _record(value: object) -> Parsed | None:
    """The record an element of a list makes: its numbers, with a step among them."""
    if not isinstance(value, dict):
        return None
    numbers = {normalise_key(str(k)): float(v) for k, v in value.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
    # `NaN`, `Infinity` are what json.dumps writes for a non-finite value: json.loads
    # reads them back as floats, so a diverged loss stays the metric's value.
    parsed = split_counters(numbers, "json-document")
    return parsed if parsed.step is not None and parsed.metrics else None

"""A classifier that answers one class for everything, by its per-class accuracies.

PyTorch's CIFAR-10 tutorial, and the many scripts grown from it, end their evaluation
with an accuracy per class (`Accuracy for class: plane is 0.0 %`, older `Accuracy of
plane : 37 %`), one line each. A model that predicts the same class for every input
scores 100 % on that class and 0 % on every other, whatever its overall accuracy says
(exactly the share of that class: `Accuracy of the network on the 10000 test images:
10 %`). An NNI trial at a learning rate of 0.086 did that, `deer` for every image, and
its loss sat at ln 10 to the end of its twenty epochs.

A block of three or more such lines in a row is read once it ends: one class at 99 % or
more and every other at 1 % or less (or every class at 1 % or less) is a model that
does not tell the classes apart (ONE_CLASS). A later block that does resolves it.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.log_prefix import message
from babysit.redact import clip

# `Accuracy for class: plane is 0.0 %`, `Accuracy of plane : 37 %`, `accuracy of class
# 3: 0.95`.
_PER_CLASS = lazy_re.compile(
    r"(?<!\w)accuracy\s+(?:for|of)\s+(?:(?:the\s+)?class\s*[:#]?\s*)?(?P<name>[^:%=]{1,40}?)\s*"
    r"(?::|\bis\b|=)\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<percent>%)?\s*$", re.IGNORECASE)
# An overall figure in the same words: not a class.
_WHOLE = lazy_re.compile(r"\b(?:network|model|images|samples|test|train|val|set|overall|"
                         r"total|all|average|mean)\b", re.IGNORECASE)
_LEAST = 3  # classes in a block before it says anything
_RIGHT = 0.99  # a class answered every time
_NEVER = 0.01  # a class never answered
ANSWERED = "answered"  # the detail of a block that tells its classes apart


class ClassAccuracies:
    def __init__(self) -> None:
        self._block: list[tuple[str, float]] = []
        self._percent = False
        self._text = ""  # the block's first line
        self._raised = False

    def line(self, raw: str) -> LogEvent | None:
        """A line of the log: the finding of a block it closes, if any."""
        if "ccurac" in raw or "CCURAC" in raw:
            found = _PER_CLASS.search(message(raw).strip())
            if found is not None and not _WHOLE.search(found.group("name")) \
                    and len(found.group("name").split()) <= 3:
                if not self._block:
                    self._text, self._percent = raw.strip()[:500], False
                value = float(found.group("value"))
                self._percent = self._percent or bool(found.group("percent")) or value > 1
                if len(self._block) < 1000:
                    self._block.append((found.group("name"), value))
                return None
        return self.close() if self._block else None

    def close(self) -> LogEvent | None:
        """The block read so far, judged (the log ends in it, or a line ends it)."""
        block, self._block = self._block, []
        if len(block) < _LEAST:
            return None
        scale = 100.0 if self._percent else 1.0
        shares = [value / scale for _, value in block]
        answered = [name for (name, _), share in zip(block, shares, strict=True)
                    if share > _NEVER]
        collapsed = all(share <= _NEVER for share in shares) or (
            len(answered) == 1 and max(shares) >= _RIGHT)
        if collapsed:
            self._raised = True
            said = f"'{answered[0]}' for every input" if answered else "no class right"
            return LogEvent(EventKind.ONE_CLASS, clip(
                f"of {len(block)} classes' accuracies, {said} (from `{self._text}`)", 500))
        if self._raised:
            self._raised = False
            return LogEvent(EventKind.ONE_CLASS, self._text, ANSWERED)
        return None


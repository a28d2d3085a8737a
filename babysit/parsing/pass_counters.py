"""Passes told apart by their counter's total: the `progress` package's bar, printed once
per pass (pytorch-classification and pytorch-pose: `Processing |#####| (3708/3708) Data:
0.000220s | Batch: 0.276s | … | Loss: 0.0035 | Acc:  0.7525`, then `(493/493) … | Loss:
0.3065 | Acc:  0.0000` for the validation set). Both lines carry the same names; only
the total says which pass each is. The training's pass is the longest one the log has
shown; a pass that finished with a smaller total is an evaluation's, and its figures are
the evaluation's (`eval/loss`), never a training loss of 4.3 beside one of 0.0034.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import EVALISH, Parsed

# `|#####|` (or `|#####    |` part way), then `(n/N)`.
_PASS = lazy_re.compile(r"\|[#\s.=>-]*\|\s*\((\d+)/(\d+)\)")


class PassCounters:
    def __init__(self) -> None:
        self._longest = 0  # the longest finished pass: the training's

    def place(self, text: str, parsed: Parsed) -> Parsed:
        """The record with an evaluation pass's figures named as the evaluation's."""
        if "|" not in text or "(" not in text:
            return parsed
        found = _PASS.search(text)
        if found is None or not parsed.metrics:
            return parsed
        done, total = int(found.group(1)), int(found.group(2))
        if done == total and total > self._longest:
            self._longest = total
        if total >= self._longest:
            return parsed
        return Parsed(parsed.fmt, epoch=parsed.epoch, total_epochs=parsed.total_epochs,
                      metrics={k if EVALISH.search(k) else f"eval/{k}": v
                               for k, v in parsed.metrics.items()})

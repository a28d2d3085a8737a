"""An evaluation's results, printed as a dict or a block of figures, read as the
evaluation's and at no training step.

TF1's Estimator evaluates the final checkpoint after training and prints what it scored
twice, as one dict and as a block under a banner (tf1_estimator_bert_similarity_nohup_…,
sealed-10):

    INFO:tensorflow:Saving dict for global step 5468: eval_accuracy = 0.8500477,
        eval_auc = 0.68875444, eval_loss = 0.7216634, global_step = 5468, loss = 0.7218847
    INFO:tensorflow:***** Eval results *****
    INFO:tensorflow:  eval_accuracy = 0.8500477
    INFO:tensorflow:  loss = 0.7218847

Its `loss` is the evaluation's (the Estimator's `evaluate()` reports the mean loss over
the evaluation set beside the metrics), and `global_step` names the checkpoint scored.
Read as the training's, the evaluation loss 0.72 after training losses of 0.02 was a
false loss spike, and the step 5468 after `Loss for final step` training that went on
past the run's end. So: a record whose figures are all an evaluation's but for a bare
`loss` is the evaluation's, and so is each figure of a block under a results banner
(`Eval results`, `Evaluation results`, `Test results`), until a line of another shape.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.formats import EVALISH, Parsed
from babysit.parsing.log_prefix import message

_BANNER = lazy_re.compile(r"\W*(?:eval(?:uation)?|validation|test) results?\W*", re.IGNORECASE)
# A line that is one figure: `  eval_accuracy = 0.8500477`, `  loss = 0.7218847`.
_FIGURE = lazy_re.compile(r"\s*[\w/.-]+\s*[=:]\s*[-+]?[\d.]+(?:[eE][-+]?\d+)?\s*")
_COUNTERS = frozenset({"global_step", "step", "epoch"})


def _evaluation(parsed: Parsed) -> Parsed:
    """The record's figures as an evaluation's, at no step of its own."""
    metrics = {k if EVALISH.search(k) else f"eval/{k}": v for k, v in parsed.metrics.items()
               if k not in _COUNTERS}
    return Parsed(parsed.fmt, epoch=parsed.epoch, total_epochs=parsed.total_epochs,
                  metrics=metrics)


def evaluation_dict(parsed: Parsed) -> bool:
    """Whether a record's figures are an evaluation's: two or more named for it, and
    nothing else but a bare `loss` and counters."""
    names = [k for k in parsed.metrics if k not in _COUNTERS]
    evalish = [k for k in names if EVALISH.search(k)]
    return len(evalish) >= 2 and all(k == "loss" for k in names if k not in evalish) \
        and "loss" in names


class EvalResults:
    """Reads the figures of an evaluation's results (see the module)."""

    def __init__(self) -> None:
        self._open = False  # inside a block under a results banner

    def see(self, text: str) -> None:
        """Note a line before it is read: a results banner opens a block, a line that is
        not one figure closes it (a figure no format reads, `global_step = 5468`, leaves
        it open). Cheap for the lines of a run that prints no results block."""
        if not self._open and "esults" not in text:
            return
        body = message(text)
        self._open = _BANNER.fullmatch(body) is not None \
            or (self._open and _FIGURE.fullmatch(body) is not None)

    def place(self, parsed: Parsed | None) -> Parsed | None:
        """The line's record as the evaluation's where it is one; else as it was."""
        if parsed is None:
            return None
        if self._open or evaluation_dict(parsed):
            return _evaluation(parsed)
        return parsed

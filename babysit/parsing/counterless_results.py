"""Results printed between epochs with no counter: an evaluation's, though unnamed.

A hand-written loop that counts its epochs on every training line (` Epoch:12,Loss:0.61`)
often prints its evaluation after each epoch as bare assignments, with no split word and
no counter: a peptide regressor's `MSE_loss = 1.829` and `R2_score = 0.856` once per
epoch, between the epoch's last batch and the next one's first. Read as they stand they
were training records of their own, and the held-out error rising from epoch 100 while the
training loss fell was never judged as an evaluation.

In a log whose training records name their epoch, a record that names neither a step nor
an epoch, none of whose names the training records use, that no head calls training, and
that is no setting or timing, is such a result once the run has printed it between two
training records, once, on two earlier occasions: its metrics are read as an evaluation's
(`eval/mse_loss`). A record of those names printed twice between two training records is
the training's own progress (a language model's `0.107 perplexity: 1527.65 speed: 8936
wps` ten times an epoch, between its `Train perplexity at epoch 0` summaries), never an
evaluation; once one has been, a second print in one gap is a summary of them (a
k-fold run's cross-validation score after its last fold's). A log whose records count
steps is left alone (its evaluations have their own lines and names), as is everything
before the second epoch-named record (a configuration printed at the start).
"""

from __future__ import annotations

from dataclasses import replace

from babysit.metric_names import LR_KEYS, is_bookkeeping, is_eval_metric
from babysit.parsing.evaluation import says_training, training_names
from babysit.parsing.formats import Parsed

_LEAST = 2  # epoch-named training records before a counterless one is an evaluation's
_ONCE_BEFORE = 2  # gaps between training records it was printed in, once each, before
_MAX_NAMES = 256


class CounterlessResults:
    """Follows the training records' names; reads counterless records as evaluations."""

    def __init__(self) -> None:
        self._epoch_records = 0
        self._names: set[str] = set()
        self._stepped = False  # the log counts steps: left alone
        # Per set of names: the gaps between training records it was printed in (once
        # each), and whether it was printed in the present gap; -1: twice in one gap.
        self._gaps: dict[tuple[str, ...], int] = {}
        self._this_gap: set[tuple[str, ...]] = set()

    def read(self, text: str, parsed: Parsed) -> Parsed:
        if self._stepped or not parsed.metrics:
            return parsed
        if parsed.step is not None:
            self._stepped = True
            return parsed
        if parsed.epoch is not None:
            names = training_names(parsed.metrics)
            if names:
                self._epoch_records += 1
                self._this_gap.clear()
                if len(self._names) < _MAX_NAMES:
                    self._names.update(names)
            return parsed
        if self._epoch_records < _LEAST or parsed.target is not None \
                or says_training(text) or not self._results(parsed) \
                or not self._once_a_gap(tuple(parsed.metrics)):
            return parsed
        return replace(parsed, metrics={k if is_eval_metric(k) else f"eval/{k}": v
                                        for k, v in parsed.metrics.items()})

    def _once_a_gap(self, names: tuple[str, ...]) -> bool:
        """Notes the names' print; True once they were printed once in each of
        `_ONCE_BEFORE` earlier gaps and never twice in one."""
        gaps = self._gaps.get(names)
        if gaps is None:
            if len(self._gaps) >= _MAX_NAMES:
                return False
            gaps = 0
        if gaps < 0:
            return False
        if names in self._this_gap:
            if gaps > _ONCE_BEFORE:
                # an evaluation's, known so from earlier gaps, said again before training
                # goes on: a summary of them (a k-fold run's `CV` `Score: 0.9691` after
                # its last fold's `Score: 0.9731`), not progress
                return True
            self._gaps[names] = -1  # twice between two training records: progress
            return False
        self._this_gap.add(names)
        self._gaps[names] = gaps + 1
        return gaps >= _ONCE_BEFORE

    def _results(self, parsed: Parsed) -> bool:
        names = parsed.metrics.keys()
        return not any(k in self._names or k in LR_KEYS or is_bookkeeping(k)
                       or "train" in k.lower() for k in names) \
            and any(not is_eval_metric(k) for k in names)

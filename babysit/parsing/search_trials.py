"""A hyperparameter search's trials: the search is the run, each trial's end only a trial's.

A search prints one result line per trial as it closes it (Optuna's `[I 2025-08-28
09:23:34,725] Trial 453 finished with value: -0.6119 and parameters: {…}`, `Trial 12
pruned.`, `Trial 7 failed …`; Ray Tune's `Trial train_abc_00003 completed.`). The trainer
inside each trial says its own end as any run does (Lightning's `` `Trainer.fit` stopped:
`max_epochs=23` reached.``, an early stop's `Monitored metric … did not improve`): once the
log has shown two trials closed, such words end a trial, not the search. An Optuna study
cut in its 454th trial of 500, the last words its trainer's, had read SUCCEEDED.

The search ends on its own words (a summary's `Best trial:`, read by the closing block),
on the process's exit status, or not at all in the log.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.closing import CLOSING
from babysit.parsing.runner_exits import RETURNED

_TRIAL_CLOSED = lazy_re.compile(
    r"\b[Tt]rial\s+#?\d+\s+(?:finished with values?:|pruned\b|failed\b)|"
    r"\b[Tt]rial\s+\w+_\d{5}\s+(?:completed|errored|terminated)\b")
_LEAST_TRIALS = 2  # trials closed before the log is read as a search's


class SearchTrials:
    """Counts the trials a search closed; while it is one, a trainer's completion is a
    trial's."""

    def __init__(self) -> None:
        self._closed = 0

    def line(self, text: str) -> None:
        if self._closed < _LEAST_TRIALS and "rial" in text \
                and _TRIAL_CLOSED.search(text) is not None:
            self._closed += 1

    @property
    def searching(self) -> bool:
        return self._closed >= _LEAST_TRIALS

    def trial_ends(self, events: list[LogEvent]) -> list[LogEvent]:
        """`events` without the completions a trial's trainer said, or that its loop
        reached its plan (not the process's exit status: the search's process returned;
        nor a closing block the search did not print between its trials, its summary)."""
        if not self.searching:
            return events
        return [e for e in events if e.kind is not EventKind.COMPLETED
                or e.detail in (RETURNED, CLOSING)]

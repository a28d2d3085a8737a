"""Nested training loops counted in a record's own metrics: an inner counter that starts
again while an outer one moves on begins a new stage, with a loss of its own level.

A bilevel or alternating optimisation (learn the weights for some inner epochs, then
the source weights, again and again) prints both counters on every line and minimises a
fresh objective in each round: `epoch_out: 1, epoch_in: 0, loss: 1.488` after
`epoch_out: 0, epoch_in: 9, loss: -1.525`. The loss falling from about 1 to below 0 within
each round and jumping back at the next is the loop's shape, not a divergence, so the
loss is judged against each round's own level. The counter that starts again must be
named as the inner loop's (`epoch_in`, `inner_epoch`): an epoch's batch index (`iter: 0`
after `iter: 499`) or a patience count (`epochs_since_best`) also goes back while the
epoch goes on, and those are one training, judged as one. A counter that goes back alone
(the run restarted) is left to the step's and the epoch's own handling.

An outer loop of whole trainings is counted the same way: a repetition's number on every
line (PGL's `Run:1, Epoch: 55, Train: 86.67%, …` after `Run:0, Epoch: 5000`, a k-fold's
`fold: 2`, a seed's, a trial's) that changes starts a training of its own, judged against
its own past, not against the one before it (ten runs' validation curves read as one
went "far worse than its best" at every new run's first epochs).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from babysit import lazy_re

# A count of epochs or rounds, by its name (`epoch_out`, `inner_epoch`, `round`).
_COUNTER = lazy_re.compile(r"epoch|round", re.IGNORECASE)
# ... and the inner loop's, by a word that says so.
_INNER = lazy_re.compile(r"(?:^|[/_ .-])(?:in|inner|sub)(?:$|[/_ .-])", re.IGNORECASE)


# A repetition's number, by its name: a whole training's, not a stage's.
_REPEAT = lazy_re.compile(r"^(?:run|runs|fold|seed|trial|repeat|repetition|rep|exp|"
                          r"experiment)(?:_?(?:id|idx|no|num|index))?$", re.IGNORECASE)


# A stage's number, by its name: a continual learner's task (`task=3  epoch=0
# train_loss=1.52`), a curriculum's stage. Each is a new objective for the same model,
# its loss of its own level; the model carries over (not a repetition's fresh start).
_STAGE = lazy_re.compile(r"^(?:task|experience|stage|phase|curriculum)(?:_?(?:id|idx|no|num|"
                         r"index))?$", re.IGNORECASE)


class NestedLoops:
    """Remembers each counter's last value; says when an inner one starts again."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}
        self._repeats: dict[str, float] = {}  # each repetition's number, as last printed
        self._stages: dict[str, float] = {}  # each stage counter's highest number yet

    def round_began(self, metrics: Mapping[str, float]) -> bool:
        """Whether this record starts a new round: of its counters, one went back while
        another went forward since they were last printed."""
        if len(metrics) < 3 or not any("epoch" in k or "round" in k for k in metrics):
            return False  # the cheap test first: most records carry no such counters
        counters = [k for k in metrics if _COUNTER.search(k) and math.isfinite(metrics[k])
                    and metrics[k] == int(metrics[k])]
        if len(counters) < 2:
            return False
        inner_back = outer_forward = False
        for key in counters:
            value, last = metrics[key], self._last.get(key)
            self._last[key] = value
            if last is None:
                continue
            if _INNER.search(key):
                inner_back = inner_back or value < last
            else:
                outer_forward = outer_forward or value > last
        return inner_back and outer_forward

    def repeat_began(self, metrics: Mapping[str, float]) -> bool:
        """Whether this record starts the next repetition of a whole training: a
        repetition's number (`run`, `fold`, `seed`) changed since it was last printed."""
        began = False
        for key, value in metrics.items():
            if not _REPEAT.match(key) or not math.isfinite(value) or value != int(value):
                continue
            last = self._repeats.get(key)
            self._repeats[key] = value
            began = began or (last is not None and value != last)
        return began

    def stage_began(self, metrics: Mapping[str, float]) -> bool:
        """Whether this record starts the next stage: a stage's number (`task`,
        `stage`) went past the highest printed before. Only forward: a multi-task
        loop that prints each task's loss in turn (`task=0`, `task=1`, `task=0`, …)
        is one training, judged as one, once its tasks have all been seen."""
        began = False
        for key, value in metrics.items():
            if not _STAGE.match(key) or not math.isfinite(value) or value != int(value):
                continue
            highest = self._stages.get(key)
            if highest is None or value > highest:
                self._stages[key] = value
                began = began or highest is not None
        return began

"""A bar around the whole of training, run to its end: the outer loop's plan done.

A notebook that fits one model per day, per fold or per seed wraps the loop in a bar
(`for day in tqdm(days):`): drawn at `0/10` before anything trains, then at `1/10`,
`2/10` … as each fit ends, each fit counting its own iterations from 0 again (CatBoost's
`0: learn: 0.48 … 99: learn: 0.27 … remaining: 0us`, sixty times over), and at last
`100%|██████████| 10/10 [39:05<00:00, 234.52s/it]`. That last draw is every planned
round done, as an `Epochs: 100%| 20/20` bar is (see `bar_steps`); but a bar run to its end
is as often one epoch's batches, the next epoch's bar coming after it.

What tells the outer bar from an inner one is what happened inside it: the training's
own counter started again from the beginning inside it, once for each round it counts
(each fit is a new loop). An epoch's bar sees its batches' counter rise, never restart;
the restarts come between its passes. So: a bar first drawn at 0 before any training,
later at its total, with at least one restart of the training's counter for each round
but the first, in between, says the run's plan is done.
"""

from __future__ import annotations

from babysit.model import EventKind, LogEvent
from babysit.parsing.bars import Bar
from babysit.parsing.final_epoch import FINAL_EPOCH


class EnclosingBars:
    """Notes the bars drawn at 0 before training; a COMPLETED event when one of them ends
    with the training's counter restarted inside it once per round."""

    def __init__(self) -> None:
        # (description, total) -> the training counter's restarts when it was drawn at 0
        self._opened: dict[tuple[str, int], int] = {}
        self._done = False

    def see(self, bar: Bar, trained: bool, restarts: int) -> LogEvent | None:
        """The completion `bar` says, if any; `trained`: training moved on before this
        line; `restarts`: how often the training's counter went back so far."""
        total = bar.total
        if self._done or total is None or total < 2 or bar.data_pass:
            return None
        key = (bar.desc, total)
        if bar.n == 0:
            if not trained and len(self._opened) < 8:
                self._opened.setdefault(key, restarts)
            return None
        opened = self._opened.get(key)
        if bar.n != total or opened is None or restarts - opened < total - 1:
            return None
        self._done = True
        return LogEvent(EventKind.COMPLETED, f"{bar.desc or 'the outer bar'}: {bar.n}/{total}, "
                        f"every round trained", FINAL_EPOCH)

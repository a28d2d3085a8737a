"""A Keras `fit` called inside an outer loop, seen from the middle of that loop.

Scripts that train in rounds call `model.fit(..., epochs=1)` once per round and print the
round's counter above it: DeepSpell's `Iteration 165`, then `Train on 1580553 samples …`,
`Epoch 1/1` and the epoch's bar (sealed-9). That `Epoch 1/1` is the call's plan, not the
run's, and the bar reaching its total ends the call. Where the log shows the loop from its
start (`epoch 1`, `Epoch 1/1`, …, `epoch 59`: sealed-5's char-LSTM notebook) babysit keeps
reading the last call's end as it did; but a log whose first call already stands deep in
the loop (its round counter above 1, no earlier call seen) is a window on a longer run:
the round's end says nothing of the run's, whose plan the log never gave. So is a log
whose headers' totals move on with their epochs (`Epoch 118/118`, `Epoch 119/119`: one
epoch a call, `initial_epoch` and `epochs` both moved each round).
"""

from __future__ import annotations

from babysit import lazy_re

# A line that is only an outer loop's counter: `Iteration 165`, `epoch 56`, `Round 3`,
# `=== Generation 12 ===`.
_ROUND = lazy_re.compile(r"^[\s#=*~<>|\[\]-]*(?:[Ii]teration|ITERATION|[Rr]ound|ROUND|"
                         r"[Gg]eneration|[Cc]ycle|[Ee]poch|EPOCH)[\s:#]+(\d+)"
                         r"[\s#=*~<>|\[\]:.-]*$")
# Cheap literal pre-checks (most lines have none).
HINTS = ("teration", "ITERATION", "ound", "ROUND", "eneration", "ycle", "poch", "EPOCH")


class OuterRounds:
    """Watches round counters and the first Keras `fit` header after one."""

    def __init__(self) -> None:
        self._round: int | None = None  # the latest round counter seen
        self._fits = 0  # Keras epoch-1 headers seen (one per `fit` call)
        self.window = False  # decided at the first call: the log began deep in the loop
        self._header: tuple[int, int] | None = None  # the last `Epoch k/K` header
        self._moved = 0  # headers whose total moved on with the epoch

    def line(self, text: str) -> None:
        """Note a line that may be a round's counter."""
        match = _ROUND.match(text)
        if match is not None:
            self._round = int(match.group(1))

    def fit_header(self, epoch: int, epochs: int) -> None:
        """A Keras `Epoch k/K` header: the first call's round decides `window`. A "round"
        equal to the call's own plan is that plan, said among the settings (`- Epoch: 1000`
        above `Epoch 1/1000`), not a loop around the call."""
        last, self._header = self._header, (epoch, epochs)
        if epoch == epochs and last is not None and last == (epoch - 1, epochs - 1):
            # `Epoch 118/118`, then `Epoch 119/119`: one epoch a call, the call's
            # `initial_epoch` and `epochs` both moved on each round (sealed-19's FCRN):
            # each header's total is the call's, and the run's plan is not in the log.
            self._moved += 1
            self.window = self.window or self._moved >= 2
        if epoch != 1:
            return
        self._fits += 1
        if self._fits == 1:
            self.window = self._round is not None and 1 < self._round != epochs

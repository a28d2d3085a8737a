"""An epoch that replays the one before it, loss for loss: the weights are not changing.

A model whose weights stay put scores each batch the same every time it sees it; with
the data in the same order each epoch (no shuffling, or a fixed seed per epoch), the loss
at each batch of an epoch is then the very value it had at that batch of the epoch before.
A model that learns, however slowly, moves its losses in their last printed digit long
before an epoch is over. So where the losses a whole stretch of one epoch printed are,
batch for batch, those of the epoch before (a Lightning bar's `loss=-0.45`, `-0.431`,
`-0.419` … at the same batches of epochs 8 and 9, and of every epoch since the first),
nothing is being learned: the optimiser does not step, its rate is 0, the parameters are
frozen or detached from the loss. A loss that is one value throughout is the identical-
loss test's; this one needs a loss that moves within the epoch (five values at least).

The epoch's length is the step's ratio to the record's fractional epoch (`step 1133,
epoch 1.047`: 1082 steps an epoch), read where the run prints both; a run that shuffles
its data, or prints its epoch rounded (Hugging Face's `'epoch': 0.37`), never matches, and
is never judged so.
"""

from __future__ import annotations

import math
from collections import deque

# Comparisons (a loss with one printed at the same batch of the epoch before) before
# speaking, and the share of the latest of them that must be equal; fewer equal than
# `_APART` of them says the epochs differ again. 24 exact matches in place, of five or
# more values, are no chance: four epochs of a loop printing six losses an epoch.
_WINDOW = 100
_COMPARED = 24
_EQUAL = 0.98
_APART = 0.5
_DISTINCT = 5  # values among the equal ones at least: a loss that moves within the epoch
_MIN_EPOCH = 10  # steps an epoch at least (a shorter one is few batches, easily alike)
_MIN_EPOCH_READ = 0.2  # the fractional epoch the length is read at, at least (precision)
_KEPT = 20_000  # steps whose losses are kept, at most
_AT_ONE_STEP = 4  # losses kept at one step (its own, its epoch's summary …)


class EpochReplay:
    """Follows (step, epoch, loss) of training records; `observe` says when the latest
    comparisons show an epoch replaying the one before (see the module's docstring)."""

    def __init__(self) -> None:
        self._length: int | None = None  # steps an epoch
        self._losses: dict[int, list[float]] = {}
        self._order: deque[int] = deque()
        self._compared: deque[tuple[bool, float]] = deque(maxlen=_WINDOW)
        self.replaying = False

    def observe(self, step: int | None, epoch: float | None, loss: float) -> bool | None:
        """True the first time the epochs replay, False the first time they differ again
        after that, None otherwise."""
        if step is None or not math.isfinite(loss):
            return None
        if self._length is None:
            self._length = _epoch_length(step, epoch)
        # Only the last epoch's losses are ever looked up: older ones are dropped (and
        # an epoch longer than `_KEPT` steps is judged on its latest stretch). Until the
        # epoch's length is read, the losses are kept too: the first epoch's, printed
        # at whole epochs (`epoch 0 step 100/639`), are the second's to compare with.
        while self._order and ((self._length is not None
                                and self._order[0] < step - self._length)
                               or len(self._losses) >= _KEPT):
            self._losses.pop(self._order.popleft(), None)
        # (a step may print more than one loss, its own and its epoch's summary after it,
        # `epoch loss=27.2237`: each is compared with the one in its place an epoch ago)
        if step not in self._losses:
            self._order.append(step)
            self._losses[step] = []
        at_step = self._losses[step]
        if len(at_step) >= _AT_ONE_STEP:
            return None  # a step that never moves (a bar's count read again): no place
        at_step.append(loss)
        if self._length is None:
            return None
        earlier = self._losses.get(step - self._length)
        before = earlier[len(at_step) - 1] if earlier and len(earlier) >= len(at_step) else None
        if before is None:
            return None
        self._compared.append((before == loss, loss))
        equal = sum(same for same, _ in self._compared)
        if not self.replaying and len(self._compared) >= _COMPARED \
                and equal >= _EQUAL * len(self._compared) \
                and len({value for same, value in self._compared if same}) >= _DISTINCT:
            self.replaying = True
            return True
        if self.replaying and equal < _APART * len(self._compared):
            self.replaying = False
            return False
        return None

    def describe(self, step: int | None) -> str:
        compared = len(self._compared)
        equal = sum(same for same, _ in self._compared)
        return (f"not learning: the epoch replays the one before it loss for loss ({equal} "
                f"of the last {compared} losses are exactly the value printed at the same "
                f"batch {self._length} steps earlier, up to step {step}): the model scores "
                f"each batch as it did an epoch ago, so its weights are not changing (an "
                f"optimiser that does not step, a learning rate of 0, frozen parameters)")


def _epoch_length(step: int, epoch: float | None) -> int | None:
    """Steps an epoch, from a record's step and its fractional epoch (None where the
    epoch is whole, missing or too early to read the ratio precisely)."""
    if epoch is None or epoch < _MIN_EPOCH_READ or epoch == int(epoch) or step <= 0:
        return None
    length = step / epoch
    rounded = round(length)
    if rounded < _MIN_EPOCH or abs(length - rounded) > 0.01 * rounded:
        return None
    return rounded

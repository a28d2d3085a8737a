"""Whether a loop's last count is where a plan would have put its end.

A run that announced no plan still has one: people set `epochs=100` or `n_epochs=500`,
not 137. A log that stops, after its last training record, at a count of completed
epochs that is such a number (100 epochs counted 0..99: sealed-5's Keras CSVLogger file)
stopped where a finished loop stops — and a live run stopped there only by chance, since
the count it stands at is anywhere. That is evidence of an end, never of a success (see
`loop_over`: ENDED, "outcome not confirmed"), and only where the run gave no plan (a
plan decides by itself: `loop_over.LoopOver.judge` is told whether there was one).

The numbers are few on purpose, so that a live run seldom lands on one: a count of
whole units (epochs, or a counter that moves by one at every record, as an epoch does)
is round at 1, 2, 2.5 or 5 times a power of ten, from 100 (100, 200, 250, 500, 1000: one
stop in a hundred or more of a run logged at each unit); beside a sign of its own (the
schedule at its end), at 3, 4 or 8 times one too (the 300, 400 and 800 epochs of vision
and self-supervised recipes). A step counter printed every few
hundred steps is no evidence (`Global Step: 10000` is as often a live run's print as a
finished one's), nor is a count below 100 (a run seen at `Epoch 50` with no plan may as
well go on).

Nor is a log whose last line announces work begun and not finished (`Evaluating...`, a
trailing ellipsis): the process was in the middle of something when the log was read.
"""

from __future__ import annotations

# The leading digits of a count a plan names (times a power of ten), and those the epochs
# of vision and self-supervised recipes add (DeiT's 300, MAE's 400 and 800, MoCo v3's
# 300): common enough in plans, and in live runs' counts too, so these only beside a sign
# of their own (a schedule at its end there).
_LEADS = (1, 2, 5)
_RECIPE_LEADS = (3, 4, 8)
# The smallest count of units a plan is read from.
_MIN_ROUND = 100
# Training records the loop printed before its count says anything.
MIN_RECORDS = 10


def round_units(done: int, recipes: bool = False) -> bool:
    """Whether `done` completed units is a count a plan names: 1, 2, 2.5 or 5 times a power
    of ten, from `_MIN_ROUND` (100, 200, 250, 500, 1000, …); with `recipes`, also 3, 4 or 8
    times one (300, 400, 800)."""
    if done < _MIN_ROUND:
        return False
    scale = 1
    while scale * 10 <= done:
        scale *= 10
    if done % scale == 0 and (done // scale in _LEADS
                              or (recipes and done // scale in _RECIPE_LEADS)):
        return True
    # a quarter of the next power: 250, 2500 (minitorch's `Epoch 250`, sealed-9)
    return (2 * done) % scale == 0 and 2 * done // scale == 5


def under_way(line: str) -> bool:
    """Whether `line` announces work begun and not yet finished (`Evaluating...`,
    `Saving checkpoint…`): a trailing ellipsis."""
    text = line.rstrip()
    return text.endswith("...") or text.endswith("\u2026")


def completed(count: float, first: float | None) -> int | None:
    """The count of units done when the last record reads `count`: a counter that began
    at 0 names the unit under way (`Epoch 99` is the hundredth), one that began at 1 the
    units done. None for a counter that is not a whole number."""
    if count != int(count):
        return None
    return int(count) + (1 if first == 0 else 0)

"""Whether a training loss's whole-run sparkline shows any learning (issue 24, item 2).

A tracker's closing sparkline (`parsing/tracker_history`) scales each metric between its
own least and greatest value, so no height says how much the loss fell: only its shape
can. A loss that learned starts high and settles low; the spikes of a noisy one may
reach the top again, but its level still falls. A loss that never learned wanders over
the whole height from its first bar to its last:

    loss ▃▆█▆▅▂▅▆▅▇▇▅▃▇▆█▄▅▇▆▇▆▃▂▄▇█▅▄█▃▃▃▃▆▄▆▄▄▁   (PaliGemma, 5000 steps at lr 0.01)

Judged on a training loss's sparkline of 20 bars or more, not flat (a constant prints
one height throughout, and says nothing here): its last third (the final bar left out: a
lucky last batch) sits within one height of its first third (medians), and its second
half reaches the top two heights again. Healthy public runs' sparklines fall by four
heights or more, their second half below the middle (`█▅▅▃▂▂▁▁▁…`, `▇██▇▆▅▄▃▃▃▃▂▃▂▁▂…`).

The sparkline is one curve only when the history holds one training. A script that trains
many models under one W&B run (cross-validation folds, one model a patient, a sweep in a
loop) logs each from its start again, and its counter's own row says so: an epoch or step
that falls back (`epoch ▄▁▅▂▁▂▅▄▅▃▃▂…`, 5-fold CV over 23 patients) where one training's
only climbs (`step ▁▁▁▁▂▂▂▂▂▃▃▃…`). Its loss row is then many curves end to end, each
starting high again, and its wandering says nothing about learning (`restarted_counter`).
"""

from __future__ import annotations

import re
import statistics
from itertools import pairwise

_LEAST_BARS = 20
_TOP = 6  # of 0-7: the top two heights
_FALL = 1  # heights: a fall this small between the first and last thirds is none
# A training loss's name, whole: `loss`, `train/loss`, `train_loss`, `Loss/train`,
# `training_loss` (not a term of it, an evaluation's, or a count such as `Loss/iter`).
_TRAIN_LOSS = re.compile(r"(?:train(?:ing)?[/_.])?loss(?:[/_.]train(?:ing)?)?", re.IGNORECASE)
# A training's own counter, whole: `epoch`, `step`, `global_step`, `trainer/global_step`,
# `train/epoch`, `iteration` (not `steps_per_second` or `epoch_time`, which may fall).
_COUNTER = re.compile(r"(?:\w+[/_.])?(?:global_)?(?:epoch|step|iter|iteration)s?", re.IGNORECASE)


def restarted_counter(name: str, heights: str) -> str | None:
    """Why a counter's sparkline (`heights`: one digit 0-7 per bar) shows the history
    holds several trainings one after another (it falls back at least once), or None (it
    is no counter, or it only climbs)."""
    if not _COUNTER.fullmatch(name) or not heights.isdecimal():
        return None
    falls = sum(1 for before, after in pairwise(heights) if after < before)
    if falls == 0:
        return None
    return (f"the history's {name} row falls back {falls} times: it holds several "
            f"trainings one after another (folds, restarts), so its loss row is no one "
            f"curve")


def unlearned_history(name: str, heights: str) -> str | None:
    """Why a training loss's sparkline (`heights`: one digit 0-7 per bar) shows no
    learning over the run, or None (it does, or it says too little, or it is no training
    loss)."""
    if not _TRAIN_LOSS.fullmatch(name) or len(heights) < _LEAST_BARS \
            or not heights.isdecimal() or len(set(heights)) == 1:
        return None
    levels = [int(h) for h in heights]
    third = len(levels) // 3
    first = statistics.median(levels[:third])
    last = statistics.median(levels[-third - 1:-1])
    second_half = levels[len(levels) // 2:-1]
    if first - last > _FALL or max(second_half) < _TOP:
        return None
    return (f"the run's own history of {name} ({len(levels)} bars, each scaled between its "
            f"least and greatest value) shows no fall: its last third sits at height "
            f"{last:g} of 7 against {first:g} for its first, and its second half climbs back "
            f"to {max(second_half)} of 7; the final value is one point of a loss that "
            f"wandered over its whole range")

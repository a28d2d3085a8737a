"""Two measures of one split whose order is fixed by their definitions, printed the wrong
way round: one of them is computed wrong.

- A root mean squared error is never below the mean absolute error of the same errors
  (the mean of squares is at least the square of the mean). An NBA points model's report,
  `Mean Absolute Error: 9.43` then `Root Mean Squared Error: 3.43` for each season, takes
  a square root twice; the results table under it repeats the three pairs.
- A top-k accuracy (or a hits@k, a recall@k) never falls as k grows: the answers counted
  at k are counted at any larger k (`acc1 71.2 acc5 68.0` swaps its columns or divides one
  by the wrong count); a top-k error never rises (GluonCV's `err_top1`, `err_top5`). A
  precision at k may go either way and is left alone.

Judged on one record, or on the record just before it (a report that prints each figure
on a line of its own), by names equal but for the measure, so a training split's MAE is
never set against a test split's RMSE.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Mapping

from babysit import lazy_re

# The two error measures by their short and long names, and what the name holds around
# them (`val_rmse`, `eval/root_mean_squared_error`, `RMSE`).
_ERROR = lazy_re.compile(r"^(?P<pre>.*?)(?P<m>rmse|mae|root_mean_squared_error|"
                         r"mean_absolute_error)(?P<post>.*)$", re.IGNORECASE)
_ROOT = ("rmse", "root_mean_squared_error")
# A top-k measure and its k (`acc1`, `top5_acc`, `prec@1`, `hits@10`, `recall@20`), k one
# of the cut-offs scripts report (so `acc1`/`acc2` of two heads are not k's).
# (not a precision at k, which may fall or rise with k: VoxelNet's `pr.prec@10`, `@50`; not
# an index after an underscore, `valid_arithmetic_acc_1` and `_3` are two tasks, and
# `recall_1` a class's recall; not a bare `top1`, `top5`, which fb.resnet.torch prints as
# errors and timm as accuracies)
_AT_K = lazy_re.compile(r"^(?P<pre>.*?)(?P<m>top|acc|hits|recall)(?P<sep>@?)(?P<k>1|3|5|10|20|50|"
                        r"100)(?P<post>(?:_acc\w*|_accuracy|_err\w*|_error)?)$", re.IGNORECASE)
# A top-k error (`err_top5`, `top1_error`): it falls as k grows, the other way round.
_ERROR_WORD = lazy_re.compile(r"err", re.IGNORECASE)
_WHY = {"error": "a root mean squared error is never below the mean absolute error of the "
                 "same errors",
        "top": "a top-k score never falls as k grows (a top-k error never rises)"}
# Room for the rounding of the printed digits: a share of the larger figure.
_ROUNDING = 1e-3


@functools.lru_cache(maxsize=512)
def _role(name: str) -> tuple[str, str, int] | None:
    """(what the name measures apart from the measure, the measure's family, its rank in
    the order): errors rank RMSE above MAE; top-k ranks by k."""
    error = _ERROR.match(name)
    if error is not None:
        rank = 1 if error.group("m").lower() in _ROOT else 0
        return f"{error.group('pre')}|{error.group('post')}".lower(), "error", rank
    at_k = _AT_K.match(name)
    if at_k is not None:
        family = at_k.group("m").lower()
        named = f"{at_k.group('pre')}{at_k.group('post')}".lower()
        if (family in ("hits", "recall") and not at_k.group("sep")) \
                or (family == "top" and "acc" not in named and "err" not in named):
            return None
        family = "top" if family in ("top", "acc") else family
        k = int(at_k.group("k"))
        if _ERROR_WORD.search(at_k.group("pre")) or _ERROR_WORD.search(at_k.group("post")):
            # (an error at k: top-5's is at most top-1's, so the larger k ranks lower)
            return f"{at_k.group('pre')}|{at_k.group('post')}".lower(), family, -k
        return f"{at_k.group('pre')}|{at_k.group('post')}".lower(), family, k
    return None


def out_of_order(metrics: Mapping[str, float],
                 before: Mapping[str, float]) -> tuple[str, str, str] | None:
    """The first pair (lower-ranked name, higher-ranked name, why their order is fixed)
    whose figures break their order, from this record's names (and the record before's,
    for a report a figure a line); None when all agree."""
    placed: dict[tuple[str, str], list[tuple[int, str, float]]] = {}
    for source in (before, metrics):
        for name, value in source.items():
            role = _role(name)
            if role is None or not math.isfinite(value):
                continue
            stem, family, rank = role
            group = placed.setdefault((stem, family), [])
            group[:] = [entry for entry in group if entry[0] != rank]  # this record's wins
            group.append((rank, name, value))
    for (_, family), group in placed.items():
        if len(group) < 2 or not any(name in metrics for _, name, _ in group):
            continue
        group.sort()
        for (_, low, low_value), (_, high, high_value) in itertools.pairwise(group):
            if low_value - high_value > _ROUNDING * max(abs(low_value), abs(high_value)):
                return low, high, _WHY["error" if family == "error" else "top"]
    return None

"""A learning rate printed as 0 by a printer that rounds: below its resolution, not 0.

MMCV's and MMEngine's JSON logs round every float to five decimals (`"lr": 0.0` beside
`"loss_bmn": 1.22508`): at the tail of a decayed schedule the rate reads 0 while it is
3e-6, and the weights still move. Such a
zero says only that the rate is below the resolution the line prints at, so it is left
out of the record: a rule that reads "exactly 0" as no weight change (rules/
learning_rules) would take a schedule's floor for a run that cannot learn. A zero that
means 0 is printed where small values show: in scientific notation (Megatron's
`learning rate: 0.000E+00`), or beside figures printed to their full precision (a Python
dict's `'learning_rate': 0.0` next to `'grad_norm': 1.2683924436569214`).
"""

from __future__ import annotations

from dataclasses import replace

from babysit import lazy_re
from babysit.metric_names import GRAD_NORM_KEYS, LR_KEYS
from babysit.model import Record

# Decimal figures as printed: the digits after the point, and an exponent if any.
_FIGURE = lazy_re.compile(r"(?<![\w.])-?\d+\.(\d+)([eE][-+]?\d+)?")
# A printer that rounds shows at most this many decimals; full precision shows more.
_ROUNDED_DECIMALS = 6
_MIN_DECIMALS = 3  # fewer shows nothing of a rounding (`2.0`, `0.5`)
_LEAST_FIGURES = 3


def _rounds(line: str) -> bool:
    """Whether the line is a JSON record whose floats a rounding printer wrote: fixed
    point, none past `_ROUNDED_DECIMALS` decimals, several at exactly that many (MMCV's
    `round(value, 5)` on every float of its record). A Python repr of an exact 0 looks the
    same as a rounded one (`lr=0.0` beside `loss=2.3050`), so a line of another shape
    keeps its 0."""
    if not line.lstrip().startswith("{") or "e-" in line or "E-" in line \
            or "e+" in line or "E+" in line:
        return False
    figures = _FIGURE.findall(line)
    if len(figures) < _LEAST_FIGURES or any(exponent for _, exponent in figures):
        return False
    widths = [len(digits) for digits, _ in figures]
    widest = max(widths)
    return _MIN_DECIMALS <= widest <= _ROUNDED_DECIMALS \
        and widths.count(widest) >= _LEAST_FIGURES - 1


def unresolved_lr(record: Record, line: str) -> Record:
    """The record without a learning rate of 0 that its line printed rounded."""
    zero = [key for key in LR_KEYS if record.metrics.get(key) == 0.0]
    if not zero or not _rounds(line) \
            or any(record.metrics.get(key) == 0.0 for key in GRAD_NORM_KEYS):
        # (a gradient norm of 0 beside it: no rounding makes both 0 at once, the
        # optimiser is doing nothing)
        return record
    return replace(record, metrics={k: v for k, v in record.metrics.items() if k not in zero})

"""A loss that moves only in its last printed digit (issue 24): TEACH's `Train_rf
4.855e-01` epoch after epoch, now and then 4.854e-01 or 4.856e-01. Printed to four
significant digits, a model that learns moves the loss by many units of the last one;
one that wobbles by one unit for ten points in a row has not changed what it computes,
and the identical-loss test (the very same value) misses it by that single unit.

Pure helpers: the unit of a value's last printed digit, and whether a run of values sits
within one unit of their median.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from decimal import Decimal

_LEAST_DIGITS = 4  # fewer significant digits (0.012) repeat once a loss has converged


def significant_digits(value: float) -> int:
    """Significant digits in the shortest form of a value (10.8259: 6, 0.0008: 1)."""
    return len(repr(abs(value)).lower().split("e")[0].replace(".", "").lstrip("0"))


def last_digit_unit(value: float) -> float | None:
    """The size of one unit in the last printed digit of `value` (0.4855: 1e-4), or None
    when it is printed with fewer than four significant digits."""
    _sign, digits, exponent = Decimal(repr(value)).as_tuple()
    if not isinstance(exponent, int):
        return None  # nan, inf
    significant = len(tuple(digits)) - next((i for i, d in enumerate(digits) if d), 0)
    if significant < _LEAST_DIGITS:
        return None
    return float(Decimal(1).scaleb(exponent))


def within_last_digit(values: Sequence[float]) -> float | None:
    """The median of `values` when every one is within one unit of the last printed digit
    of it (and each is printed to four digits or more); None otherwise."""
    if not values or last_digit_unit(values[-1]) is None:
        return None  # (the newest value alone says it, at a tenth of the cost)
    units = [last_digit_unit(v) for v in values]
    if any(u is None for u in units):
        return None
    unit = max(u for u in units if u is not None)
    centre = statistics.median(values)
    if any(abs(v - centre) > unit * 1.0000001 for v in values):
        return None
    return centre

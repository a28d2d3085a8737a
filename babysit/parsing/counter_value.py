"""A training line that is a step counter and one number: `  10000/ 200000: 2.0576`
(the makemore / "neural networks: zero to hero" loops, `f'{i:7d}/{max_steps:7d}:
{loss.item():.4f}'`, and the notebooks copied from them).

The counter gives the step and the planned total; the number is the one figure the loop
prints, named `value`: most such loops print their loss, but the line does not say so,
and the loss rules are kept to figures a run named.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import to_number

_COUNTER_VALUE = lazy_re.compile(
    r"^\s*(?P<step>\d+)\s*/\s*(?P<total>\d+)\s*:\s*"
    r"(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf)\s*$")


def parse_counter_value(segment: str) -> Parsed | None:
    """`step/total: number` alone on its line, with the step within its total."""
    if "/" not in segment or ":" not in segment:
        return None
    match = _COUNTER_VALUE.match(segment)
    if match is None:
        return None
    step, total = int(match.group("step")), int(match.group("total"))
    value = to_number(match.group("value"))
    if value is None or total < 2 or step > total:
        return None
    return Parsed("counter-value", step, total, metrics={"value": value})

"""A metrics file in long form: one row per figure, `name,step,value`.

Some trainers write their measurements as a tall table rather than a wide one (open_lth's
`logger` file: `test_loss,469,0.10885118408203125`, `test_accuracy,469,0.9669`,
`test_examples,469,10000.0`, each evaluation's figures on rows of their own at the step
they were taken): no header, no names across a line, so none of the wide readers sees a
figure. A row is a name, a whole step and a number (or `nan`, `inf`), apart by commas or
tabs, and nothing else; each row is that figure at that step.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import normalise_key, to_number

_ROW = lazy_re.compile(r"^(?P<name>[A-Za-z][\w./-]{0,80})(?P<sep>[,\t])(?P<step>\d{1,12})"
                       r"(?P=sep)(?P<value>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE]"
                       r"[-+]?\d+)?|nan|NaN|inf|Inf|infinity|Infinity))\s*$")


class LongRows:
    """Reads a row of the long form (stateless: each row stands alone)."""

    def wants(self, text: str) -> bool:
        return ("," in text or "\t" in text) and text[:1].isalpha() \
            and _ROW.match(text) is not None

    def read(self, text: str) -> Parsed | bool | None:
        """The row's figure at its step."""
        row = _ROW.match(text)
        if row is None:
            return None
        value = to_number(row.group("value"))
        if value is None:
            return None
        return Parsed("long-rows", step=int(row.group("step")),
                      metrics={normalise_key(row.group("name")): value})

"""llm.c's own log file (`train_gpt2cu -o logdir`, `main.log`): compact `name:value` lines.

    s:0 tel:11.0095                          the validation loss, every `val_loss_every` steps
    s:1 trl:10.9586 lr:0.000002 norm:15.18   a training step: loss, learning rate, grad norm
    s:250 eval:0.2437                        the HellaSwag accuracy

`s` is the step. llm.c evaluates the validation loss when `step % val_loss_every == 0`
or at the last step, and stops there: a `tel` line off the cadence its earlier ones kept
(`s:19552 tel:3.2731` after 0, 250, …, 19500) is the last step's, so training finished.
"""

from __future__ import annotations

from math import gcd

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.formats import Parsed
from babysit.parsing.text import to_number

_LINE = lazy_re.compile(r"^s:(?P<step>\d+)(?P<rest>(?: [a-z]+:\S+)+)\s*$")
_NAMES = {"trl": "train_loss", "tel": "val_loss", "lr": "lr", "norm": "grad_norm",
          "eval": "eval/hellaswag_acc"}
FINAL_VALIDATION = "final-validation"


def parse_llmc_main_log(segment: str) -> Parsed | None:
    """`s:12 trl:3.25 lr:0.0006 norm:0.23` as step 12; None for any other line, or for
    a line with a name llm.c does not write."""
    if not segment.startswith("s:"):
        return None
    match = _LINE.match(segment)
    if match is None:
        return None
    metrics: dict[str, float] = {}
    for pair in match.group("rest").split():
        name, _, value = pair.partition(":")
        number = to_number(value)
        if name not in _NAMES or number is None:
            return None
        metrics[_NAMES[name]] = number
    return Parsed("llmc", int(match.group("step")), metrics=metrics)


class ValidationCadence:
    """The steps llm.c validated at; a validation off their cadence is the last step's."""

    def __init__(self) -> None:
        self._steps: list[int] = []
        self._every = 0

    def final(self, parsed: Parsed, line: str) -> LogEvent | None:
        """COMPLETED when this `tel` line is the last step's (off the cadence of at
        least three earlier ones), else None."""
        if parsed.fmt != "llmc" or "val_loss" not in parsed.metrics or parsed.step is None:
            return None
        step = parsed.step
        if len(self._steps) >= 3 and self._every and step % self._every and step > self._steps[-1]:
            return LogEvent(EventKind.COMPLETED, line.strip()[:500], FINAL_VALIDATION)
        if step and (not self._steps or step > self._steps[-1]):
            self._every = gcd(self._every, step)
        if not self._steps or step > self._steps[-1]:
            self._steps = [*self._steps[-7:], step]
        return None

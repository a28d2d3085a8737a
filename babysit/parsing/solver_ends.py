"""The iterations a solver says it ran when it finished, as the run's progress when the log
gives no other.

A batch solver (LIBLINEAR, LIBSVM, and the tools built on them) prints no line per
iteration, only progress dots (`*.*..*.*.*`) and then one closing line that says both
that it finished and how far it went:

    optimization finished, #iter = 51
    Objective value = -5086396.653973

That line was read as a completion, but with nothing read before it babysit said it
"could not read training progress" and the run could never be GO. The count in the
closing sentence is the solver's own counter at its end: read as the run's step, the
run finished at step 51. Only for a completion line (a count said part way is no end),
and only in a log with no step or training record of its own (its own counter decides).
"""

from __future__ import annotations

import re
from dataclasses import replace

from babysit import lazy_re
from babysit.model import EventKind, Record
from babysit.parsing.readers import Line, ParseContext

# `#iter = 51` (LIBLINEAR / LIBSVM), `after 51 iterations`, `in 51 iterations`,
# `iterations: 51`, `n_iter = 51`.
_COUNT = lazy_re.compile(
    r"(?:#\s*iter(?:ations?)?|\bn_iter|\biterations?)\s*[:=]\s*(\d+)\b|"
    r"\b(?:after|in)\s+(\d+)\s+iterations?\b", re.IGNORECASE)


class SolverEnds:
    """A RecordReader: the step a solver's closing line gives, for a log whose progress
    nothing else said."""

    def wants(self, line: Line) -> bool:
        text = line.text
        return ("iter" in text or "Iter" in text) and not line.in_traceback

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        if record is None or context.progress_unit != "none" or context.step is not None \
                or not any(e.kind is EventKind.COMPLETED for e in record.events):
            return record
        found = _COUNT.search(line.text)
        if found is None:
            return record
        step = int(found.group(1) or found.group(2))
        if step <= 0:
            return record
        context.step = step
        context.step_found = True
        line.advanced = True
        return replace(record, step=step)

"""Deeplearning4j's score lines: the loss, under the name `score`.

DL4J's `ScoreIterationListener` (deeplearning4j, `optimize/listeners/
ScoreIterationListener.java`) logs `Score at iteration {} is {}` with `model.score()`,
the value of the network's loss function (plus its regularisation) on the last
minibatch. The generic reading of that sentence (`is_sentences`) would name it `score`,
which elsewhere is a return or an evaluation's figure, never a loss to fall: read here
as the loss it is, at the iteration the line names.

    … ScoreIterationListener - Score at iteration 400 is 1.2044959534688522
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import to_number

_SCORE = lazy_re.compile(
    r"\bScore at iteration (\d+) is ([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:NaN|nan|"
    r"Infinity|inf))\b", re.IGNORECASE)


def parse_dl4j_score(text: str) -> Parsed | None:
    """The iteration and loss of a `ScoreIterationListener` line; None for any other."""
    if "core at iteration" not in text:
        return None
    match = _SCORE.search(text)
    if match is None:
        return None
    value = to_number(match.group(2))
    if value is None:
        return None
    return Parsed("dl4j-score", int(match.group(1)), metrics={"loss": value})

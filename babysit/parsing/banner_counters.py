"""A bare number under a banner's rule: the epoch whose block follows.

Some loops print the epoch as a number alone on its line, set apart from the block before
it by a rule (C^3 Framework's crowd-counting validation: `===============+++++++++++++++
===============`, then `45`, then `[mae 64.70 mse 131.48], [val loss 0.1140]` and its
breakdowns). Alone, an integer is a count, an index, a size (see `lone_values`); right
under a rule and greater than the one under the rule before, it heads its block as
`==== Epoch 45 ====` would.
"""

from __future__ import annotations

from babysit import lazy_re

# A rule: a run of marks and nothing else (`=====+++++=====`, `--------`, `########`).
_RULE = lazy_re.compile(r"^[=+*#~_-]{8,}$")
_MARKS = frozenset("=+*#~_-")


class BannerCounters:
    """Notes each line; names the epoch a bare number under a rule heads."""

    def __init__(self) -> None:
        self._after_rule = False
        self._last: int | None = None

    def epoch(self, line: str) -> int | None:
        """The epoch `line` heads, or None; every non-blank line passes here."""
        text = line.strip()
        if not text:
            return None
        after_rule, self._after_rule = self._after_rule, \
            text[0] in _MARKS and _RULE.match(text) is not None  # (a letter test first: every line)
        if not after_rule or not text.isdecimal() or len(text) > 7:
            return None
        value = int(text)
        if self._last is not None and value <= self._last:
            return None
        self._last = value
        return value

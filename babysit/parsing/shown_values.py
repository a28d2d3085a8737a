"""Values shown with the expression that computed them, rewritten as `name = value` pairs.

A hand loop in Julia prints with `@show`, which writes the expression, ` = `, and the
value's repr (Julia's `base/show.jl`, `macro show`): `loss(dataset[1]...) = 0.2`, and
for several expressions at once a tuple of each, `(i, loss(x)) = (3, 0.29)`. Python's
f-string `=` specifier does the same (`loss.item()=0.29`). The expression is no name a
format knows: a call's arguments (`dataset[1]...`) and a tuple's brackets hide the pair.

Rewritten, `(i, loss(x)) = (3, 0.29)` reads `i = 3, loss = 0.29`: a tuple is unzipped
into its pairs, a call is named by what it calls. A loop's index keeps its name (`i` is
no step key): the records are counted, as for any log that prints no step, so a loss
printed once before the loop (`loss(x) = 0.2`) is a point of its own, not one that the
loop's first `i = 1` would collide with.
"""

from __future__ import annotations

import re

from babysit import lazy_re

# A call with its arguments (one level of nesting inside): `loss(dataset[1]...)`,
# `loss(x, y)`, `loss.item()`.
_CALL = lazy_re.compile(r"(?<![\w.])([A-Za-z_][\w.!]*)\((?:[^()]|\([^()]*\))*\)")
# A shown tuple: `(names) = (values)`, the values one level of brackets deep at most.
_TUPLE = lazy_re.compile(r"\(((?:[^()]|\([^()]*\))*)\)\s*=\s*\(((?:[^()]|\([^()]*\))*)\)")
# Not a call on an object's repr (`score(<Font 'cmr10' (cmr10.ttf) normal …>) = 10.05`,
# matplotlib's font matching at DEBUG level, hundreds of lines in a notebook's output;
# the same in newer matplotlib on a dataclass's repr, `score(FontEntry(fname='…',
# weight=700)) = 10.335`, a class's name then its fields by keyword): a library scoring
# its own objects, not a value the training computed.
_CALL_BEFORE_VALUE = lazy_re.compile(
    r"(?<![\w.])([A-Za-z_][\w.!]*)\((?!\s*<)(?!\s*[A-Z]\w*\(\s*[A-Za-z_]\w*\s*=)"
    r"(?:[^()]|\([^()]*\))*\)\s*=\s*"
    r"(?=[-+]?(?:\d|\.\d|nan|inf))",
    re.IGNORECASE)


def _top_level(text: str) -> list[str]:
    """`text` split at the commas outside any brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for at, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:at].strip())
            start = at + 1
    parts.append(text[start:].strip())
    return parts


def _unzipped(names: str, values: str) -> str | None:
    """`i = 3, loss = 0.29` for the tuple `(i, loss(x)) = (3, 0.29)`; None when the two
    sides do not pair up."""
    keys, items = _top_level(names), _top_level(values)
    if len(keys) != len(items) or len(keys) < 2 or not all(keys):
        return None
    called = [_CALL.sub(r"\1", key) for key in keys]  # a call named by what it calls
    return ", ".join(f"{name} = {value}" for name, value in zip(called, items, strict=True))


def shown_pairs(text: str) -> str:
    """`text` with shown expressions rewritten as `name = value` pairs (the very same
    string when it has none)."""
    if ") =" not in text and ")=" not in text:
        return text
    if ") = (" in text or ")=(" in text:
        tuple_ = _TUPLE.search(text)
        if tuple_ is not None:
            unzipped = _unzipped(tuple_.group(1), tuple_.group(2))
            if unzipped is not None:
                return text[:tuple_.start()] + unzipped + text[tuple_.end():]
    rewritten = _CALL_BEFORE_VALUE.sub(r"\1 = ", text)
    return rewritten if rewritten != text else text

"""The literal text a regular expression cannot match without.

Most of babysit's patterns look for words (`CUDA out of memory`, `[Ee]arly stopping`) and
most log lines carry none of them, yet a pattern that may match anywhere in a line is tried
at every position of it: a line of metrics costs a table of such patterns half a
millisecond. `required_literals` reads a pattern's parse tree for a few strings one of
which every match contains (`{"Early stopping", "early stopping"}`); a substring test on
them (C's string search, a fraction of a microsecond) tells most lines apart before the
pattern runs. The strings are a necessary condition only, never a guess: wherever the tree
holds something this module does not follow (case-insensitive parts, back-references,
conditionals), it asks for nothing, and the pattern runs as before.
"""

from __future__ import annotations

import importlib
import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any


def _module(name: str, before_3_11: str) -> Any:
    """The regex parser's modules: private, moved in Python 3.11, same tree in both."""
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - Python 3.10
        return importlib.import_module(before_3_11)


_parse = _module("re._parser", "sre_parse")
_c = _module("re._constants", "sre_constants")

# Known spellings followed at most (`[Ee]arly (?:stop|halt)` is four): their number
# multiplies at every choice.
_MOST = 16
# Strings a requirement may name at most: tested as one alternation of plain text, which
# the engine scans far faster than a pattern's own alternatives with their parts.
_MOST_NEEDED = 256
_SHORTEST = 2  # a gate on one character (`:`, ` `) passes nearly every line

# (exact, need): the strings a node matches when they are few and known (else None), and
# the strings one of which any match of it contains (None: nothing is required).
_Info = tuple["frozenset[str] | None", "frozenset[str] | None"]
_EMPTY: frozenset[str] = frozenset({""})
_UNKNOWN: _Info = (None, None)
_ZERO_WIDTH: _Info = (_EMPTY, None)


def required_literals(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """Strings one of which every match of the pattern contains, or None where none can
    be named (then every line must be tried)."""
    try:
        tree = _parse.parse(pattern, flags)
    except (re.error, RecursionError, TypeError):
        return None
    if tree.state.flags & re.IGNORECASE:
        return None
    exact, need = _sequence(tree)
    return _best([need, exact])


def gate(pattern: str, flags: int = 0) -> Callable[[str], bool] | None:
    """A test a line must pass for the pattern to have a chance of matching it, or None
    where no test worth its cost can be made."""
    need = required_literals(pattern, flags)
    if need is None or min(map(len, need)) < _SHORTEST:
        return None
    if len(need) == 1:
        (word,) = need
        return lambda line: word in line
    # Several strings: one alternation of them, which the regex engine scans in one pass
    # (a loop of substring tests in Python costs several times as much past a few).
    return re.compile("|".join(map(re.escape, sorted(need)))).search  # type: ignore[return-value]


def _best(options: Iterable[frozenset[str] | None]) -> frozenset[str] | None:
    """Of several sufficient requirements, the one that tells most lines apart: its
    shortest string longest, then the fewest strings."""
    usable = [o for o in options if o and "" not in o and len(o) <= _MOST_NEEDED]
    if not usable:
        return None
    return max(usable, key=lambda o: (min(map(len, o)), -len(o)))


def _join(left: frozenset[str], right: frozenset[str]) -> frozenset[str] | None:
    if len(left) * len(right) > _MOST:
        return None
    return frozenset(a + b for a, b in itertools.product(left, right))


def _sequence(items: Iterable[Any]) -> _Info:
    """A concatenation: runs of known text joined, and the best requirement among them
    and the parts that are not known text."""
    run: frozenset[str] | None = _EMPTY  # the known text since the last unknown part
    whole = True  # every part so far known text
    needs: list[frozenset[str] | None] = []
    for item in items:
        exact, need = _node(item)
        needs.append(need)  # what a part needs, every match of the whole needs
        joined = _join(run, exact) if run is not None and exact is not None else None
        if joined is not None:
            run = joined
            continue
        whole = False
        needs.append(run)
        run = exact if exact is not None else _EMPTY
    needs.append(run)
    return (run if whole else None), _best(needs)


def _node(item: Any) -> _Info:
    op, av = item
    if op is _c.LITERAL:
        return frozenset({chr(av)}), None
    if op in (_c.AT, _c.ASSERT_NOT):
        return _ZERO_WIDTH  # consumes nothing, so asks nothing of the text
    if op is _c.ASSERT:
        # A lookaround consumes nothing, but what it looks at is in the line all the same.
        _direction, sub = av
        exact, need = _sequence(sub)
        return _EMPTY, _best([need, exact])
    if op is _c.IN:
        return _char_set(av)
    if op is _c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        if add_flags & re.IGNORECASE:
            return _UNKNOWN
        return _sequence(sub)
    if op is getattr(_c, "ATOMIC_GROUP", None):
        return _sequence(av)
    if op is _c.BRANCH:
        return _branch(av[1])
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        return _repeat(*av)
    return _UNKNOWN  # any character, a category, a back-reference, a conditional


def _char_set(items: Any) -> _Info:
    """`[Ee]`: a few literal characters are alternatives; anything else is unknown."""
    chars = [av for op, av in items if op is _c.LITERAL]
    if len(chars) != len(items) or len(chars) > _MOST:
        return _UNKNOWN
    return frozenset(map(chr, chars)), None


def _branch(alternatives: list[Any]) -> _Info:
    infos = [_sequence(alt) for alt in alternatives]
    exacts = [e for e, _ in infos if e is not None]
    exact = frozenset().union(*exacts) if len(exacts) == len(infos) else None
    if exact is not None and len(exact) > _MOST:
        exact = None
    needs = [_best([n, e]) for e, n in infos]
    sure = [n for n in needs if n is not None]
    need = frozenset().union(*sure) if len(sure) == len(needs) else None
    return exact, need


def _repeat(least: int, most: int, sub: Any) -> _Info:
    exact, need = _sequence(sub)
    if least == 0:
        if most == 1 and exact is not None and len(exact) < _MOST:
            return exact | _EMPTY, None  # `colou?r`: either spelling, both known
        return _UNKNOWN
    if least == most == 1:
        return exact, need
    return None, _best([need, exact])

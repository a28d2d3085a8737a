"""Regular expressions compiled on first use.

babysit knows several hundred line shapes; compiling all of them at import took about
half of a `--once` run's start-up, yet a given log meets only the few its lines reach
(most patterns sit behind a substring test). `compile` returns a stand-in that compiles
the pattern the first time any of its methods or attributes is asked for, then keeps the
compiled pattern's own bound methods as its attributes, so a use after the first costs
what a compiled pattern's does. Where the pattern cannot match without some literal text
(`babysit.literal_gate`), its `search`, `match` and `fullmatch` first look for that text,
and a line without it is answered at once.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import Any, AnyStr, Generic

from babysit.literal_gate import gate

# Every pattern alive, so a test can hold each one's gate to its pattern.
MADE: weakref.WeakSet[LazyPattern[Any]] = weakref.WeakSet()


class LazyPattern(Generic[AnyStr]):
    """A `re.Pattern` that compiles itself when first used."""

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self._source: AnyStr = pattern
        self._flags = flags
        MADE.add(self)

    def __getattr__(self, name: str) -> Any:
        # Reached only for what is not yet an attribute: the first use.
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        search, match, fullmatch = compiled.search, compiled.match, compiled.fullmatch
        passes = gate(self._source, self._flags) if isinstance(self._source, str) else None
        if passes is not None:
            # A line without the text every match needs is answered before the pattern
            # runs (`literal_gate`): most lines meet most patterns without it.
            search, match, fullmatch = (_gated(passes, method) for method in
                                        (search, match, fullmatch))
        self.__dict__.update(
            search=search, match=match, fullmatch=fullmatch,
            finditer=compiled.finditer, findall=compiled.findall, sub=compiled.sub,
            subn=compiled.subn, split=compiled.split, pattern=compiled.pattern,
            flags=compiled.flags, groups=compiled.groups, groupindex=compiled.groupindex,
            compiled=compiled)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_re.compile({self._source!r})"


def _gated(passes: Callable[[str], bool], method: Callable[..., Any]) -> Callable[..., Any]:
    def gated(string: str, *args: Any, **kwargs: Any) -> Any:
        return method(string, *args, **kwargs) if passes(string) else None
    return gated


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile`, deferred to the pattern's first use."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]

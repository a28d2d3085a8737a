"""Regular expressions compiled on first use.

babysit knows several hundred line shapes; compiling all of them at import took about
half of a `--once` run's start-up, yet a given log meets only the few its lines reach
(most patterns sit behind a substring test). `compile` returns a stand-in that compiles
the pattern the first time any of its methods or attributes is asked for, then keeps the
compiled pattern's own bound methods as its attributes, so a use after the first costs
what a compiled pattern's does.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, Generic


class LazyPattern(Generic[AnyStr]):
    """A `re.Pattern` that compiles itself when first used."""

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self._source: AnyStr = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # Reached only for what is not yet an attribute: the first use.
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        self.__dict__.update(
            search=compiled.search, match=compiled.match, fullmatch=compiled.fullmatch,
            finditer=compiled.finditer, findall=compiled.findall, sub=compiled.sub,
            subn=compiled.subn, split=compiled.split, pattern=compiled.pattern,
            flags=compiled.flags, groups=compiled.groups, groupindex=compiled.groupindex,
            compiled=compiled)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_re.compile({self._source!r})"


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile`, deferred to the pattern's first use."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]

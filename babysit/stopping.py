"""Why this process is being stopped, as the signal handlers saw it.

A signal handler may run in the middle of any import, so it must not import anything
itself: it writes here (a module with no imports, loaded before the handlers are
installed), and the watch reads it when it winds down."""

from __future__ import annotations

_REASON = ["interrupted by the user (Ctrl-C)"]


def note(reason: str) -> None:
    _REASON[0] = reason


def reason() -> str:
    return _REASON[0]

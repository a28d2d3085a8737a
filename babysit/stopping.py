"""Why this process is being stopped, as the signal handlers saw it.

A signal handler may run in the middle of any import, so it must not import anything
itself: it writes here (a module with no imports, loaded before the handlers are
installed), and the watch reads it when it winds down."""

from __future__ import annotations

import sys  # (built in and loaded before any Python code runs: no import work)

_REASON = ["interrupted by the user (Ctrl-C)"]


# Whether a stop was asked for. The handler raises KeyboardInterrupt as well, but Python
# may swallow it: one that lands in a callback (importlib's module-lock `cb`, a weakref's)
# is printed as "Exception ignored" and lost. The watch checks this before each wait.
_REQUESTED = [False]


def note(reason: str) -> None:
    _REASON[0] = reason
    _REQUESTED[0] = True


def requested() -> bool:
    return _REQUESTED[0]


def note_swallowed_stops(unraisable: sys.UnraisableHookArgs) -> None:
    """`sys.unraisablehook`: a stop raised where Python cannot pass it on (an import's
    module-lock callback, a finaliser) is printed as "Exception ignored in" and lost.
    Keep it instead, and say nothing: the watch honours it where it may. Installed as the
    first thing `python -m babysit` does, before babysit's own handlers: until they are
    in, Python's default Ctrl-C handler raises the KeyboardInterrupt, and one swallowed
    there was forgotten (the watch then ran on, deaf to the Ctrl-C)."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        if not _REQUESTED[0]:  # (babysit's own handler noted it, and why, already)
            note("interrupted by the user (Ctrl-C)")
        return
    sys.__unraisablehook__(unraisable)


def reason() -> str:
    return _REASON[0]


# Whether a watch session began in this process: from then on, an interruption ends
# with a verdict file; before it, with a sentence saying there is none.
_SESSION_STARTED = [False]


def session_started() -> bool:
    return _SESSION_STARTED[0]


def mark_session_started() -> None:
    # A stop asked of an earlier watch in this process is not this one's; one asked before
    # any watch began is (a Ctrl-C whose KeyboardInterrupt an import's callback swallowed
    # during start-up: forgetting it here left the watch running, deaf to it).
    if _SESSION_STARTED[0]:
        _REQUESTED[0] = False
    _SESSION_STARTED[0] = True


# Whether a stop may raise where it lands. While babysit writes what the user is owed
# (setting a watch up, writing its verdict) a stop is only noted; it is raised where
# babysit waits (opening the target, the watch itself), which then ends with a verdict.
# A stack, not a flag: the blocks nest (a watch inside a held session).
_RAISES = [True]


def may_raise() -> bool:
    return _RAISES[-1]


class _Raising:
    def __init__(self, raises: bool) -> None:
        self._raises = raises
        self._depth = 0

    def __enter__(self) -> None:
        self._depth = len(_RAISES)
        _RAISES.append(self._raises)
        if self._raises and _REQUESTED[0]:
            # a stop held until now lands here, the first place it may
            del _RAISES[self._depth:]
            raise KeyboardInterrupt

    def __exit__(self, *_: object) -> None:
        # (truncated, not popped: a stop landing inside __enter__ skips this exit)
        del _RAISES[self._depth:]


def held() -> _Raising:
    """A block in which a stop signal is noted and not raised."""
    return _Raising(False)


def interruptible() -> _Raising:
    """A block inside a held one where a stop is raised again — at once, if one was
    noted while it was held."""
    return _Raising(True)

"""The `babysit` command, and the one way out of it: every exit status and every
interruption that is not part of a watch's own verdict ends here.

Signals are taken care of before anything heavy is imported. SIGTERM (a scheduler,
`kill`) and SIGHUP (a closed terminal or SSH session) end a watch the way Ctrl-C does —
with a verdict file, written by the watch itself — and one that arrives before the watch
began says so instead of printing a traceback."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from types import FrameType

from babysit import stopping
from babysit.exit_codes import NO_VERDICT, ExitCode

_NAMES: dict[int, str] = {
    signal.SIGINT: "interrupted by the user (Ctrl-C)",
    signal.SIGTERM: "terminated (SIGTERM)",
    signal.SIGHUP: "hung up (SIGHUP: the terminal or SSH session closed)",
}


def _stop(signum: int, frame: FrameType | None) -> None:
    # No import here: the signal may arrive half-way through one.
    stopping.note(_NAMES.get(signum, f"signal {signum}"))
    if stopping.may_raise():  # (while the verdict is written, it waits its turn)
        raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    sys.unraisablehook = stopping.note_swallowed_stops
    try:
        # (inside the guard: a Ctrl-C may land while the handlers are being installed)
        for number in _NAMES:
            signal.signal(number, _stop)
        from babysit.cli import main as run

        code = run(argv)
    except KeyboardInterrupt:  # outside a watch: nothing below turned it into a verdict
        code = ExitCode.INTERRUPTED
    except RuntimeError as error:
        if not _from_interrupt(error):
            raise
        code = ExitCode.INTERRUPTED
    if code == ExitCode.INTERRUPTED and not stopping.session_started():
        sys.stderr.write(NO_VERDICT + "\n")
    _leave_stragglers(code)
    return int(code)


def _from_interrupt(error: BaseException) -> bool:
    """Whether an error is an interruption in disguise: Python 3.11 wraps an exception
    raised while a class is being built (a signal landing in a dataclass's
    `__set_name__` during an import) in a RuntimeError."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _leave_stragglers(code: int) -> None:
    """A notifier still stuck past its deadline (a server that trickles its answer) runs
    in a worker thread the interpreter would wait for at exit (thread pools are joined
    at shutdown, daemon or not). The verdict is written by now; leave without waiting."""
    stuck = [t for t in threading.enumerate()
             if t is not threading.main_thread() and t.is_alive()]
    if stuck:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)

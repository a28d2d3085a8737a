"""The `babysit` command: signals are taken care of before anything heavy is imported.

SIGTERM (a scheduler, `kill`) and SIGHUP (a closed terminal or SSH session) end a watch
the way Ctrl-C does — with a verdict file — and one that arrives before the watch began
says so instead of printing a traceback."""

from __future__ import annotations

import signal
import sys
from types import FrameType

_NAMES = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGHUP: "hung up (SIGHUP: the "
          "terminal or SSH session closed)"}


def _stop(signum: int, frame: FrameType | None) -> None:
    from babysit.core.reports import interrupted_by

    interrupted_by(_NAMES.get(signal.Signals(signum), f"signal {signum}"))
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    for number in _NAMES:
        signal.signal(number, _stop)
    try:
        from babysit.cli import main as run

        return run(argv)
    except KeyboardInterrupt:
        sys.stderr.write("babysit: interrupted before the watch began: no verdict written\n")
        return 130

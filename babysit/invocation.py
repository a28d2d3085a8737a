"""How this babysit was started, so that a command it proposes runs the same program.

A next command (`babysit … --once --json`) or a crontab line must find the babysit
that is running now: one started by its full path (`~/venv/bin/babysit`) or as
`python -m babysit` may not be on the PATH of the shell, agent or cron that runs it."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence


def running_babysit(argv: Sequence[str] | None = None, executable: str | None = None,
                    *, absolute: bool = False) -> list[str]:
    """The words that start this babysit again: `babysit` when that name on PATH is this
    very program (and `absolute` is not asked for), else its full path, or the
    interpreter's full path with `-m babysit`. Embedded (no babysit program in argv,
    as under a test runner) it is `babysit`, or its full path when found on PATH."""
    argv = sys.argv if argv is None else argv
    executable = executable or sys.executable
    program = argv[0] if argv else ""
    name = os.path.basename(program)
    if name == "__main__.py" and os.path.basename(os.path.dirname(program)) == "babysit":
        return [os.path.abspath(executable), "-m", "babysit"]
    if name != "babysit":
        found = shutil.which("babysit")
        return [os.path.abspath(found)] if absolute and found else ["babysit"]
    full = os.path.abspath(program if os.sep in program else (shutil.which(program) or program))
    if not absolute:
        on_path = shutil.which("babysit")
        if on_path is not None and _same_file(on_path, full):
            return ["babysit"]
    return [full]


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False

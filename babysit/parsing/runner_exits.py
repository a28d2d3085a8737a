"""The exit line a run console prints under the program's own output.

An IDE or an editor's runner that started the training script says how its process ended,
in its own words, after the last line the script printed:

- JetBrains IDEs (PyCharm, IntelliJ): `ProcessTerminatedListener` prints
  `IdeCoreBundle`'s `finished.with.exit.code.text.message` = `Process finished with exit
  code {0}`, the code followed on Unix by the signal that ended it: `Process finished with
  exit code 137 (interrupted by signal 9: SIGKILL)`; on Windows a process that died or was
  killed shows `-1` (the maskscoring-rcnn run in sealed-9, cut at iteration 1880 of a nine
  days' plan);
- VS Code's Code Runner: `[Done] exited with code=1 in 2.35 seconds`;
- Sublime Text's build system: `[Finished in 12.3s with exit code 1]`.

A non-zero code is the process dying (FAILED), unless the signal it names is one a person
or a scheduler sends to stop a run (SIGINT, SIGTERM, SIGHUP: CANCELLED). Code 0 is left to
the rest of the reading: an exit 0 says the script returned, not that it trained to its end.
"""

from __future__ import annotations

from babysit import lazy_re

_CODE = (r"(?:Process finished with exit code|\[Done\] exited with code=|"
         r"\[Finished in \S+ with exit code)")
# A stop asked for (`exit code 130 (interrupted by signal 2: SIGINT)`): CANCELLED.
RUNNER_STOPPED = (rf"^{_CODE} ?-?\d+ \(interrupted by signal \d+: "
                  r"(SIG(?:INT|TERM|HUP))\)")
# Any other non-zero code, with or without a signal: the process died.
RUNNER_FAILED = (rf"^({_CODE} ?(?:-\d+|[1-9]\d*)\b(?! \(interrupted by signal \d+: "
                 r"SIG(?:INT|TERM|HUP)\)).*)")
_ANY_EXIT = lazy_re.compile(rf"^{_CODE} ?-?\d+")
# Cheap literal pre-checks (see `events._TRIGGERS`).
TRIGGERS = ("Process finished with exit code", "exited with code=", "with exit code")


def runner_exit(line: str) -> bool:
    """Whether `line` is a run console's exit line (any code). After a traceback or a
    signal it says the same death again, with less; alone, it is an exit status with no
    cause in the log: the crash it makes is medium (the training before it may have been
    healthy, and what stopped the process is unknown — PyCharm's `-1` is also its Stop
    button on Windows)."""
    return _ANY_EXIT.match(line.strip()) is not None

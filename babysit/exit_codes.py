"""babysit's exit statuses, the one list the command, its help text and the agents'
instructions are all made from (an agent reads the status before any text)."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    GO = 0
    NO_GO = 1
    USAGE = 2
    CONDITIONAL = 3
    UNREACHABLE = 4
    ARTIFACT_FAILED = 5  # the verdict could not be written: whatever it said is lost
    INTERRUPTED = 130


_MEANING = {
    ExitCode.GO: "GO",
    ExitCode.NO_GO: "NO-GO",
    ExitCode.USAGE: "usage error",
    ExitCode.CONDITIONAL: "CONDITIONAL (still running, or approval needed)",
    ExitCode.UNREACHABLE: "target unreadable",
    ExitCode.ARTIFACT_FAILED: "verdict file not written",
    ExitCode.INTERRUPTED: "interrupted",
}

HELP = "Exit codes: " + ", ".join(f"{int(code)} {text}" for code, text in _MEANING.items()) + "."

# Said when Ctrl-C (or SIGTERM/SIGHUP) lands before a watch began: after that, the
# watch itself ends with a verdict file; before it there is none, and silence would
# leave a script looking for one.
NO_VERDICT = "babysit: interrupted before the watch began: no verdict written"

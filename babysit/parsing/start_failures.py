"""Failures that end a process before it trains, printed without a traceback.

- The loader's own words (a launcher that keeps only the worker's last line, a native
  extension built against another torch): `ImportError: …`, `undefined symbol: …`,
  `error while loading shared libraries: …`.
- A command line the script refuses. argparse prints its usage, then `prog: error:
  message`, and exits with status 2 (`train.py: error: unrecognized arguments: --lr`,
  `the following arguments are required: --data`); click and typer print `Usage: prog
  …`, a hint, then `Error: message`. Either way the script never started.

A line of this kind after training began is something the run printed and survived,
except a usage error right under its usage text: a later command in the same log (the
job's next step, or a relaunch with a bad flag) that never started. The process that
trained is gone by then, so its training is over — how it ended the log does not say
(`NEXT_COMMAND`: ENDED unless the run said it finished); the refused command trained
nothing, so it is no crash of that training.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.events import exception_line
from babysit.redact import clip

_FATAL_AT_START = lazy_re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?:ImportError|ModuleNotFoundError|SyntaxError|IndentationError)"
    r": .+|undefined symbol: \S+|error while loading shared libraries: .+|"
    r"cannot open shared object file")
# A completion detail (see `core.lifecycle`): a later command refused after training.
NEXT_COMMAND = "next-command"
_USAGE = lazy_re.compile(r"^\s*[Uu]sage: (\S+)")
# argparse: `prog: error: message`; the prog is the script's name (its usage line says it).
_ARGPARSE_ERROR = lazy_re.compile(r"^(\S+): error: (.*\S)?\s*$")
# click / typer: `Error: No such option: --lr` (after `Usage:` and `Try 'prog --help'`).
_CLICK_ERROR = lazy_re.compile(r"^Error: (.+)$")
# wasabi's fail message (spaCy's, thinc's, prodigy's and weasel's command lines print their
# refusals with `msg.fail(…, exits=1)`): `✘ Invalid config override 'paths.dev': …`, or
# `[x] …` where the terminal cannot print the glyph.
_WASABI_FAIL = lazy_re.compile(r"^(?:\u2718|\[x\]) ([A-Z].+)$")
# A usage text runs a few hundred lines at most (one line per option); click's error
# comes a few lines under its usage line.
_USAGE_REACH = 400
_CLICK_REACH = 6


class StartFailures:
    def __init__(self) -> None:
        self._trained = False  # training has moved: start-up is over
        # Figures were printed (a test pass's results, training's): a command ran before.
        self._measured = False
        self._usage: str | None = None  # the program a usage text was printed for
        self._since_usage = 0

    def trained(self) -> None:
        self._trained = True
        self._usage = None

    def measured(self) -> None:
        """A record of figures was read: whatever printed them had started, so a command
        line refused after them is a later command's (argparse checks it first)."""
        self._measured = True

    def launched(self) -> None:
        self._trained = self._measured = False
        self._usage = None

    def observe(self, line: str) -> list[LogEvent]:
        """The failure a line outside any traceback says the process ended on, if any."""
        if self._usage is not None:
            self._since_usage += 1
            if self._since_usage > _USAGE_REACH:
                self._usage = None
        if "sage: " in line and (usage := _USAGE.match(line)) is not None:
            self._usage, self._since_usage = usage.group(1), 0
            return []
        if not self._trained and (line.startswith("\u2718 ") or line.startswith("[x] ")):
            refused = _WASABI_FAIL.match(line.strip())
            if refused is not None:
                return [LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500), clip(
                    f"{refused.group(1)} (its command line stopped before training)", 300))]
        if "rror" not in line and "shared" not in line:
            return []
        if ": error:" in line or line.startswith("Error: "):
            found = self._usage_error(line)
            if found is not None:
                return [found]
        if not self._trained and not line[:1].isspace() and _FATAL_AT_START.search(line):
            closing = exception_line(line.strip())
            text = f"{closing[0]}: {closing[1]}" if closing else line.strip()
            return [LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500), clip(text, 300))]
        return []

    def _usage_error(self, line: str) -> LogEvent | None:
        """argparse's or click's refusal of the command line."""
        text = line.strip()
        argparse = _ARGPARSE_ERROR.match(text)
        if argparse is not None:
            prog = argparse.group(1)
            if prog == self._usage or (not self._trained and prog.endswith(".py")):
                message = argparse.group(2) or "(no message)"
                if self._trained or (self._measured and prog == self._usage):
                    return LogEvent(EventKind.COMPLETED, clip(text, 500), NEXT_COMMAND)
                return LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(
                    f"{prog}: error: {message} (its command line was refused: argparse "
                    f"exits with status 2 before the script starts)", 300))
        click = _CLICK_ERROR.match(text)
        if click is not None and self._usage is not None and self._since_usage <= _CLICK_REACH:
            if self._trained:
                return LogEvent(EventKind.COMPLETED, clip(text, 500), NEXT_COMMAND)
            return LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(
                f"{self._usage}: Error: {click.group(1)} (its command line was refused "
                f"before the script started)", 300))
        return None

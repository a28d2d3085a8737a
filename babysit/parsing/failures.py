"""Following a failure across lines: a traceback from its header to the exception that
ends it, and whether it broke a checkpoint save.

A traceback's meaning arrives on its last line; a log may end before that line (the
process died mid-write, or a paste was cut), and that is a crash all the same. A save
is known to have failed when an exception follows a `Saving checkpoint …` line before
training moves on, or when the traceback runs through the code that writes checkpoints.
"""

from __future__ import annotations

import re

from babysit.model import EventKind, LogEvent
from babysit.parsing.events import exception_line
from babysit.redact import clip

_MAX_TRACEBACK_LINES = 400
# Frames that write checkpoints (torch.save, safetensors, the trainers' save hooks).
_SAVE_FRAME = re.compile(r"serialization\.py\", line \d+, in _?save|save_checkpoint|"
                         r"_save_checkpoint|checkpoint_hook|save_pretrained|safetensors|"
                         r"in save_model|in _save\b")
_SAVE_BEGINS = re.compile(r"\b[Ss]aving\b")
# A logger's level before `Traceback (`: the library handled it and said so.
_LOGGED = re.compile(r"\b(?:WARNING|WARN|INFO|DEBUG|W\d{4})\b|\[W(?:ARNING)?\]")
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
# Frames as IPython (`---> 60 ...`, `/path/x.py in f(a, b)`, `6 frames`) and loguru's
# better-exceptions (`> File "x.py", line 3, in f`) print them, unindented.
# rich.traceback draws the traceback in a box (`╭── Traceback (most recent call last)
# ──╮`, frames on `│ … │` lines, `╰──╯`), the exception line under it.
_FRAME_LINE = re.compile(r"-*> ?\d*\s|> File \"|\S+\.py in \S+\(|\d+ frames\s*$|"
                         r"<ipython-input-|-{20,}$|[│┃║╭╰╮╯┏┗]")
_BOX = re.compile(r"^[\s│┃║╭╰╮╯┏┗─━═]*$")
# An error that ends a process before it trains, printed without a traceback (the
# loader's own words, a launcher that keeps only the worker's last line): a native
# extension built against another torch, a missing module or shared library.
_FATAL_AT_START = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?:ImportError|ModuleNotFoundError|SyntaxError|IndentationError)"
    r": .+|undefined symbol: \S+|error while loading shared libraries: .+|"
    r"cannot open shared object file")
CUT_OFF = "the log ends inside a traceback, before its exception line"


def _interrupted(events: tuple[LogEvent, ...]) -> bool:
    return any(e.detail.startswith(("KeyboardInterrupt", "SystemExit")) for e in events)


class FailureReader:
    def __init__(self) -> None:
        self._lines = 0  # >0 while inside a traceback
        self._header = ""
        self._saving: str | None = None  # a save announced and not yet followed by progress
        self._save_failed: str | None = None  # the open traceback came during this save
        self._save_frame = False  # the open traceback runs through checkpoint-writing code
        self._prefix = ""  # what a logger puts before each line of the open traceback
        self._trained = False  # training has moved: start-up is over

    @property
    def in_traceback(self) -> bool:
        return self._lines > 0

    def observe(self, line: str, events: tuple[LogEvent, ...]) -> list[LogEvent]:
        """Events this line adds to the ones it carries itself: the exception that closes
        a traceback, and a failed save."""
        added: list[LogEvent] = []
        kinds = {e.kind for e in events}
        for event in events:
            if event.kind is EventKind.CHECKPOINT_SAVED and _SAVE_BEGINS.search(event.line):
                self._saving = event.detail or "a checkpoint"
        failing = kinds & {EventKind.EXCEPTION, EventKind.TRACEBACK_START}
        if failing and self._saving is not None and EventKind.CHECKPOINT_ERROR not in kinds:
            self._save_failed = self._saving
            self._saving = None
            if EventKind.EXCEPTION in kinds and EventKind.TRACEBACK_START not in kinds \
                    and not _interrupted(events):
                added.append(self._save_error(line))
        if EventKind.TRACEBACK_START in kinds:
            prefix = line[: line.find("Traceback (")]
            if _LOGGED.search(prefix):
                return added  # a traceback a library logged as a warning and carried on
            self._lines = 1
            # IPython heads its traceback with the exception's name, not a logger's prefix;
            # rich with the corner of its box.
            self._prefix = "" if exception_line(prefix.strip()) or _BOX.match(prefix) \
                else prefix.strip()
            self._header = clip(line.strip(), 300)
            return added
        if self._lines == 0:
            if not self._trained and not line[:1].isspace() \
                    and ("rror" in line or "shared" in line) \
                    and _FATAL_AT_START.search(line) and not kinds & {EventKind.EXCEPTION}:
                closing = exception_line(line.strip())
                text = f"{closing[0]}: {closing[1]}" if closing else line.strip()
                added.append(LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500),
                                      clip(text, 300)))
            return added
        line = self._unprefixed(line)
        self._lines += 1
        if _SAVE_FRAME.search(line):
            self._save_frame = True
        closing = exception_line(line)
        if closing is not None:
            self._lines = 0
            name, message = closing
            text = f"{name}: {message}" if message else name
            added.append(LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500), clip(text, 300)))
            # Stopped by hand during a save is a cancelled run, not a broken checkpoint,
            # unless the traceback shows the save itself failing.
            broke_save = self._save_frame or (self._save_failed is not None
                                              and not name.endswith(("KeyboardInterrupt",
                                                                     "SystemExit")))
            if broke_save and EventKind.CHECKPOINT_ERROR not in kinds:
                added.append(self._save_error(line))
            self._save_failed, self._save_frame = None, False
        elif self._lines > _MAX_TRACEBACK_LINES:
            self._lines = 0
            self._save_failed, self._save_frame = None, False
        return added

    def continues(self, line: str) -> bool:
        """Whether `line` still belongs to the open traceback. A line that cannot be
        part of one (training output, a log record) means it was abandoned: printed,
        handled, and the run went on."""
        if self._lines == 0:
            return False
        text = self._unprefixed(line)
        if not text.strip() or text[:1].isspace() or text.startswith(_CHAIN) \
                or _FRAME_LINE.match(text):
            return True
        if exception_line(text) is not None:
            return True
        self._lines = 0
        self._save_failed, self._save_frame = None, False
        return False

    def _unprefixed(self, line: str) -> str:
        if self._prefix and line.lstrip().startswith(self._prefix):
            return line.lstrip()[len(self._prefix):].lstrip(" ") or ""
        return line

    def progressed(self) -> None:
        """Training moved on: an announced save went through."""
        self._saving = None
        self._trained = True

    def finish(self) -> list[LogEvent]:
        """No more lines will come: a traceback still open is a crash on its own."""
        if self._lines == 0:
            return []
        self._lines = 0
        events = [LogEvent(EventKind.EXCEPTION, self._header or "Traceback", CUT_OFF)]
        if self._save_failed is not None or self._save_frame:
            events.append(self._save_error(self._header))
        self._save_failed, self._save_frame = None, False
        return events

    def _save_error(self, line: str) -> LogEvent:
        path = self._save_failed or self._saving or ""
        self._save_failed = None
        return LogEvent(EventKind.CHECKPOINT_ERROR, line.strip()[:500],
                        "" if path == "a checkpoint" else path)

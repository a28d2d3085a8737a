"""A run's end in the words of a language or runtime other than Python.

A training loop driven from R, Julia, the JVM, Lua, Go, Rust or a C++ binary dies
without a Python traceback; each runtime has its own top-level error format, which
ends the process as surely as `Traceback (most recent call last)` does:

- R: `Error in py_call_impl(callable, dots$args, dots$keywords) :` (the message on
  the next line), `Error in fit(model) : object 'x' not found`, Rscript's
  `Execution halted`;
- Julia: `ERROR: LoadError: DimensionMismatch(…)`, `ERROR: ArgumentError: …`
  (`ERROR: InterruptException:` is its Ctrl-C: the run was stopped, not failed);
- the JVM (Java, Scala, Spark's driver): `Exception in thread "main"
  java.lang.IllegalStateException: …` (a Python thread's header has no quotes and no
  exception after it);
- Lua and Torch7: `/usr/bin/luajit: train.lua:42: attempt to index a nil value`,
  `qlua: …`, `th: …`; an error raised in C code names no Lua line (torch.save's
  `/home/u/torch/install/bin/luajit: cannot open <cv/lm.t7> in mode  w at
  …/THDiskFile.c:484`, char-rnn, sealed-12): the interpreter's path before it says
  whose error it is (the standalone interpreter prefixes nothing else with its name);
  the `stack traceback:` after either is read in `lua_tracebacks`;
- Go's `panic: …` and Rust's `thread 'main' panicked at …` — or a panic hook's record of
  it behind a logger's head (burn's `ERROR burn_train::learner::application_logger:
  PANIC => panicked at …/check.rs:1447:13:`), whose message, since Rust 1.73, is the
  next line (`panic_header`: the reader waits for it); a panic caught where it was
  raised (an autotuner's fallback) is followed by more work, as any failure the run
  outlives;
- a C++ trainer's top-level handler: CNTK's `EXCEPTION occurred: The training
  criterion is not a number (NAN). Stop`.

(C++'s `terminate called after throwing an instance of …` is a native abort, read
with the segfaults in `events`.)
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.redact import clip

_FOREIGN = lazy_re.compile(
    # (not Python's word on a start-up hook, `Error in sitecustomize; set PYTHONVERBOSE
    # for traceback:`: see `failures`)
    r"^\s*Error in (?!(?:site|user)customize;)(?P<r>\S.*?)\s*:\s*(?P<rmsg>.*)$|"
    r"^(?P<halted>Execution halted)\s*$|"
    r"^ERROR: (?P<julia>LoadError: .+|[A-Z]\w*(?:Error|Exception|Mismatch)\b.*)$|"
    r"^Exception in thread \"(?P<thread>main)\" (?P<jvm>(?:[\w$]+\.)+[\w$]+"
    r"(?:Error|Exception)\b.*)$|"
    r"^(?:\S*/)?(?:lua(?:jit)?(?:5\.\d)?|qlua|th): (?P<lua>\S+\.lua:\d+: .+)$|"
    r"^\S*/(?:lua(?:jit)?(?:5\.\d)?|qlua): (?P<luac>\S.*)$|"
    r"^panic: (?P<go>\S.*)$|"
    r"^thread '(?P<rust>[^']+)' panicked at (?P<rustmsg>.+)$|"
    r"^\s*EXCEPTION occurred: (?P<cxx>.+)$")
# A panic whose message is on the next line: the location ends the line (Rust 1.73's
# `thread 'main' panicked at src/main.rs:10:5:`, a panic hook's log record of it).
_PANIC_HEADER = lazy_re.compile(r"(?:^thread '[^']+' |\bPANIC\s*=>\s*|^)panicked at "
                                r"(?P<loc>\S.*?:\d+:\d+):\s*$")
# The panic's message says the run was stopped by hand (burn's TUI: `Killing training
# from user input.`): a cancel, not a failure of the run's own.
_BY_HAND = lazy_re.compile(r"\b(?:from|by) (?:the )?user(?: input)?\b|\binterrupted\b",
                           re.IGNORECASE)
# Cheap literal checks first: most lines carry none of these.
_TRIGGERS = ("Error in ", "Execution halted", "ERROR: ", "Exception in thread \"", ".lua:",
             "lua: ", "luajit: ", "lua5.1: ", "lua5.2: ", "lua5.3: ", "lua5.4: ",
             "panic", "EXCEPTION occurred")


def foreign_failure(line: str) -> list[LogEvent]:
    """The fatal error, in another runtime's format, that one line states, if any."""
    if not any(t in line for t in _TRIGGERS):
        return []
    match = _FOREIGN.match(line.rstrip())
    if match is None:
        return []
    groups = match.groupdict()
    if groups["r"] is not None:
        detail = f"R error in {groups['r']}" + (f": {groups['rmsg']}" if groups["rmsg"] else "")
    elif groups["halted"] is not None:
        detail = "R: execution halted"
    elif groups["julia"] is not None:
        if groups["julia"].removeprefix("LoadError: ").startswith("InterruptException"):
            # Julia's Ctrl-C: stopped by hand, not a failure of the run's own.
            return [LogEvent(EventKind.STOPPED_BY_SIGNAL, clip(line.strip(), 500),
                             "InterruptException")]
        detail = f"Julia: {groups['julia']}"
    elif groups["jvm"] is not None:
        detail = groups["jvm"]
    elif groups["lua"] is not None or groups["luac"] is not None:
        detail = f"Lua: {groups['lua'] or groups['luac']}"
    elif groups["go"] is not None:
        detail = f"Go panic: {groups['go']}"
    elif groups["rust"] is not None:
        detail = f"Rust panic in thread '{groups['rust']}': {groups['rustmsg']}"
    else:
        detail = groups["cxx"]
    return [LogEvent(EventKind.EXCEPTION, clip(line.strip(), 500), clip(detail, 300))]


def panic_header(line: str) -> str | None:
    """The location of a Rust panic whose message the next line holds, if this line is
    such a panic's first."""
    if "panicked at " not in line:
        return None
    match = _PANIC_HEADER.search(line.rstrip())
    return match.group("loc") if match is not None else None


def panic_with_message(header: str, location: str, message: str) -> LogEvent:
    """The event of a Rust panic at `location` whose message is `message`."""
    text = message.strip()
    if _BY_HAND.search(text):
        return LogEvent(EventKind.STOPPED_BY_SIGNAL, clip(header.strip(), 500),
                        clip(f"Rust panic: {text} (stopped by hand)", 300))
    return LogEvent(EventKind.EXCEPTION, clip(header.strip(), 500),
                    clip(f"Rust panic: {text or '(no message)'} (at {location})", 300))

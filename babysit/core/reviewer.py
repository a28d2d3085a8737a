"""A reviewer for ambiguous signals (`--judge CMD`).

For a plateau, a single spike or mild eval drift — never for a clear NaN or crash —
babysit runs the reviewer command (an argv list, no shell) with a JSON packet on stdin
and reads its answer: exactly one of STOP, CONTINUE or WAIT. WAIT brings the next poll
forward; STOP becomes a proposal to stop the run, which the user approves or not. A
reviewer that fails, hangs or answers anything else is reported and ignored."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from babysit import lazy_re
from babysit._compat import StrEnum
from babysit.redact import clip
from babysit.rules.catalog import reviewed_types

AMBIGUOUS = reviewed_types()
_WORD = lazy_re.compile(r"\b(STOP|CONTINUE|WAIT)\b", re.IGNORECASE)


class Answer(StrEnum):
    STOP = "STOP"
    CONTINUE = "CONTINUE"
    WAIT = "WAIT"


@dataclass(frozen=True)
class Judgment:
    answer: Answer | None  # None: the reviewer failed; `detail` says how
    detail: str


def parse_answer(text: str) -> Answer | None:
    """The one verdict word in the reviewer's output, or None if there is none or more
    than one distinct word (an answer that hedges is no answer)."""
    words = {match.upper() for match in _WORD.findall(text)}
    return Answer(words.pop()) if len(words) == 1 else None


class Reviewer:
    def __init__(self, argv: Sequence[str], timeout: float = 60.0,
                 max_output: int = 64 * 1024) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self.max_output = max_output

    def review(self, packet: Mapping[str, object]) -> Judgment:
        """The reviewer's answer. Runs in its own process group, which is killed whole on
        a timeout (a background child cannot outlive it); reads at most `max_output`
        bytes of its answer and decodes them leniently."""
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except OSError as error:
            return Judgment(None, f"the reviewer could not be started: "
                                  f"{error.strerror or error}")
        try:
            out, err, code = _exchange(proc, json.dumps(packet, allow_nan=False).encode(),
                                       self.timeout, self.max_output)
        finally:
            _kill_group(proc)
        if code is None:
            return Judgment(None, f"the reviewer gave no answer within {self.timeout:g}s")
        stdout = out.decode("utf-8", errors="replace")
        if code != 0:
            last = (err.decode("utf-8", errors="replace") or stdout).strip().splitlines()
            return Judgment(None, f"the reviewer exited with code {code}"
                                  + (f": {clip(last[-1], 200)}" if last else ""))
        answer = parse_answer(stdout)
        if answer is None:
            shown = clip(" ".join(stdout.split()), 120) or "nothing"
            return Judgment(None, f"the reviewer's answer was not exactly one of STOP, "
                                  f"CONTINUE, WAIT: {shown!r}")
        return Judgment(answer, clip(stdout.strip(), 300))


def _exchange(proc: subprocess.Popen[bytes], packet: bytes, timeout: float,
              limit: int) -> tuple[bytes, bytes, int | None]:
    """Write the packet, read bounded output until the process ends or the deadline
    passes. The exit code is None when the deadline passed."""
    deadline = time.monotonic() + timeout
    buffers = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    try:
        assert proc.stdin is not None
        proc.stdin.write(packet)
        proc.stdin.close()
    except OSError:
        pass  # it did not read its packet; its answer (or silence) still decides
    streams = [s for s in buffers if s is not None]
    exited_at: float | None = None
    while streams:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(buffers[proc.stdout]), bytes(buffers[proc.stderr]), None
        if exited_at is None and proc.poll() is not None:
            exited_at = time.monotonic()
        elif exited_at is not None and time.monotonic() - exited_at > 0.5:
            break  # it ended, but a child of its own still holds the pipes open
        ready, _, _ = select.select(streams, [], [], min(left, 0.1))
        for stream in ready:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                streams.remove(stream)
                continue
            room = limit - len(buffers[stream])
            if room > 0:
                buffers[stream] += chunk[:room]
    try:
        code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return bytes(buffers[proc.stdout]), bytes(buffers[proc.stderr]), None
    return bytes(buffers[proc.stdout]), bytes(buffers[proc.stderr]), code


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()

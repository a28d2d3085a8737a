"""babysit under a real pseudo-terminal (stdin, stdout and stderr all on it), as a
person runs it: what they see, what they type."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Screen:
    text: str
    code: int


def at_a_terminal(args: Sequence[str], cwd: Path, *, answers: Sequence[tuple[str, bytes]] = (),
                  close_after: str | None = None, deadline: float = 60) -> Screen:
    """Run `babysit ARGS` on a pty. Each (prompt, keys) answer is typed once `prompt` has
    been seen; `close_after` hangs up the input (end of input) once it has been seen."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "babysit", *args], cwd=cwd, stdin=follower,
                             stdout=follower, stderr=follower, close_fds=True,
                             env={**os.environ, "COLUMNS": "200"})
    os.close(follower)
    seen = b""
    pending = list(answers)
    until = time.monotonic() + deadline
    try:
        while child.poll() is None or select.select([leader], [], [], 0)[0]:
            assert time.monotonic() < until, seen.decode(errors="replace")
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the child closed its end
                    break
                if not chunk:
                    break
                seen += chunk
            text = seen.decode(errors="replace")
            if pending and pending[0][0] in text:
                os.write(leader, pending.pop(0)[1])
            if close_after is not None and close_after in text:
                os.write(leader, b"\x04")  # ^D: end of input
                close_after = None
        code = child.wait(timeout=max(1.0, until - time.monotonic()))
    finally:
        child.kill()
        child.wait()
        os.close(leader)
    return Screen(seen.decode(errors="replace").replace("\r\n", "\n"), code)

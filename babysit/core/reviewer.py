"""A reviewer for ambiguous signals (`--judge CMD`).

For a plateau, a single spike or mild eval drift — never for a clear NaN or crash —
babysit runs the reviewer command (an argv list, no shell) with a JSON packet on stdin
and reads its answer: exactly one of STOP, CONTINUE or WAIT. WAIT brings the next poll
forward; STOP becomes a proposal to stop the run, which the user approves or not. A
reviewer that fails, hangs or answers anything else is reported and ignored."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from babysit._compat import StrEnum
from babysit.rules.catalog import reviewed_types

AMBIGUOUS = reviewed_types()
_WORD = re.compile(r"\b(STOP|CONTINUE|WAIT)\b", re.IGNORECASE)


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
    def __init__(self, argv: Sequence[str], timeout: float = 60.0) -> None:
        self.argv = list(argv)
        self.timeout = timeout

    def review(self, packet: Mapping[str, object]) -> Judgment:
        try:
            done = subprocess.run(self.argv, input=json.dumps(packet, allow_nan=False),
                                  capture_output=True, text=True, timeout=self.timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            return Judgment(None, f"the reviewer gave no answer within {self.timeout:g}s")
        except OSError as error:
            return Judgment(None, f"the reviewer could not be started: "
                                  f"{error.strerror or error}")
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()
            return Judgment(None, f"the reviewer exited with code {done.returncode}"
                                  + (f": {last[-1][:200]}" if last else ""))
        answer = parse_answer(done.stdout)
        if answer is None:
            shown = " ".join(done.stdout.split())[:120] or "nothing"
            return Judgment(None, f"the reviewer's answer was not exactly one of STOP, "
                                  f"CONTINUE, WAIT: {shown!r}")
        return Judgment(answer, done.stdout.strip()[:300])

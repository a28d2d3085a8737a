"""Questions to a person at a terminal: approving a proposal, choosing a process."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.prompt import Confirm
from rich.text import Text

from babysit.sanitise import outbound


def interactive() -> bool:
    """True when a person can answer: both stdin and stdout are terminals."""
    return sys.stdin.isatty() and sys.stdout.isatty()


class ConsoleApprover:
    """Asks at the terminal; the default answer is no."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)

    def ask(self, question: str) -> bool | None:
        try:
            return Confirm.ask(Text(outbound(question)), console=self.console, default=False)
        except EOFError:
            return None


def choose_process(rows: Sequence[str], console: Console | None = None,
                   read: Callable[[str], str] | None = None) -> int | None:
    """Index of the process the user picks from `rows` (each `PID n  …`): its number in
    the list, or its PID as `ps` shows it. None at the end of input (Ctrl-D): no choice."""
    console = console or Console(highlight=False)
    read = read or (lambda prompt: console.input(prompt))
    pids = [_pid_of(row) for row in rows]
    console.print("Several processes match:")
    for number, row in enumerate(rows, start=1):
        console.print(Text(f"  {number}. {outbound(row)}"))
    while True:
        try:
            answer = read(f"Which one should babysit watch? (1-{len(rows)} or a PID): ").strip()
        except EOFError:
            console.print()
            return None
        if answer.isdecimal():
            value = int(answer)
            if value in pids:
                return pids.index(value)
            if 1 <= value <= len(rows):
                return value - 1
        console.print(Text(f"{outbound(answer)!r} is neither a number from 1 to {len(rows)} "
                           f"nor one of the PIDs listed", style="red"))


def _pid_of(row: str) -> int | None:
    words = row.split()
    if len(words) > 1 and words[0] == "PID" and words[1].isdecimal():
        return int(words[1])
    return None

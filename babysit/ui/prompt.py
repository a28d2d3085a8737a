"""Questions to a person at a terminal: approving a proposal, choosing a process."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.prompt import Confirm, IntPrompt
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


def choose_process(rows: Sequence[str], console: Console | None = None) -> int:
    """Index of the process the user picks from `rows`."""
    console = console or Console(highlight=False)
    console.print("Several processes match:")
    for number, row in enumerate(rows, start=1):
        console.print(Text(f"  {number}. {outbound(row)}"))
    choice = IntPrompt.ask("Which one should babysit watch?", console=console,
                           choices=[str(n) for n in range(1, len(rows) + 1)])
    return int(choice) - 1

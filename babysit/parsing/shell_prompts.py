"""A shell's prompt in a log: the terminal's own line, not the run's.

A log copied from a terminal (a tmux or screen capture, a console pasted whole) shows the
shell's prompt where the shell took the terminal back: before the command that started the
run and, once the run's process is over, after its last output (sealed-12's tmux capture
of a Transformer run: `Epoch 30 完成 | …`, its sample translations, then
`root@autodl-container-…:~/Transformer-Pytorch# tmux capture-pane -p -S -500000 > …`). A
prompt after the training records says the foreground process is over, though not how
(`loop_over`: ENDED); one followed by more training was the start of another command.

The prompt's shapes are the shells' defaults: bash's `user@host:~/dir$` (`#` for root),
Red Hat's `[user@host dir]$`, each after a virtual environment's `(venv) ` if any, and
PowerShell's `PS C:\\dir>` and cmd's `C:\\dir>`.
"""

from __future__ import annotations

from babysit import lazy_re

_PROMPT = lazy_re.compile(
    r"^(?:\([\w.-]+\)\s+)?"
    r"(?:[\w.-]+@[\w.-]+:(?:~|/)[^\s#$]*[#$]|\[[\w.-]+@[\w.-]+ [^\]\s]+\][#$]|"
    r"(?:PS )?[A-Za-z]:\\[^>:*?\"<|\r\n]*>)"
    r"(?:\s|$)")


def is_prompt(line: str) -> bool:
    """Whether `line` is a shell's prompt (with the command typed after it, if any)."""
    # (a cheap test first: most lines have neither an `@` nor a drive's `:\`)
    return ("@" in line or ":\\" in line) and _PROMPT.match(line) is not None

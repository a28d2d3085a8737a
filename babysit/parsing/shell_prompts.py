"""A shell's prompt in a log: the terminal's own line, not the run's.

A log copied from a terminal (a tmux or screen capture, a console pasted whole) shows the
shell's prompt where the shell took the terminal back: before the command that started the
run and, once the run's process is over, after its last output (sealed-12's tmux capture
of a Transformer run: `Epoch 30 完成 | …`, its sample translations, then
`root@autodl-container-…:~/Transformer-Pytorch# tmux capture-pane -p -S -500000 > …`). A
prompt after the training records says the foreground process is over, though not how
(`loop_over`: ENDED); one followed by more training was the start of another command.

The prompt's shapes are the shells' defaults: bash's `user@host:~/dir$` (`#` for root),
Red Hat's `[user@host dir]$`, the shell's name and version where no prompt was set (a
container's or a compute node's bare shell: `bash-4.2$`, `sh-5.1#`), each after a virtual
environment's `(venv) ` if any, and PowerShell's `PS C:\\dir>` and cmd's `C:\\dir>`.

Any other prompt is learned from the log itself: a log that opens on the command that
started the run, typed after the user's own prompt (a zsh theme's `  ❯❯ /home/…/Encoder-
Decoder : python -m src.train`), shows that same prompt again once the command is over
(`  ❯❯ /home/…/Encoder-Decoder : python -m src.eval`).

The shell's `time` report says the same: the command it timed is over (sealed-18's
word2vec runs end on bash's `real 45m47.814s` / `user …` / `sys …`; GNU time prints
`71.21user 0.42system 1:12.03elapsed 99%CPU …`, zsh `… 12.34s user 1.23s system 99% cpu
13.45 total`). Neither says how the command ended.

So does the interpreter's own word as it shuts down: multiprocessing's resource tracker
`UserWarning: resource_tracker: There appear to be 1 leaked semaphore objects to clean up
at shutdown`, printed once the process that created them is gone (sealed-57's PyKEEN
sweep, killed during its 29th of 40 runs; sealed-18's nohup'd DPT run at epoch 23).
"""

from __future__ import annotations

from babysit import lazy_re

_PROMPT = lazy_re.compile(
    r"^(?:\([\w.-]+\)\s+)?"
    r"(?:[\w.-]+@[\w.-]+:(?:~|/)[^\s#$]*[#$]|\[[\w.-]+@[\w.-]+ [^\]\s]+\][#$]|"
    r"(?:ba|z|k|da)?sh-\d+(?:\.\d+)*[#$]|"
    r"(?:PS )?[A-Za-z]:\\[^>:*?\"<|\r\n]*>)"
    r"(?:\s|$)")


_TIME_REPORT = lazy_re.compile(
    r"^real\s+\d+m\d+(?:\.\d+)?s\s*$|"
    r"^\s*\d+(?:\.\d+)?user \d+(?:\.\d+)?system (?:\d+:)?\d+:\d+(?:\.\d+)?elapsed\b|"
    r"\d+(?:\.\d+)?s user \d+(?:\.\d+)?s system \d+% cpu (?:\d+:)*\d+(?:\.\d+)? total\s*$")


_SHUTDOWN = lazy_re.compile(r"resource_tracker: There appear to be \d+ leaked \w+ objects? "
                            r"to clean up at shutdown")


def is_shutdown_notice(line: str) -> bool:
    """Whether `line` is the interpreter's word that the process is shutting down."""
    return "at shutdown" in line and _SHUTDOWN.search(line) is not None


def is_time_report(line: str) -> bool:
    """Whether `line` is the shell's (or GNU time's) report of a command that is over."""
    # (a cheap test first: most lines have neither word)
    return ("real" in line or "user" in line) and _TIME_REPORT.search(line) is not None


# The head of a scheduler's report on the job, printed as it ends however the job ended
# (PBS Pro's `PBS Job 3523461.pbs`, then `CPU time :`, `Wall time :`, `Mem usage :`).
_JOB_REPORT = lazy_re.compile(r"^\s*(?:PBS|SGE|LSF|Slurm|SLURM)\s+[Jj]ob\s+[\w.\[\]-]+\s*$")


def is_job_report(line: str) -> bool:
    """Whether `line` opens a scheduler's report on the job (what follows is its
    accounting, no word of the run's own)."""
    # (a cheap test first: most lines have no ` Job `)
    return " Job " in line and _JOB_REPORT.match(line) is not None


def is_prompt(line: str) -> bool:
    """Whether `line` is a shell's prompt (with the command typed after it, if any)."""
    # (a cheap test first: most lines have no `@`, no drive's `:\` and no `sh-`)
    return (("@" in line or ":\\" in line or "sh-" in line)
            and _PROMPT.match(line) is not None)


# A command that starts a training run, typed after a prompt that ends on a prompt's mark
# and a space: the prompt is everything before it.
_LAUNCHED_AFTER = lazy_re.compile(
    r"^(?P<prompt>.{2,160}?[$#>%:❯»➜λ→])\s+(?:python[\d.]*|torchrun|accelerate|deepspeed|"
    r"bash|sh|srun|sbatch|julia|Rscript|th|lua|java|\./|CUDA_VISIBLE_DEVICES=)\S*(?:\s|$)")
# Lines of a log's opening read for the command that started it.
_OPENING_LINES = 3


class LearnedPrompt:
    """The prompt a log opened with, before the command that started the run."""

    def __init__(self) -> None:
        self._prompt: str | None = None
        self._lines = 0

    def opening(self, line: str) -> None:
        """One of the log's first lines (blank ones are not counted)."""
        if self._prompt is not None or self._lines >= _OPENING_LINES or not line.strip():
            return
        self._lines += 1
        found = _LAUNCHED_AFTER.match(line.rstrip())
        # (a prompt has a mark no word has: `>` alone opens a quoted line)
        if found is not None and any(not c.isalnum() and not c.isspace()
                                     for c in found.group("prompt").strip()[:-1]):
            self._prompt = found.group("prompt")

    def again(self, line: str) -> bool:
        """Whether `line` opens on the prompt the log opened with."""
        return self._prompt is not None and line.startswith(self._prompt)

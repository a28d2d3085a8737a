"""The exit line a run console prints under the program's own output.

An IDE or an editor's runner that started the training script says how its process ended,
in its own words, after the last line the script printed:

- JetBrains IDEs (PyCharm, IntelliJ): `ProcessTerminatedListener` prints
  `IdeCoreBundle`'s `finished.with.exit.code.text.message` = `Process finished with exit
  code {0}`, the code followed on Unix by the signal that ended it: `Process finished with
  exit code 137 (interrupted by signal 9: SIGKILL)`; on Windows a process that died or was
  killed shows `-1` (the maskscoring-rcnn run in sealed-9, cut at iteration 1880 of a nine
  days' plan);
- VS Code's Code Runner: `[Done] exited with code=1 in 2.35 seconds`;
- Sublime Text's build system: `[Finished in 12.3s with exit code 1]`.

Beside the editors, what else ran the script says so in a terminal's paste or a log it
captured:

- a shell's job control, when a backgrounded run ends: bash `[1]+  Done
  python train.py` (status 0) or `[1]+  Exit 1  python train.py`; zsh `[1]  + 12345
  done       python train.py` or `… exit 1 …`;
- make, when the recipe's command failed: `make: *** [Makefile:12: train] Error 1`;
- util-linux's `script`, recording a terminal session, when the command it ran returns:
  `Script done on 2025-05-31 15:11:49+00:00 [COMMAND_EXIT_CODE="0"]` (a Colab cell's
  `!script -c "python run_expid.py" log.txt`, sealed-74's FuxiCTR runs);
- Weights & Biases' closing line as the script exits (`wandb.init` hooks the exit):
  `wandb: Waiting for W&B process to finish... (success).` for status 0, `(failed 1).`
  otherwise.

A non-zero code is the process dying (FAILED), unless the signal it names is one a person
or a scheduler sends to stop a run (SIGINT, SIGTERM, SIGHUP: CANCELLED). Code 0 is the
process returning: the run is over, and that is the issue's evidence of success — read as
a completion checked against the plan like a trainer's closing summary (well short of a
planned total the script returned early: ENDED, not SUCCEEDED).
"""

from __future__ import annotations

from babysit import lazy_re

_SIGNAL_STOP = r" \(interrupted by signal \d+: (SIG(?:INT|TERM|HUP))\)"
# Each runner's exit line up to its code, the code last (`exit code 1`, `code=1`, `Exit 1`).
_CODE = (r"(?:Process finished with exit code|\[Done\] exited with code=|"
         r"\[Finished in \S+ with exit code|"
         r"wandb: Waiting for W&B process to finish\.\.\. \(failed|"
         r"\[\d+\][+-]?\s+Exit|\[\d+\]\s+[+-]?\s*\d+ exit|"
         r"make(?:\[\d+\])?: \*\*\* \[[^\]]*\] Error|"
         r"Script done on [^\[]{0,60}\[COMMAND_EXIT_CODE=\")")
# A stop asked for (`exit code 130 (interrupted by signal 2: SIGINT)`): CANCELLED.
RUNNER_STOPPED = rf"^{_CODE} ?-?\d+{_SIGNAL_STOP}"
# Any other non-zero code, with or without a signal: the process died.
RUNNER_FAILED = (rf"^({_CODE} ?(?:-\d+|[1-9]\d*)\b(?!{_SIGNAL_STOP}).*)")
# Status 0: the script returned (see the module's note).
RUNNER_RETURNED = (r"^(?:Process finished with exit code 0$|\[Done\] exited with code=0\b|"
                   r"\[Finished in [\d.]+m?s\]$|"
                   r"wandb: Waiting for W&B process to finish\.\.\. \(success\)|"
                   r"\[\d+\][+-]?\s+Done\s{2,}\S|\[\d+\]\s+[+-]?\s*\d+ done\s{2,}\S|"
                   r"Script done on [^\[]{0,60}\[COMMAND_EXIT_CODE=\"0\"\])")
RETURNED = "exit-0"  # the detail of the completion an exit status 0 makes
# Whatever ran the training, saying in a sentence of its own that it ended with a non-zero
# code (a managed platform's `[Modelarts Service Log]Training end with return code: 250`,
# `Job finished with exit code 1`, `process exited with code 137`): the process died.
# Status 0 is left to the runners above: a helper process's clean exit mid-run says
# nothing of the training.
SAID_FAILED = (r"\b((?:[Tt]raining|[Tt]rain|[Jj]ob|[Pp]rocess|[Pp]rogram|[Ss]cript|[Cc]ommand|"
               r"[Tt]ask|[Ww]orker)\b[^.;]{0,40}?\b(?:with|returned|exit(?:ed)?)\s+"
               r"(?:a\s+)?(?:non-?zero\s+)?(?:(?:return|exit)\s*)?(?:code|status)\s*[:=]?\s*"
               r"(?:-\d+|[1-9]\d*))\b")
# DeepSpeed's launcher, when a worker it started ends (launch.py's `sigkill_handler`:
# `[ERROR] [launch.py:321:sigkill_handler] ['python', '-u', 'train.py', …] exits with
# return code = -9`): the command it ran is printed whole before the words, so no subject
# sits near them. A negative code is the signal that ended the worker: SIGHUP, SIGINT or
# SIGTERM a stop asked for, any other (SIGKILL's -9, often the kernel's OOM killer) a death.
LAUNCHER_STOPPED = r"\b(exits with return code = -(?:1|2|15))\b"
LAUNCHER_FAILED = r"\b(exits with return code = (?:-(?!(?:1|2|15)\b)\d+|[1-9]\d*))\b"
_SAID_EXIT = lazy_re.compile(SAID_FAILED)
_LAUNCHER_EXIT = lazy_re.compile(r"\bexits with return code = -?[1-9]\d*\b")
_ANY_EXIT = lazy_re.compile(rf"^{_CODE} ?-?\d+|{RUNNER_RETURNED}")
# Cheap literal pre-checks (see `events._TRIGGERS`).
TRIGGERS = ("Process finished with exit code", "exited with code=", "with exit code",
            "[Finished in", "W&B process to finish", "Exit ", " exit ", "Done  ", " done  ",
            "*** [", "return code", "xit code", "xit status", "with code", "with status",
            "EXIT_CODE")


def runner_exit(line: str) -> bool:
    """Whether `line` is a run console's exit line (any code). After a traceback or a
    signal it says the same death again, with less; alone, it is an exit status with no
    cause in the log: the crash it makes is medium (the training before it may have been
    healthy, and what stopped the process is unknown — PyCharm's `-1` is also its Stop
    button on Windows)."""
    return _ANY_EXIT.match(line.strip()) is not None or _SAID_EXIT.search(line) is not None \
        or _LAUNCHER_EXIT.search(line) is not None

"""Failures a run states in words, without a traceback.

A handler caught the exception and logged it, a framework reports the error that
stopped its loop, or a callback ends training because the loss is no longer a number:

- the script's own logger, at error level, says training raised (YOLOX's `Exception in
  training: …`) or that it (or what it runs: a job, a
  trial, an ablation, torchelastic's worker group) failed: `2025-09-13 15:51:22 -
  __main__ - ERROR - Training failed with error: …`, `ERROR [__main__] main failed`,
  `ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)`;
- TensorFlow's coordinator, which stops every thread and re-raises the error: `Error
  reported to Coordinator: <class '…InvalidArgumentError'>, LossTensor is inf or nan.`;
- a native trainer's or a runtime's own error line that the process is gone: Marian's
  `Error: Aborted from marian::io::getline(...)` (then its `[CALL STACK]`), MindSpore's TBE
  compiler workers `[ERROR] TBE Subprocess[task_distribute] raise error[], main process
  disappeared!` (an error level, then the process aborted, disappeared, died or crashed);
- a runner's word that the job it ran raised (Hydra's `Error executing job with
  overrides: [...]`, at error level or alone on its line);
- training stopped because its loss or gradients went bad: Keras' TerminateOnNaN
  (`Batch 3: Invalid loss, terminating training`), ESPnet (`The gradients at all steps
  are invalid in this epoch. … This training was stopped at 2epoch`);
- a handler's own sentence that something went wrong, opening its line (a style-transfer
  loop's `Something wrong happens! Current model is saved to <…\tmp_model>`, then its
  `Done training!` on the way out; `Something went wrong: CUDA out of memory.`), not a
  warning's advice (`there might be something wrong with your environment`);
- the run says it stops training because something broke, not because it is done: Sample
  Factory's runner `Stopping training due to lack of heartbeats from <class '…RolloutWorker'>`
  after its rollout workers died; the same said of an error, an exception, a crash, a
  failure, a lost or unresponsive worker. Not an early stop (`due to no improvement`),
  nor a scheduler's limit (`due to time limit`: its own line says TIMEOUT);
- at error level, a handler's sentence that an error occurred, with its message
  (`ERROR - An error occurred during execution: [Errno 2] No such file or directory: …`);
- at error level, nothing but an exception's message in Python's own words (`ERROR:name
  'logger' is not defined`, `ERROR - [Errno 2] No such file or directory: …`): a handler
  logged what it caught;
- the script says it exits on an error (keithito's Tacotron: `Exiting due to exception:
  Loss Exploded`; `exiting because of an error`), or opens a line on a fatal error
  (`Fatal error in main loop`, `FATAL ERROR: …`): a handler caught what stopped it.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.redact import clip

_ERROR_LEVEL = lazy_re.compile(r"\b(?:ERROR|CRITICAL|FATAL)\b")
_ERROR_WORD = lazy_re.compile(r"(?:^|\]\s*)(?:Error|Fatal):")  # a C++ logger's `Error: …`
_SAYS_FAILED = lazy_re.compile(
    r"\b(?:[Tt]raining|[Rr]un|[Jj]ob|[Ee]xperiment|[Tt]rial|[Aa]blation|[Ff]old|main|"
    r"[Ww]orker group)\b(?: [\w.\-]+)? failed(?:\s*[:.!(]|\s+with\b|\s*$).*|"
    r"\bapi:failed \(exitcode: -?\d+\).*")
# After an error level: the process itself is gone (not a request aborted and retried).
_PROCESS_GONE = lazy_re.compile(
    r"^\W*(?:Error|ERROR|FATAL|Fatal)\b\W*(?:Aborted|ABORTED)\b.*|"
    r"\b(?:main |training |worker )?process(?:es)? (?:\d+ )?(?:has |have )?"
    r"(?:disappeared|died|crashed|aborted)\b.*")
_COORDINATOR = lazy_re.compile(
    r"Error reported to Coordinator: <class '(?:[\w]+\.)*(\w+)'>,?\s*(.*)")
_STOPPED = lazy_re.compile(r"\b(?:terminat|stopp?)\w* (?:the )?training\b|"
                           r"\btraining (?:was |is |has been )?(?:stopped|terminated|aborted)\b",
                           re.IGNORECASE)
# A runner's word that the job it ran raised: Hydra's `Error executing job with overrides:
# [...]` (logged at error level from `run_and_report` when the task function raises; the
# traceback after it is cut short unless HYDRA_FULL_ERROR=1, and may be missing), and the
# same said of a task, a run or a script.
_JOB_RAISED = lazy_re.compile(r"(?:^|\W)Error (?:while |when )?(?:executing|running) (?:the )?"
                              r"(?:job|task|training|run|experiment|script)\b.*")
_EXITS_ON_ERROR = lazy_re.compile(
    r"\b[Ee]xit(?:ing|ed|s)?\s+(?:due\s+to|because\s+of|on|after)\s+(?:an?\s+|the\s+)?"
    r"(?:unhandled\s+|uncaught\s+|fatal\s+)?(?:exception|error)\b.*")
_WENT_WRONG = lazy_re.compile(
    r"^\W*(?:(?:\[[^\]]{0,40}\]|ERROR|CRITICAL)[\s:-]*)*[Ss]omething\s+(?:(?:went|goes|"
    r"has\s+gone|is|was)\s+)?wrong\b(?:\s+(?:happen(?:s|ed)|occurr?(?:s|ed)))?\s*[!:.,].*")
# At error level, that what the run runs raised (YOLOX's trainer: `ERROR | yolox.core.
# trainer:train:96 - Exception in training: Bad StatusOr access: …`, logged before its
# re-raise, and then its `Training of experiment is done and the best AP is 0.00` on the
# way out).
_RAISED_IN = lazy_re.compile(r"\b(?:Exception|Error)s? (?:in|during|while) (?:the )?"
                             r"(?:training|train(?:ing)? loop|main loop|fitting|run)\b"
                             r"\s*[:.!].*")
# At error level, a handler's sentence that an error occurred, with its message
# (PtychoPINN's `2025-07-18 18:10:53,684 - ERROR - An error occurred during execution:
# [Errno 2] No such file or directory: '…/fly001_transposed.npz'`): training that goes
# on after it outlives it.
_ERROR_OCCURRED = lazy_re.compile(
    r"\b(?:[Aa]n?\s+)?(?:(?:unexpected|fatal|unhandled|uncaught)\s+)?(?:[Ee]rror|[Ee]xception)\s+"
    r"(?:has\s+)?(?:occurr?ed|happened|was\s+raised)\b[^:]{0,60}:\s*\S.*")
# At error level, nothing but what an exception says, in the words Python's own
# exceptions use: a handler's `logger.error(e)` on the way out (MMSA's `2021-01-28
# 01:00:25:ERROR:name 'logger' is not defined`, 95 minutes after epoch 23's lines).
_EXCEPTION_TEXT = lazy_re.compile(
    r"[\s:|\]-]*((?:name '\w+' is not defined|'\w+' object (?:has no attribute|is not "
    r"(?:subscriptable|callable|iterable))|list index out of range|index \d+ is out of bounds|"
    r"(?:float |integer )?division (?:or modulo )?by zero|unsupported operand type\(s\)|"
    r"[\w.]+\(\) (?:takes \d+ positional|got an unexpected keyword|missing \d+ required)|"
    r"No module named |cannot import name |local variable '\w+' referenced before|"
    r"(?:too many|not enough) values to unpack|invalid literal for |could not convert string|"
    r"mat1 and mat2 shapes cannot be multiplied|\[Errno \d+\] ).*)")
_FATAL_OPENS = lazy_re.compile(r"^\W*(?:Fatal|FATAL)\s+(?:error|ERROR)\b.*")
_STOPPED_BY_FAULT = lazy_re.compile(
    r"\b(?:stop|stopping|stopped|terminat\w*|abort\w*|halt\w*)\s+(?:the\s+)?training\s+"
    r"(?:due\s+to|because\s+of|because|on\s+account\s+of|after)\s+.{0,80}?"
    r"\b(?:heartbeats?|errors?|exceptions?|fail\w*|crash\w*|died|dead|lost|unresponsive|"
    r"not\s+responding|hung|fault\w*)\b.*", re.IGNORECASE)
_BAD_VALUES = lazy_re.compile(r"\b(?:invalid|nan|non-?finite|inf|infinite|infinity)\b",
                              re.IGNORECASE)


def said_failure(line: str) -> list[LogEvent]:
    """The failure one line (outside any traceback) states, if any."""
    # Cheap checks first: most lines have none of these words.
    if "failed" not in line and "Coordinator" not in line and "erminat" not in line \
            and "topp" not in line and "bort" not in line and "ORT" not in line \
            and "rocess" not in line and "Error executing" not in line \
            and "Error running" not in line and "Error while" not in line \
            and "Error when" not in line and "xit" not in line and "atal" not in line \
            and "FATAL" not in line and "wrong" not in line and " in t" not in line \
            and " during" not in line and " while" not in line and "ccur" not in line \
            and "appened" not in line and "raised" not in line and "ERROR" not in line \
            and "CRITICAL" not in line:
        return []
    text = line.strip()
    if "wrong" in line and (wrong := _WENT_WRONG.match(line)) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(wrong.group(0).strip(), 300))]
    if "xit" in line and (exits := _EXITS_ON_ERROR.search(line)) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(exits.group(0), 300))]
    if ("atal" in line or "FATAL" in line) and (fatal := _FATAL_OPENS.match(line)) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500),
                         clip(fatal.group(0).strip(), 300))]
    if "Error " in line and (raised := _JOB_RAISED.search(line)) is not None and (
            raised.start() == 0 or _ERROR_LEVEL.search(line, 0, raised.start()) is not None):
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500),
                         clip(raised.group(0).lstrip(" \t-]"), 300))]
    if (level := _ERROR_LEVEL.search(line) or _ERROR_WORD.search(line)) is not None \
            and (gone := _PROCESS_GONE.search(line[level.start():])) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500),
                         clip(gone.group(0).lstrip("] \t"), 300))]
    if (level := _ERROR_LEVEL.search(line)) is not None \
            and (raised_in := _RAISED_IN.search(line, level.end())) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(raised_in.group(0), 300))]
    if (level := _ERROR_LEVEL.search(line)) is not None \
            and (occurred := _ERROR_OCCURRED.search(line, level.end())) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(occurred.group(0), 300))]
    if (level := _ERROR_LEVEL.search(line)) is not None \
            and (text_only := _EXCEPTION_TEXT.match(line, level.end())) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(text_only.group(1), 300))]
    if "failed" in line and (level := _ERROR_LEVEL.search(line)) is not None \
            and (said := _SAYS_FAILED.search(line, level.end())) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(said.group(0), 300))]
    if "Coordinator" in line and (reported := _COORDINATOR.search(line)) is not None:
        name, message = reported.groups()
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500),
                         clip(f"{name}: {message}" if message else name, 300))]
    if (fault := _STOPPED_BY_FAULT.search(line)) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(fault.group(0), 300))]
    if _STOPPED.search(line) is not None and _BAD_VALUES.search(line) is not None:
        return [LogEvent(EventKind.EXCEPTION, clip(text, 500), clip(
            f"training was stopped on invalid (non-finite) values: {text}", 300))]
    return []

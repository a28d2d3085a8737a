"""What a run says about itself once, near its start: how many parameters the model has,
how many tokens one optimizer step trains on (inputs to MFU) and the size of its
vocabulary (ln of it is the loss of a uniform guess). Never metrics."""

from __future__ import annotations

import re
from dataclasses import replace

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.readers import Line, ParseContext

_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_NUMBER = r"(\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([kKmMbBgGtT]?)\b"
# nanoGPT `number of parameters: 10.65M`, Keras `Total params: 124,439,808`, PEFT's
# `all params: 6,742,609,920`, `num_params=1.2e9`, `Model has 124M parameters`.
_PARAMS = lazy_re.compile(
    r"(?:number of parameters|total params|all params|num[_ ]params|n_params|"
    r"parameter count)\s*[:=]\s*" + _NUMBER + r"|"
    r"\bhas\s+" + _NUMBER + r"\s+parameters", re.IGNORECASE)
# nanoGPT `tokens per iteration will be: 491,520`; `tokens per step: 524288`.
_TOKENS = lazy_re.compile(r"tokens per (?:iteration|iter|step|batch)(?: will be)?\s*[:=]\s*"
                          r"(\d[\d,]*)", re.IGNORECASE)

# Megatron-LM `> padded vocab (size: 50257) with 431 dummy tokens (new size: 50688)` (the
# size before padding), a config dump's `"vocab_size": 32000`, nanoGPT's `found
# vocab_size = 65 (inside data/shakespeare_char/meta.pkl)`, Megatron's argument dump
# `padded_vocab_size ....... 256`.
_VOCAB = lazy_re.compile(r"padded vocab \(size:\s*(\d+)|"
                         r"(?:\b|_)vocab(?:ulary)?[_ ]size[\"']?\s*(?:[:=]|\.{3,})\s*(\d+)",
                         re.IGNORECASE)


# The learning rate a run is configured with: a launcher's flag (`--learning_rate 2e-5`,
# `--lr=3e-4`), Megatron's argument dump (`lr ........ 0.00015`), a config or
# TrainingArguments dump (`learning_rate=2e-05,`, `"learning_rate": 0.0002`). Never a
# metric record (those print a loss beside the rate, and are read as metrics).
_LR_NUMBER = r"(\d*\.?\d+(?:[eE][+-]?\d+)?)"
_LR_FLAG = lazy_re.compile(r"--(?:learning[_-]rate|lr)(?:=|\s+)" + _LR_NUMBER + r"(?![\w.])")
_LR_ARGS = lazy_re.compile(r"^\s*lr\s+\.{3,}\s*" + _LR_NUMBER + r"\s*$")
_LR_CONFIG = lazy_re.compile(r"\blearning_rate[\"']?\s*[:=]\s*[\"']?" + _LR_NUMBER + r"(?![\w.])")
_A_LOSS = lazy_re.compile(r"\bloss\b['\"]?\s*[:=]?\s*[-\d.]", re.IGNORECASE)


def may_configure_lr(text: str) -> bool:
    """A cheap test a line must pass before `configured_lr`'s patterns are tried."""
    return "--l" in text or "learning_rate" in text or "lr ." in text


def configured_lr(line: str) -> float | None:
    """The learning rate this line configures the run with (None: it says none)."""
    if "lr" not in line and "learning" not in line:
        return None
    found = _LR_FLAG.search(line) or _LR_ARGS.search(line)
    if found is None and not _A_LOSS.search(line):
        found = _LR_CONFIG.search(line)
    if found is None:
        return None
    value = _number(found.group(1), "")
    return value if value is not None and 0 < value < 10 else None


def _number(text: str, scale: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value * _SCALE[scale.lower()]


# A shell's report that a job it ran has ended, with the job's command line after it:
# bash's `./run.sh: line 3:  5967 Killed    python train.py --lr=0.1 --vocab_size=150000`,
# job control's `[1]+  Terminated   python train.py …`, zsh's `zsh: killed  python …`. The
# settings in that command are not the run's word on itself: the line says how it ended.
_SHELL_JOB_REPORT = lazy_re.compile(
    r"(?:\bline \d+: +\d+ +|^\[\d+\][+-]? +|^zsh: )(?:Killed|killed|Terminated|terminated|"
    r"Aborted|Segmentation fault|Bus error|Hangup|Interrupt|Exit \d+)\b")


# The error the run means to train down to, its stop criterion: FANN's `Max epochs
# 1000000. Desired error: 0.0010000000.` (every binding of the C library prints it).
_DESIRED = lazy_re.compile(r"\bDesired (?:error|MSE|loss)\s*[:=]\s*(\d*\.?\d+(?:[eE][+-]?\d+)?)")


# The early stop's patience the run is configured with: an argparse Namespace's
# `patience=10`, a flag `--patience 15`, a config's `"patience": 10` or
# `early_stopping_patience: 5`. Not a scheduler's (`lr_patience`, `Scheduler patience: 5`,
# ReduceLROnPlateau's): that lowers the rate and trains on.
_PATIENCE = lazy_re.compile(r"(?<![\w-])(?:--)?(?:early[_-]?stop(?:ping)?[_-])?patience[\"']?"
                            r"(?:\s*[:=]\s*|\s+)(\d{1,4})(?![\w./])")
_SCHEDULER = lazy_re.compile(r"(?:sched\w*|plateau|lr|learning[_ ]rate)[\s_(-]*$", re.IGNORECASE)


def configured_patience(line: str) -> int | None:
    """The early-stopping patience this line configures (None: it says none)."""
    if "patience" not in line:
        return None
    found = _PATIENCE.search(line)
    if found is None or _SCHEDULER.search(line[max(0, found.start() - 16):found.start()]):
        return None
    value = int(found.group(1))
    return value if value > 0 else None


def run_facts(line: str) -> dict[str, float]:
    """`model_params`, `tokens_per_step`, `vocab_size`, `configured_lr`, `patience` and
    `desired_error` said by this line (empty when none, and for a shell's report of how a
    job ended)."""
    found: dict[str, float] = {}
    if ("line " in line or "[" in line or "zsh" in line) \
            and _SHELL_JOB_REPORT.search(line) is not None:
        return found
    params = _PARAMS.search(line)
    if params is not None:
        text, scale = (params.group(1), params.group(2)) if params.group(1) else \
            (params.group(3), params.group(4))
        value = _number(text, scale)
        if value is not None and value >= 1000:  # a model, not a count of tensors
            found["model_params"] = value
    tokens = _TOKENS.search(line)
    if tokens is not None:
        value = _number(tokens.group(1), "")
        if value:
            found["tokens_per_step"] = value
    lr = configured_lr(line)
    if lr is not None:
        found["configured_lr"] = lr
    patience = configured_patience(line)
    if patience is not None:
        found["patience"] = patience
    desired = _DESIRED.search(line) if "esired" in line else None
    if desired is not None and float(desired.group(1)) > 0:
        found["desired_error"] = float(desired.group(1))
    vocab = _VOCAB.search(line) if "ocab" in line else None
    if vocab is not None:
        value = _number(vocab.group(1) or vocab.group(2), "")
        if value is not None and value >= 2:
            found["vocab_size"] = value
    return found


class FactsReader:
    """What the run said about itself so far. A line read for the run's context (a
    configuration dump's `"vocab_size": 32000`) gives its facts to its own record."""

    def __init__(self) -> None:
        self.facts: dict[str, float] = {}
        self._fresh: dict[str, float] = {}  # the facts of the line being read

    def said(self, text: str) -> dict[str, float]:
        """The facts a line says (kept with the run's)."""
        found = run_facts(text)
        if found:
            self.facts.update(found)
        return found

    def configured(self, text: str) -> None:
        """A line read for its context: its facts wait for its record (see `amend`)."""
        found = self.said(text)
        if found:
            self._fresh = found

    def wants(self, line: Line) -> bool:
        return bool(self._fresh)

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        facts, self._fresh = self._fresh, {}
        return replace(record, facts=facts) if record is not None else Record(
            step=context.step, facts=facts, rank=line.rank)

"""A generative grammar of training-log lines (issue 23): a run of training lines composed
from independent choices — a prefix, a counter, names in some style, a join, a separator,
a value spelling, evaluation lines now and then — each choice taken from what real logs
print. `tests/parsing/test_shape_grammar.py` draws runs from it with hypothesis and asks
the parser to read them; this module only writes them, and says what a reader must find.

Every choice is a plain value (a format string, a name), so a failing example reads as
the lines it made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# A line's prefix, before anything the run itself prints; `{s}` is the line's second.
PREFIXES = (
    "",
    "2024-03-01 12:00:{s:02d},123 ",
    "[12:00:{s:02d}] ",
    "I0301 12:00:{s:02d}.123 123 f.py:55] ",
    "INFO ",
    "2024-03-01 12:00:{s:02d},123 | INFO | ",
    "2024-03-01 12:00:{s:02d},123 - trainer - INFO - ",
    "[rank0]: ",
    "0: ",
    "train.py:55 - ",
    "[2024-03-01 12:00:{s:02d}] INFO train.py:55 - ",
)

# The training counter: `{n}` the step (from 1), `{m}` the planned steps, `{e}` / `{E}`
# the epoch (from 1) and the planned epochs, `{b}` / `{B}` the batch in its epoch.
# What each gives: "step" (the line's step is n), "epoch" (only the epoch: the reader
# counts records, or reads epochs), "batch" (an epoch's batch: steps must rise).
COUNTERS: tuple[tuple[str, str], ...] = (
    ("step {n}", "step"),
    ("step {n}/{m}", "step"),
    ("Step: {n}", "step"),
    ("Step {n}/{m}", "step"),
    ("iter {n}", "step"),
    ("Iteration {n}/{m}", "step"),
    ("[{n}/{m}]", "step"),
    ("{n}/{m}", "step"),
    ("{n}:", "step"),
    ("Epoch {e}", "epoch"),
    ("Epoch [{e}/{E}]", "epoch"),
    ("epoch {e}, batch {b}/{B}", "batch"),
    ("Epoch: [{e}][{b}/{B}]", "batch"),
)

# Training-loss names in the styles logs use, and the second metric beside it.
LOSS_NAMES = ("loss", "train_loss", "train loss", "Loss", "Train Loss", "train/loss",
              "nll", "xent", "ce", "mse", "mae", "rmse", "total_loss", "loss_total")
OTHER_NAMES = ("lr", "grad_norm", "gnorm", "acc", "top1", "ppl", "Acc", "learning_rate",
               "train/acc")
JOINS = ("=", ": ", " ", ":\t")
SEPARATORS = (", ", " | ", "\t", "  ", " - ")
VALUE_STYLES = ("fixed", "sci", "SCI", "tensor")
NON_FINITE = ("nan", "NaN", "inf", "-inf")

# Evaluation lines: a name prefix on a training-like line (`val_loss`), or a line of its
# own. `{c}` is the training counter's text, `{v}` the value.
EVAL_STYLES = (
    "",  # no evaluation
    "{c}{sep}val_loss{join}{v}",
    "{c}{sep}valid loss{join}{v}",
    "{c}{sep}eval/loss{join}{v}",
    "{c}{sep}test loss{join}{v}",
    "Validation: loss {v}",
    "[eval] loss: {v}",
    "Evaluation{sep}loss{join}{v}",
)

# Prose with numbers in it, printed among the training lines: never a record.
PROSE = (
    "Loaded 5 files in 3.2 s",
    "Saving checkpoint to ./ckpt/model_{n}.pt",
    "Using 4 GPUs with 16 workers",
    "Downloaded 120 MB in 12.5 seconds",
    "Found 50000 images belonging to 10 classes.",
)


@dataclass(frozen=True)
class Shape:
    """The choices one run makes, the same at every line."""

    prefix: str
    counter: str
    gives: str
    loss_name: str
    other_name: str | None
    join: str
    sep: str
    style: str
    eval_style: str
    eval_every: int
    prose_every: int
    lines: int
    nonfinite_at: int | None  # the training line whose value is not a number
    nonfinite_token: str
    nonfinite_in_loss: bool


@dataclass
class Run:
    """The text of a run and what a reader must find in it."""

    lines: list[str] = field(default_factory=list)
    # Per training line: its index in `lines`, its step (or None), the loss as printed.
    training: list[tuple[int, int | None, float]] = field(default_factory=list)
    eval_values: list[float] = field(default_factory=list)
    prose_lines: list[int] = field(default_factory=list)
    nonfinite_line: int | None = None


def value_text(value: float, style: str) -> str:
    if style == "sci":
        return f"{value:.3e}"
    if style == "SCI":
        return f"{value:.3E}"
    if style == "tensor":
        return f"tensor({value:.4f}, device='cuda:0')"
    return f"{value:.4f}"


def printed(text: str) -> float:
    """The value a reader can recover from `text` (what it printed, rounded as printed)."""
    if text.startswith("tensor("):
        text = text[7:].split(",")[0]
    return float(text)


def build(shape: Shape) -> Run:
    """The lines of a run of this shape; values fall as training does."""
    run = Run()
    m = shape.lines
    per_epoch = 5
    epochs = (m + per_epoch - 1) // per_epoch
    for i in range(m):
        n = i + 1
        e, b = i // per_epoch + 1, i % per_epoch + 1
        if shape.gives == "epoch":
            e = n  # one line per epoch
        counter = shape.counter.format(n=n, m=m * 10 if shape.gives == "step" else m,
                                       e=e, E=epochs if shape.gives != "epoch" else m,
                                       b=b, B=per_epoch)
        loss = 2.5 * 0.97 ** i + 0.01 * ((i * 7) % 3)
        loss_text = value_text(loss, shape.style)
        other_value = 1e-3 * (1 + i % 4) if shape.other_name in ("lr", "learning_rate") \
            else 0.3 + 0.01 * i
        other_text = value_text(other_value, "fixed" if shape.style == "tensor" else shape.style)
        if i == shape.nonfinite_at:
            if shape.nonfinite_in_loss or shape.other_name is None:
                loss_text = shape.nonfinite_token
            else:
                other_text = shape.nonfinite_token
        fields = [f"{shape.loss_name}{shape.join}{loss_text}"]
        if shape.other_name is not None:
            fields.append(f"{shape.other_name}{shape.join}{other_text}")
        body = shape.sep.join(fields)
        glue = " " if shape.counter.endswith(":") else shape.sep
        text = f"{counter}{glue}{body}"
        prefix = shape.prefix.format(s=i % 60)
        run.lines.append(prefix + text)
        step = n if shape.gives == "step" else None
        value = printed(loss_text) if loss_text not in NON_FINITE else math.nan
        run.training.append((len(run.lines) - 1, step, value))
        if i == shape.nonfinite_at:
            run.nonfinite_line = len(run.lines) - 1
        if shape.eval_style and n % shape.eval_every == 0:
            eval_value = 7.0 + 0.001 * i  # far from any training loss
            eval_text = shape.eval_style.format(c=counter, sep=shape.sep, join=shape.join,
                                                v=f"{eval_value:.4f}")
            run.lines.append(prefix + eval_text)
            run.eval_values.append(round(eval_value, 4))
        if shape.prose_every and n % shape.prose_every == 0:
            run.lines.append(prefix + PROSE[i % len(PROSE)].format(n=n))
            run.prose_lines.append(len(run.lines) - 1)
    return run


def index_epoch(shape: Shape, run: Run, index: int) -> float:
    """The epoch an epoch-only training line prints (one line per epoch, from 1)."""
    return float([i for i, _, _ in run.training].index(index) + 1)


def problems(shape: Shape, run: Run) -> list[str]:
    """What the parser got wrong reading `run` (empty when it read it as it should):
    the training loss recovered with its values under the log's own name, the step where
    the line has one (a bare `N:` from the second line: only a count that rose is known
    to be no task's label), the epoch of a line that has only an epoch (each record a
    whole epoch: the epochs are the progress), no evaluation value in the training loss,
    the non-finite value found at its line, prose never a record."""
    from babysit.parsing.parser import LogParser
    from babysit.parsing.text import normalise_key

    parser = LogParser()
    records = [parser.feed(line) for line in run.lines]
    name = normalise_key(shape.loss_name)
    found: list[str] = []
    losses = []
    for index, step, value in run.training:
        record = records[index]
        if record is not None and name not in record.metrics:
            # `Train Loss` read as `loss`: the training's own loss all the same
            bare = name.removeprefix("train_").removeprefix("train/")
            name_here = bare if bare in record.metrics else name
        else:
            name_here = name
        if record is None or name_here not in record.metrics:
            if index != run.nonfinite_line:
                found.append(f"line {index} not read as {name!r}: {run.lines[index]!r} "
                             f"-> {record.metrics if record else None}")
            continue
        got = record.metrics[name_here]
        losses.append(got)
        if not (math.isnan(value) and math.isnan(got)) and not math.isclose(
                got, value, rel_tol=1e-6, abs_tol=1e-9) and index != run.nonfinite_line:
            found.append(f"line {index}: {name}={got}, printed {value}: {run.lines[index]!r}")
        if shape.gives == "epoch" and record.epoch != index_epoch(shape, run, index):
            found.append(f"line {index}: epoch {record.epoch}: {run.lines[index]!r}")
        if step is not None and record.step != step and not (
                shape.counter == "{n}:" and step == 1):
            found.append(f"line {index}: step {record.step}, printed {step}: "
                         f"{run.lines[index]!r}")
    if shape.gives == "batch":
        steps = [records[i].step for i, _, _ in run.training if records[i] is not None]
        if any(s is None for s in steps) or steps != sorted(steps) or len(set(steps)) != len(steps):
            found.append(f"batch counters did not make rising steps: {steps}")
    for value in run.eval_values:
        if any(math.isclose(value, loss, rel_tol=1e-9) for loss in losses):
            found.append(f"the evaluation's {value} read as a training loss")
    for record in records:
        if record is not None and any(
                math.isclose(v, e, rel_tol=1e-9) for e in run.eval_values
                for k, v in record.metrics.items() if k == name):
            found.append(f"the evaluation's value under the training loss's name {name!r}")
            break
    if run.nonfinite_line is not None:
        record = records[run.nonfinite_line]
        if record is None or all(math.isfinite(v) for v in record.metrics.values()):
            found.append(f"non-finite value not read: {run.lines[run.nonfinite_line]!r} -> "
                         f"{record.metrics if record else None}")
    for index in run.prose_lines:
        record = records[index]
        if record is not None and record.metrics:
            found.append(f"prose read as a record: {run.lines[index]!r} -> {record.metrics}")
    return found

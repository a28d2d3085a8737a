"""Training lines made of fields, each a name in words and its number, with no `:` or `=`
between them: `Epoch 00026 | Step 00020 | Loss 0.3694 | Train Acc 0.9070 | Speed
(samples/sec) 43768.49` (DGL's examples and the loops copied from them), `epoch 305,
minibatch 120/120, validation error 5.68 %` (the Theano deep-learning tutorials),
`Pre-training layer 0, epoch 3, cost 0.19`.

The fields are set apart by `|`, `,` or a tab, and every field is one of these (a line
with anything else in it, a `[49500/50000]` counter, `VRAM 9.8/15.9GB (62%)`, is another
format's). A line counts only when it has at least one counter field (`epoch N`, `step
N`, `iter N`, `minibatch N/M`) and at least one field whose name says it is a measure of
training (a loss, a cost, an error, an accuracy): prose with numbers in it (`Loaded 5
files, skipped 3`) has neither. `batch N` with no total is a batch size, not a counter.
A line the generic key/value reader reads (`step 1 | loss 0.9 | lr 1e-3`) is left to it.

A step counter beside an epoch counter, with no total, may count the epoch's batches
(DGL's `Step 00000` … `Step 00020` in every epoch): such a line gives its epoch, not a
step. A rate or a time that is not a number (`Speed (samples/sec) nan` on the first
line, before any timing) is undefined, not a measurement: it is left out.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from babysit import lazy_re
from babysit.parsing.formats import SPLIT_NAMES, Parsed, parse_key_values
from babysit.parsing.text import normalise_key, to_number

# Fields are set apart by `|`, `,`, a tab, or a run of spaces or a spaced dash before a
# name (`iter 35 - mae 0.89`); before a number they set a name from its value (`cost
# 0.41` with two spaces), and a dash against a number (`-inf`) is the number's.
# A bracketed counter ends its own field (`[Step 500/159210] Train 9.6801 | Val 9.6793`).
# (Each begins where a run of spaces begins, and eats it whole: tried from inside a long
# run, then backtracked, a line of 60,000 spaces took minutes.)
_SEPARATOR = lazy_re.compile(r"(?<!\s)(?:[^\S\t]*+(?:\||,|\t)\s*|"
                             r"(?:\s{2,}+|\s++-\s+)(?=[A-Za-z\[]))|"
                             r"(?<=\d\])\s++(?=[A-Za-z])")
# Remarks in parentheses at the end of a line, words only (`(saved)`, `(best BLEU
# saved)`, `(*)`, `(new best!)`): what the loop did, not a measure.
_REMARK = lazy_re.compile(r"(?:\s+\((?=[^()\d]*[A-Za-z*!])[^()\d]{1,40}\))+\s*$")
_BARE_COUNT = lazy_re.compile(r"^\s*\d{1,9}:\s+(?=[A-Za-z])")
_TENSOR = lazy_re.compile(r"tensor\(\s*([^,()\s]+)[^()]*\)")
# A counter field of its own shape, no name and value: `[12/540]`, `12/540`, `Epoch
# [3/20]`, `Epoch: [3][40/500]`, `Step: 12`, `Iteration 12/540`; after a task's label
# (`0: Epoch [1/57]`, srun -l, before `task_labels` knows it for one); a name inside the
# brackets (`[Step 500/159210]`).
_COUNTER_FIELD = lazy_re.compile(
    r"^(?:\d{1,4}:\s+)?(?:(?P<open>\[)?(?P<name>[Ee]poch|EPOCH|[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER)"
    r"\s*:?\s*)?"
    r"\[?\s*(?P<value>\d+)\s*(?:/\s*(?P<total>\d+)\s*)?(?(open)\]|\]?)"
    r"(?:\[\s*(?P<inner>\d+)\s*/\s*(?P<inner_total>\d+)\s*\])?$")
# `Train Acc 0.9070`, `validation error 5.683333 %`, `Speed (samples/sec) 43768.49`,
# `GPU 469.6 MB`, `minibatch 120/120`, `Val~20% 9.6793` (measured on about a fifth of
# the split: a qualifier of the name, as a parenthesis is).
_FIELD = lazy_re.compile(
    # (a name in any script's letters: a physicist's `η_eff 2.390e-03`, `λ_pde 1.0`)
    r"^(?P<name>[^\W\d_][\w/.-]*(?:\s+[^\W\d_][\w-]*){0,5}"
    r"(?:\s*\([^()]{1,24}\)|~\d{1,3}%)?)"
    r"\s+(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf|-inf|Inf|"
    r"tensor\([^()]*\))"
    r"(?:\s*/\s*(?P<total>\d+))?"
    r"(?:\s*(?P<unit>%|[A-Za-z]{1,3}|(?:tok|tokens|samples|it)/s))?$")
# Two statistics under one name, `length mean/std 94.953125/10.900731` (Stanford's nlc
# seq2seq loop): a description of the batch, not a measure; passed over, so the line's
# other fields (`grad norm nan, param norm nan`) are still read.
# A split named alone before two figures apart by a slash (a hybrid quantum CNN's `epoch  1
# train 0.7242/0.5541  val 0.6617/0.5950  auc 0.6894`): the split's loss, then a score
# the line never names; the first is read as the split's figure (the second, unnamed, is
# left alone).
_SPLIT_PAIR = lazy_re.compile(
    r"^(?P<name>train|training|val|valid|validation|test|dev|eval)\s+"
    r"(?P<value>[-+]?\d+\.\d+(?:[eE][-+]?\d+)?)\s*/\s*[-+]?\d+\.\d+(?:[eE][-+]?\d+)?$")
_STATISTICS_PAIR = lazy_re.compile(
    r"^[A-Za-z][A-Za-z0-9_ ]*\b[A-Za-z]+/[A-Za-z]+\s+[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
    r"/[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$")
# (A reinforcement-learning loop counts its episodes: `episode 10 | reward 23.0 | epsilon
# 0.993`.)
_COUNTERS = {"epoch": "epoch", "step": "step", "iter": "step", "iteration": "step",
             "batch": "batch", "minibatch": "batch", "mini_batch": "batch",
             "episode": "step"}
# Names of a training measure (a field of one of these makes the line a record).
# A language model's negative log-likelihood and cross-entropy are its loss (`nll`,
# `xent`, `ce` as a whole word: not the `ce` of `balance`); `top1` an accuracy.
_MEASURE = lazy_re.compile(r"loss|cost|error|err\b|acc|accuracy|ppl|perplexity|auc|auroc|f1|"
                           r"reward|score|dice|iou|precision|recall|bleu|rmse|mse|mae|nll|"
                           r"xent|(?:^|_|/)ce$|top\d")
# Names of a label, not a measure: `Pre-training layer 0`, `fold 3`, `stage 2`.
_LABEL = lazy_re.compile(r"(?:^|_)(?:layer|stage|phase|fold|run|round|trial|task|gpu_id|rank)$")
# Names of a rate, a time or a memory: undefined when not a number.
_NOT_QUALITY = lazy_re.compile(r"speed|/s|/sec|per_s|throughput|time|gpu|mem|_mb$|_gb$|eta")


# A line of one-word names, each and its number one space apart and nothing else (a
# split's tag in brackets before them, a remark in parentheses after): `[Train] Epoch 102
# Step 10000/10010 Loss 2.5567 Acc 61.25%`. The spaces after a number are the fields'
# separators (`_ONE_SPACE`).
_ONE_SPACED = lazy_re.compile(
    r"^(?:\[[A-Za-z]{2,12}\] )?"
    r"(?:[A-Za-z][A-Za-z0-9_@]{0,30} [-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"(?:/\d+|%)?(?: |$)){2,12}(?:\((?=[^()\d]*[A-Za-z])[^()\d]{1,24}\))?\s*$")
_ONE_SPACE = lazy_re.compile(r"(?<=[\d%]) (?=[A-Za-z(])")

# A field that is the time the line was printed (a TrOCR script's `Epoch  4 | train 1.7439
# | val 1.4283 | 2026-06-18 12:46:30`): a date, a time of day, or both.
_STAMP_FIELD = lazy_re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?$|"
                               r"^\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?$")
# A counter glued to its number opening the line, then fields (a CutPaste trainer's
# `epoch100 ave_auroc 0.91243`, written to its results file every hundred epochs).
_GLUED_COUNTER = lazy_re.compile(r"^\s*([Ee]poch|EPOCH|[Ii]ter(?:ation)?|ITER|[Ss]tep|STEP)(\d+)"
                                 r"\s+(?=[A-Za-z])")
# A field that is a bare duration, no name (an offline Q-learning loop's `Epoch 1/50 |
# train 0.17699 | val 0.03603 | 3s`; `| 1m 12s`, `| 850ms`): how long the epoch took or
# the run has run, never a measure of training.
_DURATION_FIELD = lazy_re.compile(r"^(?:\d+\s?h\s?)?(?:\d+\s?m(?:in)?\s?)?"
                                  r"\d+(?:\.\d+)?\s?(?:s|sec|secs|ms|min|mins)$")


def parse_spaced_fields(segment: str, known_names: bool = True) -> Parsed | None:
    """A line of `Name value` fields (see the module's docstring), else None. With
    `known_names=False` (a line whose shape the run prints over and over) a field of any
    name is a measure: Torch7's `epoch 80  running_average 0.7634` (a reward's average)."""
    if "=" in segment:
        return None
    if "│" in segment or "┃" in segment:
        # (a box-drawing bar between the fields: a Burgers operator's `Ep   1/100 │  0.80s
        # │ bd 4.2019e+00 │ res 3.6997e+01 │ test 3.3948e+00 │ η_eff 2.390e-03`)
        segment = segment.replace("│", "|").replace("┃", "|")
    glued = _GLUED_COUNTER.match(segment)
    if glued is not None:
        # `epoch100 ave_auroc 0.91243`: the counter's word and its number as one token
        segment = f"{glued.group(1)} {glued.group(2)} | {segment[glued.end():].lstrip()}"
    one_spaced = None  # the line as it came, when its fields are one space apart
    if "|" not in segment and "," not in segment and "\t" not in segment \
            and "  " not in segment and " - " not in segment and not _BARE_COUNT.match(segment):
        if _ONE_SPACED.match(segment) is None:
            return None
        one_spaced = segment
        # `[Validation] Epoch 102 ValLoss 2.0061 ValAcc 72.94% (raw)`: one-word names
        # and their numbers, one space apart and nothing else: each pair is a field (the
        # split's tag at the head is the evaluation reader's to see, no field)
        segment = _ONE_SPACE.sub(" | ", segment[segment.find("]") + 1:]
                                 if segment.startswith("[") else segment)
    if "tensor(" in segment:  # `Loss tensor(2.5000, device='cuda:0')`: the value alone
        segment = _TENSOR.sub(r"\1", segment)
    if segment.endswith("]"):
        segment = _ELAPSED.sub("", segment)  # `step 100  train 1.18  [13s]`: time so far
    elif segment.endswith(("s", "min")):
        segment = _TOOK.sub("", segment)  # `… auc 0.6894  2.2s`: the time the epoch took
    if "|" in segment:
        segment = _NORM.sub(_norm_name, segment)  # `|g| 9.48e-01`: a norm, no pipes
    if segment.endswith(")"):
        # `Epoch 08 | train 3.066 | val 2.960 (saved)`: the loop's remark on the line,
        # no field of it
        segment = _REMARK.sub("", segment)
    # `12: xent 2.50 | lr 0.001`: a bare count first, the step once it rises
    # (`leading_counter`, which reads it; a task's label otherwise)
    counted = _BARE_COUNT.match(segment)
    if counted is not None:
        segment = segment[counted.end():]
    counters: dict[str, tuple[int, int | None]] = {}
    metrics: dict[str, float] = {}
    measured = False
    for field in _SEPARATOR.split(segment.strip()):
        if not field:
            continue
        match = _FIELD.match(field)
        if match is None:
            if _STAMP_FIELD.match(field) or _DURATION_FIELD.match(field):
                continue  # when the line was printed (`| 2026-06-18 11:39:10`), or how
                # long its work took (`| 3s`): no field
            if not counters and _counter_field(field, counters):
                continue  # the line's counter, in a shape of its own (`[12/540]`)
            if _STATISTICS_PAIR.match(field):
                continue
            pair = _SPLIT_PAIR.match(field)
            if pair is not None:
                metrics[pair.group("name")] = float(pair.group("value"))
                continue
            return None  # not a line of such fields only
        name = _name(match.group("name"), match.group("unit"))
        value = to_number(match.group("value"))
        if value is None:
            continue
        total = match.group("total")
        # (`Ep   1/100`: an epoch's short name with its plan; `ep 3` alone may be an episode)
        counter = _COUNTERS.get(name) or ("epoch" if name == "ep" and total else None)
        if counter == "batch" and total is None:
            continue  # `batch 16`: a batch size
        if counter is not None and value == int(value) and counter not in counters:
            counters[counter] = (int(value), int(total) if total else None)
            continue
        if match.group("total") is not None or _LABEL.search(name):
            continue
        if not math.isfinite(value) and _NOT_QUALITY.search(name):
            continue
        metrics[name] = value
        measured = measured or not known_names or _MEASURE.search(name) is not None
    # (the training's figure and a held-out split's, each named by its split alone,
    # beside the epoch's counter: `Epoch  1 | train 2.1521 | val 1.4609`, the two losses
    # of a loop that prints one line an epoch, its first line read as its others)
    measured = measured or ("train" in metrics and len(metrics.keys() & SPLIT_NAMES) > 1
                            and "epoch" in counters)
    if not measured or (not counters and counted is None):
        return None
    if one_spaced is not None:
        generic = parse_key_values(one_spaced)
        if generic is not None and (generic.step is not None or generic.epoch is not None):
            # The generic reader places the line's counters (`Epoch 102 Step 10000/10010`:
            # a batch of the epoch, `per_epoch`); the fields add the figures it did not
            # name (`Acc 61.25%`, capitalised).
            return replace(generic, metrics={**metrics, **generic.metrics})
    generic = parse_key_values(segment)
    if generic is not None and any(_MEASURE.search(k) for k in generic.metrics) \
            and metrics.keys() <= generic.metrics.keys():
        # A line the generic key/value reader reads whole is its (`step 1 | loss 0.9`);
        # not one where it finds only a rate (`…, Loss 0.0000, Speed 0.00 tok/s`: the
        # loss is in the fields) or only some (`iter 1 - rmse 2.50 - acc 0.30`).
        return None
    epoch = counters.get("epoch")
    step = counters.get("step")
    if step is not None and (epoch is None or step[1] is not None):
        return Parsed("spaced-fields", step[0], step[1],
                      float(epoch[0]) if epoch is not None else None, metrics=metrics)
    batch = counters.get("batch")
    if epoch is not None and batch is not None and batch[1]:
        # `epoch 3, batch 40/500`: the batch of its epoch, placed in the run as
        # `[e/E][n/N]` is (metric_lines: `per_epoch`).
        return Parsed("epoch-batch", batch[0], batch[1], float(epoch[0]), epoch[1],
                      metrics=metrics, per_epoch=batch[1])
    if epoch is not None:
        # (its plan too: `Epoch 50/50 | train 0.0053 | val 0.0041` is the last epoch)
        return Parsed("spaced-fields", epoch=float(epoch[0]), total_epochs=epoch[1],
                      metrics=metrics)
    return Parsed("spaced-fields", metrics=metrics) if counted is not None else None


# A norm in a mathematician's bars before its value (a DDSP trainer's `step    100  train
# 1.1827e+00  |g| 9.48e-01  [13s]`: the gradient's norm), and the time since the start in
# brackets at the line's end.
_NORM = lazy_re.compile(r"(?:(?<=\s)|^)\|(?P<name>[A-Za-z]\w{0,10})\|(?=\s+[-+]?[\d.])")
_ELAPSED = lazy_re.compile(r"\s+\[(?:\d+(?:\.\d+)?s|\d+:\d{2}(?::\d{2})?)\]\s*$")
# ... or the time the line's work took, a bare duration at its end, set apart by two
# spaces or more (`epoch  1  train 0.7242/0.5541  val 0.6617/0.5950  auc 0.6894  2.2s`).
_TOOK = lazy_re.compile(r"\s{2,}\d+(?:\.\d+)?\s?(?:s|sec|ms|min)\s*$")
_GRADIENT = frozenset({"g", "grad", "grads", "gradient", "gnorm"})


def _norm_name(found: re.Match[str]) -> str:
    name = found.group("name").lower()
    return "grad_norm" if name in _GRADIENT else f"{name}_norm"


def _counter_field(field: str, counters: dict[str, tuple[int, int | None]]) -> bool:
    """Whether `field` is a counter of its own shape; if so, what it counts goes into
    `counters` (an epoch, an epoch's batch, or the run's step)."""
    match = _COUNTER_FIELD.match(field)
    if match is None:
        return False
    name = (match.group("name") or "").lower()
    value, total = int(match.group("value")), match.group("total")
    if match.group("inner") is not None:  # `Epoch: [3][40/500]`
        if name and name != "epoch":
            return False
        counters["epoch"] = (value, int(total) if total else None)
        counters["batch"] = (int(match.group("inner")), int(match.group("inner_total")))
        return True
    if not name and total is None:
        return False  # a bare number is no counter
    kind = "epoch" if name == "epoch" else "step"
    counters[kind] = (value, int(total) if total else None)
    return True


def _name(words: str, unit: str | None) -> str:
    """The metric's name: `Train Acc` -> `train_acc`, `Speed (samples/sec)` ->
    `samples/s`, `GPU` with `MB` -> `gpu_mb`."""
    words = words.strip()
    if "(" in words:
        head, _, inside = words.partition("(")
        inside = inside.rstrip(")").strip().lower()
        if "/s" in inside:
            unit_name = inside.split("/")[0].strip()
            return f"{unit_name}/s" if unit_name in ("samples", "tokens") else normalise_key(head)
        words = head
    if unit and unit.endswith("/s"):
        # `Speed 0.00 tok/s`: a throughput, named by what it counts
        counted = unit.split("/")[0]
        return "tokens/s" if counted.startswith("tok") else f"{counted}/s"
    name = normalise_key(words)
    if unit and unit != "%" and unit.lower() in ("mb", "gb", "kb", "ms"):
        name = f"{name}_{unit.lower()}"
    return name

"""One pure parser per log-line format.

Each `parse_*` takes one cleaned text segment and returns a `Parsed` or None. They
are tried in `parser.LINE_PARSERS` order; the first that recognises the segment wins.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from typing import Any

from babysit.model import line_value
from babysit.parsing.text import normalise_key, number_from, to_number


@line_value
class Parsed:
    fmt: str
    step: int | None = None
    target: int | None = None
    epoch: float | None = None
    total_epochs: int | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    per_epoch: int | None = None  # batches in one epoch, when the line says


# Keys that count progress rather than measure training.
STEP_KEYS = ("step", "global_step", "iter", "iteration", "iter_num", "_step",
             "trainer/global_step", "train/global_step", "train/step", "num_steps", "steps",
             "current_steps", "current_step")
TARGET_KEYS = ("max_steps", "total_steps", "max_iters", "train_iters", "num_training_steps",
               "target_steps")
EPOCH_KEYS = ("epoch", "train/epoch", "trainer/epoch")
_COUNTER_KEYS = frozenset(STEP_KEYS + TARGET_KEYS + EPOCH_KEYS + (
    "v_num", "_runtime", "_timestamp", "timestamp", "time", "eta", "rank", "local_rank",
    "world_size", "pid", "total_epochs", "max_epochs", "num_epochs"))


_TOTAL_EPOCH_KEYS = ("total_epochs", "max_epochs", "num_epochs")


def split_counters(values: Mapping[str, float], fmt: str = "") -> Parsed:
    """Pull step/target/epoch out of a flat key→number map; the rest are metrics."""
    names = tuple(values)
    plan = _PLANS.get(names)
    if plan is None:
        plan = _plan(names)
    step_key, target_key, epoch_key, total_key, counters = plan
    if not counters:
        return Parsed(fmt, metrics=dict(values))
    epoch = values[epoch_key] if epoch_key is not None else None
    return Parsed(fmt,
                  _int_or_none(values[step_key]) if step_key is not None else None,
                  _int_or_none(values[target_key]) if target_key is not None else None,
                  epoch if epoch is not None and math.isfinite(epoch) else None,
                  _int_or_none(values[total_key]) if total_key is not None else None,
                  {k: v for k, v in values.items() if k not in counters})


_Plan = tuple[str | None, str | None, str | None, str | None, frozenset[str]]
# Which of a line's names are its step, planned total, epoch and planned epochs, by the
# names it has: a log prints the same few shapes of line over and over.
_PLANS: dict[tuple[str, ...], _Plan] = {}


def _plan(names: tuple[str, ...]) -> _Plan:
    present = _COUNTER_KEYS.intersection(names)
    plan = (_first(STEP_KEYS, present), _first(TARGET_KEYS, present),
            _first(EPOCH_KEYS, present), _first(_TOTAL_EPOCH_KEYS, present), present)
    if len(_PLANS) >= 512:
        _PLANS.clear()
    _PLANS[names] = plan
    return plan


def _first(keys: tuple[str, ...], present: frozenset[str]) -> str | None:
    return next((key for key in keys if key in present), None)


def _int_or_none(value: float | None) -> int | None:
    if value is None or not math.isfinite(value):
        return None
    return int(value)


# --- JSON lines -------------------------------------------------------------------

_MAX_JSON_DEPTH = 8  # metrics nest a level or two; anything deeper is not a metric
_MAX_JSON_KEYS = 512


def _flatten(obj: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(`a/b/c`, value) pairs, breadth first, without recursion and within bounds, so a
    hostile line cannot exhaust the stack or the time."""
    queue: list[tuple[str, Mapping[str, Any], int]] = [("", obj, 0)]
    emitted = 0
    while queue:
        prefix, mapping, depth = queue.pop(0)
        for key, value in mapping.items():
            name = f"{prefix}/{key}" if prefix else str(key)
            if isinstance(value, Mapping):
                if depth + 1 < _MAX_JSON_DEPTH:
                    queue.append((name, value, depth + 1))
                continue
            yield name, value
            emitted += 1
            if emitted >= _MAX_JSON_KEYS:
                return


def parse_json_line(segment: str) -> Parsed | None:
    """`{"step": 10, "train": {"loss": 2.3}}`; nested keys flatten to `train/loss`.
    Python's json module accepts NaN/Infinity, which is how json.dumps writes them."""
    text = segment.strip()
    if not (text.startswith('{"') and text.endswith("}")):
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        return None
    if not isinstance(obj, dict):
        return None
    values: dict[str, float] = {}
    for key, value in _flatten(obj):
        number = number_from(value)
        if number is None:
            continue
        name = normalise_key(key)
        if isinstance(value, str) and not math.isfinite(number) \
                and not any(hint in name for hint in _METRIC_HINTS):
            continue  # the word "nan" as a note or a label, not a measured value
        values[name] = number
    if not values:
        return None
    return split_counters(values, "jsonl")


# --- Hugging Face Trainer ---------------------------------------------------------

# `{'loss': 2.34, 'grad_norm': nan, ...}` (4.x) or `{'loss': '2.34', ...}` (5.x).
_HF_PAIR = re.compile(r"'([^']+)':\s*'?([^,'}\s]+)'?")


def parse_hf_dict(segment: str) -> Parsed | None:
    start = segment.find("{'")
    if start < 0:
        return None
    end = segment.find("}", start)
    values: dict[str, float] = {}
    for key, value in _HF_PAIR.findall(segment, start, end if end > 0 else len(segment)):
        try:
            number: float | None = float(value)
        except ValueError:
            number = to_number(value)
        if number is not None:
            values[normalise_key(key)] = number
    if not values:
        return None
    return split_counters(values, "hf-trainer")


# --- Megatron-LM ------------------------------------------------------------------

_MEGATRON = re.compile(r"iteration\s+(?P<step>\d+)\s*/\s*(?P<target>\d+)\s*\|(?P<rest>.*)")


def parse_megatron(segment: str) -> Parsed | None:
    """` iteration      100/  500000 | consumed samples: 51200 | lm loss: 7.2E+00 | ...`"""
    if "iteration" not in segment:
        return None
    match = _MEGATRON.search(segment)
    if match is None:
        return None
    metrics: dict[str, float] = {}
    for field_text in match.group("rest").split("|"):
        key, sep, value = field_text.partition(":")
        number = to_number(value) if sep else None
        if number is not None:
            metrics[normalise_key(key)] = number
    metrics.pop("consumed_samples", None)
    return Parsed("megatron", int(match.group("step")), int(match.group("target")),
                  metrics=metrics)


# --- nanoGPT ----------------------------------------------------------------------

_NANOGPT_ITER = re.compile(
    r"^iter (?P<step>\d+): loss (?P<loss>\S+), time (?P<ms>[\d.]+)ms(?:, mfu (?P<mfu>-?[\d.]+)%)?"
)
_NANOGPT_EVAL = re.compile(
    r"^step (?P<step>\d+): train loss (?P<train>\S+), val loss (?P<val>\S+?),?\s*$"
)


def parse_nanogpt(segment: str) -> Parsed | None:
    text = segment.strip()
    if not text.startswith(("iter ", "step ")):
        return None
    match = _NANOGPT_ITER.match(text)
    if match is not None:
        metrics = {"loss": to_number(match.group("loss").rstrip(","))}
        ms = to_number(match.group("ms"))
        if ms:
            metrics["time_ms"] = ms
            metrics["steps_per_second"] = 1000.0 / ms
        if match.group("mfu") is not None:
            metrics["mfu"] = to_number(match.group("mfu"))
        return Parsed("nanogpt", int(match.group("step")),
                      metrics={k: v for k, v in metrics.items() if v is not None})
    match = _NANOGPT_EVAL.match(text)
    if match is not None:
        evals = {"train_loss_est": to_number(match.group("train")),
                 "val_loss": to_number(match.group("val"))}
        return Parsed("nanogpt", int(match.group("step")),
                      metrics={k: v for k, v in evals.items() if v is not None})
    return None


# --- `Epoch [1/10], Step [100/600], Loss: 0.2345` -----------------------------------

_EPOCH_STEP = re.compile(
    r"Epoch\s*\[?\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\s*\]?\s*[,|]?\s*"
    r"(?:Step|Iter|Batch)\s*\[?\s*(?P<step>\d+)\s*/\s*(?P<steps>\d+)\s*\]?(?P<rest>.*)",
    re.IGNORECASE,
)


def parse_epoch_step(segment: str) -> Parsed | None:
    if "poch" not in segment and "POCH" not in segment:
        return None
    match = _EPOCH_STEP.search(segment)
    if match is None:
        return None
    epoch, epochs = int(match.group("epoch")), int(match.group("epochs"))
    step, steps = int(match.group("step")), int(match.group("steps"))
    metrics = key_values(match.group("rest"))
    # Epochs print 1-based; the global step counts every batch of earlier epochs.
    first_epoch = max(epoch - 1, 0)
    return Parsed("epoch-step", first_epoch * steps + step, epochs * steps,
                  float(first_epoch) + step / steps if steps else None, epochs, metrics)


# --- torchtitan ---------------------------------------------------------------------

_TITAN = re.compile(r"step:\s*(?P<step>\d+)\s+(?P<rest>loss:.*)")
_TITAN_PAIR = re.compile(r"(?P<key>[a-z_]+):\s*(?P<value>[\d.,eE+\-]+|nan|inf)(?P<unit>[A-Za-z]*)")


def parse_torchtitan(segment: str) -> Parsed | None:
    """`step:  1  loss: 12.2345  memory: 1.23GiB(1.23%)  tps: 1,234  tflops: 12.3  mfu: 1.2%`"""
    if "step:" not in segment:
        return None
    match = _TITAN.search(segment)
    if match is None:
        return None
    metrics: dict[str, float] = {}
    for pair in _TITAN_PAIR.finditer(match.group("rest")):
        number = to_number(pair.group("value"))
        if number is None:
            continue
        key = pair.group("key")
        if pair.group("unit") == "GiB":
            key = f"{key}_gib"
        metrics[key] = number
    return Parsed("torchtitan", int(match.group("step")), metrics=metrics)


# --- generic `key=value` / `key: value` -----------------------------------------------

_KV = re.compile(
    # Up to three words before a colon name one metric: `Train Loss: 0.04`,
    # `Validation L1 Loss: 0.5`, `grad norm = 1.2`.
    r"(?<![\w./-])(?P<key>[A-Za-z_][\w./-]*(?: [A-Za-z_][\w./-]*){0,3})\s*[=:]\s*"
    r"(?P<value>[+-]?(?:\d[\d,]*\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|nan|NaN|NAN|"
    r"inf|Inf|INF|tensor\([^)]*\)))(?P<unit>%|[A-Za-z/]*)"
)
_STEP_OF = re.compile(r"\b(?:[Ss]tep|[Ii]ter(?:ation)?)\s*[:#]?\s*(?P<step>\d+)\s*(?:/|of)\s*"
                      r"(?P<target>\d+)")
_STEP_WORD = re.compile(r"\b(?:[Ss]tep|[Ii]ter(?:ation)?|global_step)\s*[:=#]?\s*(?P<step>\d+)\b")
_EPOCH_WORD = re.compile(r"\b[Ee]poch\s*[:=#]?\s*\[?\s*(?P<epoch>\d+)(?:\s*/\s*(?P<epochs>\d+))?")
_SPACED_KV = re.compile(r"(?<![\w./-])(?P<key>(?:[a-z]+_)?(?:loss|lr|grad_norm|gnorm|acc|"
                        r"accuracy|ppl|perplexity))\s+"
                        r"(?P<value>[+-]?(?:\d[\d.]*(?:[eE][+-]?\d+)?|nan|inf))\b")

# `142.1 samples/s`, `12,345 tokens/sec`: the number comes before its unit.
_RATE_UNIT = re.compile(r"(?<![\w.])(?P<value>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>samples|tokens|tok|"
                        r"sequences|seqs|images|imgs|steps|it)\s*/\s*(?:s|sec|second)\b")
_RATE_NAMES = {"samples": "samples/s", "tokens": "tokens/s", "tok": "tokens/s",
               "sequences": "samples/s", "seqs": "samples/s", "images": "samples/s",
               "imgs": "samples/s", "steps": "steps_per_second", "it": "it/s"}

_METRIC_HINTS = ("loss", "lr", "learning_rate", "grad", "norm", "acc", "ppl", "perplexity",
                 "throughput", "samples", "tokens", "tok", "mfu", "f1", "bleu", "rouge", "wer",
                 "reward", "kl", "entropy", "score", "auc", "it/s", "tps")


def key_values(text: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for pair in _KV.finditer(text):
        number = to_number(pair.group("value"))
        if number is None:
            continue
        key = normalise_key(pair.group("key"))
        if pair.group("unit") == "ms" and not key.endswith("_ms"):
            key = f"{key}_ms"
        values[key] = number
    for pair in _SPACED_KV.finditer(text):
        number = to_number(pair.group("value"))
        if number is not None:
            values.setdefault(normalise_key(pair.group("key")), number)
    if "/s" in text:
        for rate in _RATE_UNIT.finditer(text):
            number = to_number(rate.group("value"))
            if number is not None:
                values.setdefault(_RATE_NAMES[rate.group("unit")], number)
    return values


def _looks_like_metrics(values: Mapping[str, float]) -> bool:
    return any(h in key for key in values for h in _METRIC_HINTS)


def parse_key_values(segment: str, known_names: bool = True) -> Parsed | None:
    """`step=100 loss=2.3 lr=1e-4`, `Step 100/1000 | loss: 2.3`, `iter 5 loss 2.3`.

    A line counts only if it carries something metric-like, so ordinary log chatter
    with a colon in it (`Loading: 3 files`) is not mistaken for training output; with
    `known_names=False` (a line whose shape the run prints over and over, with a step)
    any name will do (`l_pix: 0.03`)."""
    values = key_values(segment)
    if known_names and not _looks_like_metrics(values):
        return None
    if not values:
        return None
    parsed = split_counters(values)
    step, target, epoch, total_epochs = parsed.step, parsed.target, parsed.epoch, None
    step_of = _STEP_OF.search(segment)
    if step_of is not None:
        step, target = int(step_of.group("step")), int(step_of.group("target"))
    elif step is None:
        step_word = _STEP_WORD.search(segment)
        if step_word is not None:
            step = int(step_word.group("step"))
    epoch_word = _EPOCH_WORD.search(segment)
    if epoch_word is not None:
        epoch = epoch if epoch is not None else float(epoch_word.group("epoch"))
        if epoch_word.group("epochs"):
            total_epochs = int(epoch_word.group("epochs"))
    metrics = {k: v for k, v in parsed.metrics.items() if k not in ("step", "iter", "epoch")}
    return Parsed("key-value", step, target, epoch, total_epochs, metrics)


LineParser = Callable[[str], "Parsed | None"]

# Specific shapes first; the permissive key/value parser last.

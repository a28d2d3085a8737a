"""Progress bars: tqdm (plain, Hugging Face, Lightning), Keras and rich.

A bar tells us how far along a loop is (`n/total`), how fast it goes, and often a
few metrics in its postfix. Which loop it belongs to (training, evaluation) is
decided by the LogParser, which has the context.
"""

from __future__ import annotations

import re
from dataclasses import field
from functools import lru_cache

from babysit import lazy_re
from babysit.model import line_value
from babysit.parsing.text import normalise_key, to_number


@line_value
class Bar:
    style: str  # "tqdm" | "keras" | "rich"
    desc: str
    n: int
    total: int | None
    rate: float | None  # iterations per second
    metrics: dict[str, float] = field(default_factory=dict)
    end: int = 0  # where the bar ends in the segment; text after it is parsed too
    # The bar counts data, not training steps: its rate is in examples, bytes or files
    # (`1000/1000000 [00:00<11:29, 1447.84 examples/s]`), or it names a data pass
    # (`Map:`, `Filter`, `Tokenizing`, `Downloading`, `Loading checkpoint shards`).
    data_pass: bool = False
    elapsed: float | None = None  # seconds since the bar began (tqdm's `[05:18<00:00`)


# What follows `NN%` in a tqdm bar: `|####5     | 450/1000 [00:10<00:12, 44.10it/s, ...]`
# The closing `]` may be missing when a log's lines were cut at some width.
_TQDM_TAIL = lazy_re.compile(r"\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\s*\[(?P<inside>[^\]]*)\]?")
# Notebooks (and some log shippers) print bars without the bar glyphs:
# `Epoch 0: 100% 2/2 [00:00<00:00, 12.3it/s, loss=2.29]`
_TQDM_PLAIN = lazy_re.compile(
    r"(?P<pct>\d{1,3})%\s+(?P<n>\d+)/(?P<total>\d+)\s*\[(?P<inside>[^\]]*)\]?")
# Ultralytics 8.3's own bar, drawn in glyphs with no brackets: `… 320: 100% ━━━━━━━━━━━━
# 1/1 1.9it/s 0.5s` (`ÔöüÔöü…` where a Windows console decoded its UTF-8 as cp850).
_GLYPH_BAR = lazy_re.compile(
    r"(?P<pct>\d{1,3})%\s*(?P<glyphs>[^\s\w\[\]|]{2,}|(?:Ôö[üÇ])+)\s+(?P<n>\d+)/(?P<total>\d+)"
    r"(?:\s+(?P<rate>\d+(?:\.\d+)?)(?P<unit>it/s|s/it))?(?:\s+(?P<elapsed>\d+(?:\.\d+)?)s)?\s*$")
_TQDM_NO_TOTAL = lazy_re.compile(
    r"(?:(?P<desc>[^|\r\n]*?):\s*)?(?P<n>\d+)it \[(?P<inside>[^\]]*)\]")
_PERCENT = lazy_re.compile(r"\d{1,3}$")  # searched just before the `%|`
_RATE = lazy_re.compile(r"^\s*(?P<value>[\d.]+)\s*(?P<unit>[A-Za-z]*)/(?P<per>[A-Za-z]+)\s*$")
# Units of a bar that counts data (Hugging Face datasets' `examples/s` and `ba/s`, a
# download's bytes, files, shards): a data pass, never the training loop.
_DATA_UNITS = frozenset({"examples", "example", "ex", "ba", "B", "kB", "KB", "MB", "GB", "KiB",
                         "MiB", "GiB", "files", "file", "shards", "docs", "documents",
                         "prompts", "rows", "lines"})
# Descriptions of a data pass or of loading: datasets' `Map (num_proc=8):`, `Filter`,
# `Generating train split`, tokenising, downloads, checkpoint shards being loaded or
# written (transformers 5's `Loading weights: 100%|…| 478/478` and `Writing model shards`
# around a fine-tune's epochs); and of
# writing a video of the agent (moviepy's `frame_index:` and `chunk:` bars, `t:` in its
# first versions: `frame_index:   1%|▏  | 3/201`, an evaluation episode recorded); and
# `Loading` alone (DeepFaceLab's `Loading: 100% 6004/6004`, its face samples).
_DATA_DESC = lazy_re.compile(
    # (after a split's label: Ultralytics' `train: Scanning …/labels/train.cache...`)
    r"^(?:(?:train|val|valid|test):\s*)?(?:Map\b|Filter|Scanning\b|Generating \w+ split|"
    r"Tokeniz|Running tokenizer|Grouping texts|"
    r"Download|Fetching \d+ files|Resolving data files|Extracting|Loading (?:checkpoint|"
    r"dataset) shards|Loading (?:data|dataset|weights)\b|Loading\s*:?\s*$|Preprocess|"
    r"Pre-process|Casting|"
    r"Saving the dataset|Writing model shards|"
    r"Concatenat|Packing|Shuffling|Caching|Convert(?:ing)?\b|Indexing|Building (?:vocab|dataset)|"
    r"(?:frame_index|chunk|t)\s*:?\s*$|Writing (?:video|audio|frames)|Rendering\b)",
    re.IGNORECASE)
_PAIR = lazy_re.compile(r"(?P<key>[A-Za-z_][\w./\-]*)\s*[=:]\s*(?P<value>[^\s,]+)")
_NAMED_FIELD = lazy_re.compile(r"\s*(?<![\w./\-])(?P<key>[A-Za-z_][\w./\-]*"
                               r"(?: [A-Za-z_][\w./\-]*){1,3})\s*="
                               r"\s*(?P<value>[^\s,]+)\s*\]?\s*")


@lru_cache(maxsize=1024)  # a run's bars show a few hundred distinct rates at most
def _rate_per_second(text: str) -> float | None:
    match = _RATE.match(text)
    if match is None:
        return None
    value = to_number(match.group("value"))
    if value is None or value <= 0:
        return None
    # tqdm flips to `s/it` when a step takes more than a second.
    if match.group("unit") == "s" and match.group("per") != "s":
        return 1.0 / value
    return value


# A postfix field that is a name in words and its number (`Loss 6.2739`, `Val Loss 44.78`).
_SPACED_PAIR = lazy_re.compile(
    r"^(?P<key>[A-Za-z][\w./-]*(?: [A-Za-z][\w./-]*){0,3})\s+"
    r"(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf|-inf)$")


def _whole_fields(parts: list[str]) -> list[str]:
    """The postfix's fields, a value in parentheses made whole again (`Raw Acc (0.39,
    2.49)` was split at its comma) and then left out: a pair of figures is no one value."""
    fields: list[str] = []
    inside = False  # within a parenthesised value
    for part in parts:
        if inside or ("(" in part and ")" not in part):
            inside = ")" not in part
            continue
        fields.append(part)
    return fields


def _postfix_metrics(text: str) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for part in text.split(","):
        # A postfix's name may hold spaces (3D Gaussian splatting's `Loss=0.0446380, Depth
        # Loss=0.0000000`): a field alone between commas is named whole, else the words
        # next to each `=` are.
        named = _NAMED_FIELD.fullmatch(part)
        for pair in (named,) if named is not None else _PAIR.finditer(part):
            value = to_number(pair.group("value"))
            if value is not None:
                metrics[normalise_key(pair.group("key"))] = value
    metrics.pop("v_num", None)  # Lightning's logger version, not a metric
    return metrics


def parse_tqdm(segment: str) -> Bar | None:
    """`desc: 45%|####5     | 450/1000 [00:10<00:12, 44.10it/s, loss=0.52]`."""
    total: int | None
    at = segment.find("%|")
    if at < 0 and "% " in segment and "[" not in segment:
        glyphs = _GLYPH_BAR.search(segment)
        if glyphs is not None:
            return _glyph_bar(segment[: glyphs.start()].strip().rstrip(":").strip(), glyphs)
    if at < 0 and "% " in segment:
        plain = _TQDM_PLAIN.search(segment)
        if plain is not None and "[" in plain.group(0):
            desc = segment[: plain.start()].strip().rstrip(":").strip()
            return _tqdm_bar(desc, plain, int(plain.group("total")))
    if at >= 0:
        match = _TQDM_TAIL.match(segment, at + 1)
        percent = _PERCENT.search(segment, max(0, at - 3), at)
        if match is None or percent is None:
            return None
        digits = percent.start()
        total = int(match["total"])
        desc = segment[:digits]
        if not desc:  # a bar without a description (Hugging Face's): nothing to tidy
            return _tqdm_bar(desc, match, total)
    elif "it [" in segment:
        match = _TQDM_NO_TOTAL.search(segment)
        if match is None:
            return None
        total = None
        desc = match.group("desc") or ""
    else:
        return None
    return _tqdm_bar(desc.strip().rstrip(":").strip(), match, total)


def _glyph_bar(desc: str, match: re.Match[str]) -> Bar:
    rate = _rate_per_second(match.group("rate") + match.group("unit")) \
        if match.group("rate") is not None else None
    elapsed = float(match.group("elapsed")) if match.group("elapsed") is not None else None
    metrics = _desc_metrics(desc) if ":" in desc or "=" in desc else {}
    return Bar("tqdm", desc, int(match.group("n")), int(match.group("total")), rate, metrics,
               match.end(), _DATA_DESC.search(desc) is not None, elapsed)


def _tqdm_bar(desc: str, match: re.Match[str], total: int | None) -> Bar:
    n, inside = match.group("n", "inside")
    rate = None
    metric_parts: list[str] = []
    data = _DATA_DESC.search(desc) is not None
    parts = inside.split(",")
    for part in parts[1:]:  # the first is the elapsed and left times
        part = part.strip()
        part_rate = _rate_per_second(part) if rate is None else None
        if part_rate is not None:
            rate = part_rate
            data = data or _rate_unit(part) in _DATA_UNITS
        else:
            metric_parts.append(part)
    metrics = _postfix_metrics(", ".join(metric_parts)) if metric_parts else {}
    for part in _whole_fields(metric_parts):
        # `set_postfix_str("Loss 6.2739, Val Loss 44.78")`: names and values without `=`
        spaced = _SPACED_PAIR.match(part)
        if spaced is not None and (value := to_number(spaced.group("value"))) is not None:
            metrics.setdefault(normalise_key(spaced.group("key")), value)
    if ":" in desc or "=" in desc:
        metrics = {**_desc_metrics(desc), **metrics}
    return Bar("tqdm", desc, int(n), total, rate, metrics, match.end(), data,
               _elapsed(parts[0]))


# Counters a description names (`Epoch: 34`, `Train Epoch: 19`): where the loop is, not
# a metric of it (the bar's own context reads the epoch).
_COUNTERS = frozenset({"epoch", "step", "iter", "iteration", "batch", "it", "round", "ep"})


@lru_cache(maxsize=4096)
def _desc_metrics(desc: str) -> dict[str, float]:
    """The metrics a loop writes into its bar's description with `set_description`
    (`Epoch: 34, L1: 0.075, Percep: 2.308, Gen: 0.492, Disc: 0.500: 50%|…`, `Train Epoch:
    19 Loss: 0.35977894: 100% 2785/2785`): every `name: value` or `name=value` pair but
    the loop's counters. Without them such a run's losses are never read at all."""
    found = _postfix_metrics(desc)
    return {k: v for k, v in found.items() if k.rsplit("_", 1)[-1] not in _COUNTERS}


def _elapsed(text: str) -> float | None:
    """tqdm's elapsed time (`05:18` of `05:18<00:00`, `1:02:03`) in seconds."""
    clock = text.split("<", 1)[0].strip()
    seconds = 0.0
    for part in clock.split(":"):
        if not part.isdecimal():
            return None
        seconds = seconds * 60 + int(part)
    return seconds if ":" in clock else None


def _rate_unit(text: str) -> str:
    """What a rate counts (`examples` in `1447.84 examples/s`, `it` in `3.2it/s`; for
    `s/it`, what follows the slash)."""
    match = _RATE.match(text)
    if match is None:
        return ""
    unit, per = match.group("unit"), match.group("per")
    return per if unit == "s" and per != "s" else unit


# Keras 3: ` 32/32 ━━━━━━━━━━━━━━━━━━━━ 1s 10ms/step - accuracy: 0.5 - loss: 1.2` (its
# bar in `=` where the console cannot draw the glyph: a Windows PowerShell's ` 1/166
# ==================== 29:12 11s/step - accuracy: 0.1875 - loss: 1.6506`)
# Keras 2: ` 32/32 [==============================] - 1s 10ms/step - loss: 1.2`
# verbose=2: `32/32 - 1s - 10ms/step - loss: 1.2`
# Before an epoch's last batch the time is how long is left: Keras 3 writes it where
# the elapsed time goes (` 16/32 ━━━━━━━━━━━━━━━━━━━━ 1:23 10ms/step - ...`), Keras 2
# instead of it (` 16/32 [=========>....................] - ETA: 1:23 - loss: 1.2`).
# A dataset of unknown length counts up to `37/Unknown` in the first epoch.
# Keras 1 writes no time per step, only the epoch's seconds after its drawn bar
# (keras/utils/generic_utils.py, Progbar.update: `info += ' - %ds' % (now - self.start)`):
# `24576/24576 [==============================] - 4532s - loss: 0.0042`.
_DURATION = r"\d+(?:\.\d+)?(?:m|u|µ)?s|\d+(?::\d\d){1,2}"
_KERAS = lazy_re.compile(
    r"^\s*(?P<n>\d+)/(?P<total>\d+|Unknown)\s+(?P<drawn>━+\s*|\[[=>.]*\]\s*|={4,}\s+)?(?:-\s*)?"
    rf"(?:(?P<eta>ETA):\s*(?:{_DURATION})|(?:{_DURATION})(?:\s+(?:-\s*)?"
    r"(?P<per>\d+(?:\.\d+)?(?:m|u|µ)?s)/(?:step|sample))?)"
    r"(?P<rest>(?:\s+-\s+[\w./]+:\s*\S+)*)"
    # (a longer frame's tail left behind it, where a notebook redrew the bar over the
    # line without clearing it: `- acc: 0.8782 0s - loss: 0.3757 - acc`)
    rf"(?:\s+(?:{_DURATION}|ETA:?)\s+-\s[^\n]*)?\s*$"
)
# PaddlePaddle's high-level API (paddle.hapi's ProgBarLogger) draws the same bar with a
# `step` before its counter and the time per step after its figures: `step 10/938
# [==>...........................] - loss: 0.5211 - acc: 0.8125 - ETA: 1:23 - 35ms/step`.
_HAPI = lazy_re.compile(
    r"^\s*step\s+(?P<n>\d+)/(?P<total>\d+|Unknown)\s+(?P<drawn>\[[=>.]*\])"
    r"(?P<rest>(?:\s+-\s+[\w./]+:\s*\S+)*)"
    r"(?:\s+-\s+(?P<per>\d+(?:\.\d+)?(?:m|u|µ)?s)/(?:step|sample))?\s*$")
_GLUED_CALLBACK = lazy_re.compile(r"(?<=\d)Epoch \d+: ")
_KERAS_PAIR = lazy_re.compile(r"-\s+(?P<key>[\w./]+):\s*(?P<value>\S+)")
_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}


def parse_keras(segment: str) -> Bar | None:
    if "/step" not in segment and "ETA:" not in segment and "/sample" not in segment \
            and "] - " not in segment:
        return None
    match = _KERAS.match(segment) or (_HAPI.match(segment) if "step " in segment else None)
    if match is None and (glued := _GLUED_CALLBACK.search(segment)) is not None:
        # A callback's message glued to the bar's last frame of its epoch (`- loss:
        # 1.6080Epoch 00001: val_loss improved from inf to 1.55635, saving model to …`):
        # the bar ends where it begins.
        match = _KERAS.match(segment, 0, glued.start())
    if match is None:
        return None
    if match.group("per") is None and match.groupdict().get("eta") is None \
            and not match.group("drawn"):
        # Undrawn, with only its seconds, it is a counter's line (`12/540 - 3s - loss:
        # 2.28`), not Keras 1's bar (which is drawn)
        return None
    rate = None
    per = match.group("per")
    if per is not None:
        unit = per.lstrip("0123456789.")
        seconds = to_number(per[: len(per) - len(unit)])
        if seconds and unit in _UNIT_SECONDS:
            rate = 1.0 / (seconds * _UNIT_SECONDS[unit])
    metrics: dict[str, float] = {}
    for pair in _KERAS_PAIR.finditer(match.group("rest")):
        key = normalise_key(pair.group("key"))
        value = to_number(pair.group("value"))
        if value is not None and key != "eta":  # time left, not a metric
            metrics[key] = value
    total = match.group("total")
    return Bar("keras", "", int(match.group("n")), None if total == "Unknown" else int(total),
               rate, metrics, match.end())


# Lightning's RichProgressBar:
# `Epoch 0/9  ━━━━━━━━━━ 50/50 0:00:01 • 0:00:00 30.12it/s v_num: 0 train_loss: 0.123`
_RICH = lazy_re.compile(
    r"(?P<desc>[A-Za-z][\w ]*?(?:\s-?\d+(?:/-?\d+)?)?)\s+[━╸╺─]+\s+(?P<n>\d+)/(?P<total>\d+|--)"
    r"\s+(?P<rest>.*)$"
)


def parse_rich(segment: str) -> Bar | None:
    if "━" not in segment and "─" not in segment:
        return None
    match = _RICH.search(segment)
    if match is None:
        return None
    rest = match.group("rest")
    rate = None
    rate_match = re.search(r"(\d+(?:\.\d+)?)\s*(it/s|s/it)", rest)
    if rate_match:
        value = float(rate_match.group(1))
        rate = value if rate_match.group(2) == "it/s" else (1.0 / value if value else None)
    metrics = _postfix_metrics(rest[rate_match.end():] if rate_match else rest)
    total = match.group("total")
    return Bar("rich", match.group("desc").strip(), int(match.group("n")),
               int(total) if total != "--" else None, rate, metrics, match.end())


def parse_bar(segment: str) -> Bar | None:
    """The first progress bar found in the segment, whichever library drew it."""
    return parse_tqdm(segment) or parse_keras(segment) or parse_rich(segment)

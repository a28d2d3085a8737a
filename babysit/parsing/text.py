"""Cleaning raw log bytes into text segments the format parsers can read."""

from __future__ import annotations

import math
import re
from functools import lru_cache

from babysit import lazy_re
from babysit.parsing.value_forms import plain_numbers

# CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks).
_ANSI = lazy_re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# torchrun and friends prefix each worker's output: `[rank3]: `, `[default0]:`, `0: `.
_RANK_PREFIX = lazy_re.compile(r"^\s*\[(?:rank|default)(\d+)\]:\s?|"
                               r"^\[\d+,mpirank:(\d+),[^\]]*\]<std(?:out|err)>:")
_CONTROL = lazy_re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BACKSPACES = lazy_re.compile(r"(\x08+)")


def decode(raw: bytes) -> str:
    """Bytes to text that never fails: invalid UTF-8 becomes U+FFFD, NULs vanish."""
    return raw.replace(b"\x00", b"").decode("utf-8", errors="replace")


# A whole line in Markdown's emphasis (a log kept as a notebook's Markdown or a README:
# `_Epoch 1: 969 / 10000_`, `**Epoch 3: loss 0.5**`): the marks are no part of the text,
# and `_Epoch` hides the counter's word from every reader.
# (A phrase: a bare `__init__` is a name, not emphasis.)
_EMPHASIS = lazy_re.compile(r"^(\*\*|__|\*|_)(?=[^\s*_][^\n]*\s)(.*?[^\s*_])\1(\s*)$")
# Markdown's inline code around a value (a training script that writes its log as
# Markdown: `* loss \`285.6\`, time \`2021-11-10 08:21:54\``, a table's cells
# `|  hits@10  |  \`0.0829\`  |`): the marks are no part of the value, and a number in
# them was read as no number at all.
_INLINE_CODE = lazy_re.compile(r"`([^`\n]{1,80})`")
# A counter's word joined to its number by a dash (Yuan Gong's AST, CAV-MAE and Whisper-AT
# trainers: `Epoch-10 lr: 2.5e-05` closing each epoch): the counter, as `Epoch 10` says it,
# not a metric named `epoch_10_lr`. (Not inside a path or a name: `model_epoch-10.pth`.)
_DASHED_COUNTER = lazy_re.compile(r"(?<![\w/.-])(Epoch|epoch|EPOCH|Iter|iter|ITER|Step|step|"
                                  r"STEP)-(\d+)(?=[\s:,])")


# rsyslog's escape of a tab in a line it forwards, `#011` (SageMaker's and other CloudWatch
# logs: XGBoost's `[0]#011train-error:0.28#011validation-error:0.29`): the tab itself, as
# the program wrote it. (Its `#015` and `#033[A`, a bar's redraws under an MPI wrapper,
# are read where the rank's prefix is: `split_rank`.)
_SYSLOG_TAB = lazy_re.compile(r"#011(?!\d)")


def clean(text: str) -> str:
    """Strip ANSI escapes and other control characters (keeps tabs); backspaces are
    applied as a terminal would apply them."""
    if "#011" in text:
        text = _SYSLOG_TAB.sub("\t", text)
    if "\x1b" in text:
        if "\x1b[A" in text:
            # The cursor moved up a row (tqdm's nested bars): what follows is written on
            # another row, a line of its own — Lightning's `` `Trainer.fit` stopped:
            # `max_epochs=1` reached.`` after the bar's last frame. The frame before it is
            # drawn again on lines of its own; a move with nothing after it changes nothing.
            before, _, after = text.rpartition("\x1b[A")
            text = after if after.strip() and _ANSI.sub("", after).strip() else before
        text = _ANSI.sub("", text)
    if "\x08" in text:
        text = _render_backspaces(text)
    if "#" in text or "(ind)" in text or "(snan)" in text or "(IND)" in text:
        text = platform_non_finite(text)
    text = plain_numbers(text)  # Julia's `0.5f0`, `NaN32`; Tracker's `0.5 (tracked)`
    if text[:1] in ("_", "*") and text:
        text = _EMPHASIS.sub(r"\2", text)
    if "`" in text:
        text = _INLINE_CODE.sub(r"\1", text)
    if "-" in text and ("och-" in text or "ter-" in text or "tep-" in text or "OCH-" in text
                        or "TER-" in text or "TEP-" in text):
        text = _DASHED_COUNTER.sub(r"\1 \2", text)
    if not text.isascii() and ("：" in text or "，" in text or "＝" in text):
        # CJK text's full-width punctuation between a name and its value (`test： f1:0.59`,
        # `loss：0.5，acc：0.9`): the same pairs as their ASCII forms
        text = text.translate(_FULL_WIDTH)
    if text.isprintable():
        return text
    return _CONTROL.sub("", text)


_FULL_WIDTH = str.maketrans({"：": ": ", "，": ", ", "＝": "="})


# How C runtimes other than glibc print NaN and infinity: the old Microsoft CRT
# (`1.#QNAN000`, `-1.#IND00`, `1.#INF`, `1.#SNAN`), the newer UCRT (`-nan(ind)`,
# `nan(snan)`). Rewritten to `nan` / `inf` / `-inf`, so that every reader of numbers
# sees one spelling.
_WINDOWS_NAN = lazy_re.compile(r"(?<![\w.#])[-+]?\d\.#(?:QNAN|SNAN|IND)\d*(?![\w#])|"
                               r"(?<![\w.])[-+]?nan\((?:ind|snan|IND|SNAN)\)", re.IGNORECASE)
_WINDOWS_INF = lazy_re.compile(r"(?<![\w.#])([-+]?)\d\.#INF\d*(?![\w#])", re.IGNORECASE)


def platform_non_finite(text: str) -> str:
    """`text` with the Windows C runtimes' NaN and infinity spellings rewritten as
    `nan`, `inf` and `-inf`."""
    text = _WINDOWS_NAN.sub("nan", text)
    return _WINDOWS_INF.sub(lambda m: "-inf" if m.group(1) == "-" else "inf", text)


def _render_backspaces(text: str) -> str:
    """What a terminal shows for text with backspaces in it: each backspace moves the
    cursor one column left and what follows overwrites. Keras 2 redraws its bar by
    backspacing over the whole previous frame, so a line of several frames becomes
    its last frame, not the frames glued together."""
    shown: list[str] = []
    at = 0
    for piece in _BACKSPACES.split(text):
        if not piece:
            continue
        if piece[0] == "\x08":
            at = max(0, at - len(piece))
            continue
        shown[at : at + len(piece)] = piece
        at += len(piece)
    return "".join(shown)


def split_rank(line: str) -> tuple[int | None, str]:
    """Separate a distributed launcher's rank prefix from the line."""
    head = line[:24]
    if "]:" not in head and "mpirank" not in head:
        return None, line
    match = _RANK_PREFIX.match(line)
    if match is None:
        return None, line
    rest = line[match.end() :]
    if "#015" in rest:  # MPI wrappers write a bar's carriage returns as `#015`
        rest = next((p for p in reversed(rest.split("#015")) if p.strip()), "")
    return int(match.group(1) or match.group(2)), rest.replace("#033[A", "")


_NUMBER = lazy_re.compile(r"^[+-]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NON_FINITE = {
    "nan": math.nan,
    "-nan": math.nan,
    "+nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
    # Julia's and R's spellings of a single-precision or half NaN / Inf.
    "nan32": math.nan,
    "nan16": math.nan,
    "inf32": math.inf,
    "inf16": math.inf,
    "-inf32": -math.inf,
    "-inf16": -math.inf,
}


def to_number(token: str) -> float | None:
    """Parse a number as training logs print it: `1.5e-4`, `1,234`, `nan`, `-inf`,
    `tensor(0.5)`, `[0.5]`, `'2.34'`, `12.3%`. Returns None for anything else."""
    try:
        return float(token)  # the common case: `2.34`, `nan`, `1e-4`
    except ValueError:
        pass
    token = token.strip().strip("'\"")
    if token.startswith("tensor(") and token.endswith(")"):
        token = token[7:-1].split(",")[0]
    elif token.startswith("[") and token.endswith("]") and "," not in token:
        token = token[1:-1].strip()  # a list of one: `[0.0002497]`
    if token.endswith("%"):
        token = token[:-1]
    lowered = token.lower()
    if "#" in lowered or "(" in lowered:
        lowered = platform_non_finite(lowered)  # `1.#QNAN`, `-nan(ind)`
    if lowered.endswith(".0"):
        lowered = lowered[:-2]  # Lightning's bar prints `nan.0`, `inf.0`
    if lowered in _NON_FINITE:
        return _NON_FINITE[lowered]
    if not _NUMBER.match(token):
        return None
    try:
        return float(token.replace(",", ""))
    except (ValueError, OverflowError):
        return None


def number_from(value: object) -> float | None:
    """A metric value from JSON or a tracker API: numbers, and strings that hold one
    (`"2.3"`, `"NaN"`, `"Infinity"`); booleans and anything else are not metrics."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer too large for a float is not a metric
            return None
    if isinstance(value, str):
        return to_number(value)
    return None


# A split's word, whole or cut short, glued to the metric word after it in camel case
# (`TrLoss`, `VLoss`, `VAcc` in a hand-written table's header; `valLoss`, `trainAcc`):
# set apart and spelled out, so that the name reads as `train_loss`, `val_acc` do. Only
# before a capitalised word (`Loss`), never before capitals alone (`VQWK`, `VAELoss`: no
# split's word, or none that can be told).
_SPLIT_IN_CAMEL = lazy_re.compile(r"^(?:([Tt]r|[Tt]rn|[Tt]rain|[Tt]raining)|"
                                  r"([Vv]|[Vv]a|[Vv]l|[Vv]al|[Vv]alid|[Vv]alidation)|"
                                  r"([Tt]e|[Tt]st|[Tt]est)|([Ee]val|[Dd]ev))(?=[A-Z][a-z])")


def _spelled_split(match: re.Match[str]) -> str:
    if match.group(1):
        return "train_"
    if match.group(2):
        return "val_"
    if match.group(3):
        return "test_"
    return f"{match.group(4)}_"


@lru_cache(maxsize=4096)
def normalise_key(key: str) -> str:
    """`Learning Rate` -> `learning_rate`, `VLoss` -> `val_loss`; keeps `/` so
    `train/loss` stays namespaced."""
    key = _SPLIT_IN_CAMEL.sub(_spelled_split, key.strip().strip("'\"")).lower()
    key = re.sub(r"[\s\-]+", "_", key)
    # (a name said as a phrase keeps no preposition at its end: `average reward of:
    # -466.14`, `train loss of 0.23` are the average reward and the train loss)
    return key[:-3] if key.endswith("_of") and len(key) > 3 else key

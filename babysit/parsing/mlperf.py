"""MLPerf's result log (MLCommons `mlperf_logging`): one tagged event per line.

The current form (`mllog`, MLPerf Training v0.7 and later) prints a JSON object after a tag:

    :::MLLOG {"namespace": "", "time_ms": 1593…, "event_type": "POINT_IN_TIME",
              "key": "eval_accuracy", "value": 0.75, "metadata": {"file": "train.py",
              "lineno": 313, "epoch_num": 5}}

and the v0.5 / v0.6 form (`mlperf_compliance`) a benchmark, a time, a source location and
`key` or `key: value`, the value JSON when it is more than a word:

    :::MLPv0.5.0 ncf 1542309099.593 (ncf.py:363) eval_accuracy: {"epoch": 5, "value": 0.71}
    :::MLPv0.5.0 ncf 1542313087.790 (ncf.py:511) run_stop: {"success": false}

The keys are the format's own (`mlperf_logging/mllog/constants.py`): `run_start` /
`run_stop`, `epoch_start` / `epoch_stop` and `block_start` / `block_stop` with
`epoch_num`, `first_epoch_num`, `epoch_count`, `eval_accuracy` (the benchmark's quality
measure, whatever it is: top-1, Dice, HR@10, AUC), and hyperparameters, sizes and
submission details. `run_stop`'s `status` is the benchmark's verdict on the run: `success`
(it reached its quality target) or `aborted` (it stopped without reaching it: out of its
epoch budget, or stopped by its own divergence check); v0.5 says `{"success": false}`.

Read as plain text, none of it meant anything: no metric (the numbers are JSON values
behind a tag), no end (`run_stop` is no sentence). The reader turns the events into
babysit's records: the evaluations as `eval_accuracy` at their epoch, the epochs trained,
and `run_stop` as the run's own word on how it ended.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.formats import Parsed
from babysit.parsing.text import number_from

TAG = ":::ML"  # both forms' tags begin so (`:::MLLOG`, `:::MLPv0.5.0`)
FORMAT = "mlperf"
RUN_STOP = "run-stop"  # the detail of the event a `run_stop` becomes

# The v0.6 form (`mlperf_logging`'s first `:::MLL` logger): a time, then `key: ` and an
# object of the value and its metadata, the metadata sometimes a Python dict's repr
# (Intel's MiniGo submission: `:::MLL 1560875622.04 run_stop: {"value": null,
# "metadata": {'lineno': 53, 'file': 'ml_perf/eval_models.py', 'status': 'success'}}`).
_V06 = lazy_re.compile(r":::MLL\s+[\d.]+\s+(?P<key>\w+)(?::\s*(?P<value>.*?))?\s*$")
# The longest v0.6 value read as a Python literal (a line's event is short).
_MAX_LITERAL = 4096
_V05 = lazy_re.compile(r":::MLPv(?P<version>[\d.]+)\s+\S+\s+[\d.]+\s+\([^)]*\)\s+"
                       r"(?P<key>\w+)(?::\s*(?P<value>.*?))?\s*$")
# The bookkeeping of an evaluation, not a measure of the model: how many samples, the
# target, its hyperparameters (`eval_hp_num_neg`), its size.
_EVAL_BOOKKEEPING = ("eval_samples", "eval_target", "eval_size", "eval_hp_", "eval_start",
                     "eval_stop", "eval_offset", "eval_interval", "eval_batch")


@dataclass(frozen=True)
class MlperfEvent:
    """One MLPerf log event: its key, its value, its metadata (v0.5's `{"epoch": …,
    "value": …}` and `{"success": …}` put in the current form's terms)."""

    key: str
    value: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)


def read_event(text: str) -> MlperfEvent | None:
    """The MLPerf event a line carries (after any prefix: a rank, a logger's head), or
    None for a line that carries none."""
    at = text.find(TAG)
    if at < 0:
        return None
    tagged = text[at:]
    if tagged.startswith(":::MLLOG"):
        return _current_event(tagged[len(":::MLLOG"):])
    if tagged.startswith(":::MLL "):
        match = _V06.match(tagged)
        return _v06_event(match.group("key"), match.group("value")) if match else None
    match = _V05.match(tagged)
    return _v05_event(match.group("key"), match.group("value")) if match else None


def _v06_event(key: str, text: str | None) -> MlperfEvent:
    obj = _object(text) if text else None
    if not isinstance(obj, dict):
        return MlperfEvent(key)
    metadata = obj.get("metadata")
    return MlperfEvent(key, obj.get("value"), metadata if isinstance(metadata, dict) else {})


def _object(text: str) -> Any:
    """The value JSON says, else the Python literal it is (a dict's repr, `None` written
    `null` as JSON would), else None."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > _MAX_LITERAL:
        return None
    literal = _JSON_WORDS.sub(lambda m: _PYTHON_WORDS[m.group(0)], text)
    try:
        return ast.literal_eval(literal)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


_JSON_WORDS = lazy_re.compile(r"\b(?:null|true|false)\b")
_PYTHON_WORDS = {"null": "None", "true": "True", "false": "False"}


def _current_event(body: str) -> MlperfEvent | None:
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("key"), str):
        return None
    metadata = obj.get("metadata")
    return MlperfEvent(obj["key"], obj.get("value"),
                       metadata if isinstance(metadata, dict) else {})


def _v05_event(key: str, text: str | None) -> MlperfEvent:
    value: Any = None
    if text:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = text
    metadata: dict[str, Any] = {}
    if isinstance(value, dict):
        if "epoch" in value:
            metadata["epoch_num"] = value["epoch"]
        if key == "run_stop" and isinstance(value.get("success"), bool):
            metadata["status"] = "success" if value["success"] else "aborted"
        value = value.get("value")
    return MlperfEvent(key, value, metadata)


def is_measure(key: str) -> bool:
    """Whether a key is a measure of the model's quality: `eval_accuracy` and the other
    `eval_…` figures, not an evaluation's bookkeeping."""
    return key.startswith("eval_") and not key.startswith(_EVAL_BOOKKEEPING)


def epoch_of(event: MlperfEvent) -> float | None:
    """The epochs trained when the event was logged: an evaluation's or an epoch's end's
    `epoch_num`, a block's end's `first_epoch_num` + `epoch_count`."""
    meta = event.metadata
    number = number_from(meta.get("epoch_num"))
    if number is not None:
        return number
    if event.key == "block_stop":
        first, count = number_from(meta.get("first_epoch_num")), number_from(
            meta.get("epoch_count"))
        if first is not None and count is not None:
            return first + count
    return None


class QualityTarget:
    """The benchmark's quality target (`eval_target: 25.0`) and its last evaluation
    (`eval_accuracy`), for a `run_stop` that says no status: v0.5's Transformer prints a
    bare `run_stop` once its BLEU reached the target, and its reference code stops there
    for no other reason. v0.5's measures are all higher-is-better (top-1, mAP, BLEU,
    HR@10, a win rate); the forms after it always give a status."""

    def __init__(self) -> None:
        self._last: float | None = None
        self._target: float | None = None

    def see(self, event: MlperfEvent) -> None:
        if event.key == "eval_accuracy":
            self._last = number_from(event.value)
        elif event.key == "eval_target":
            self._target = number_from(event.value)

    @property
    def reached(self) -> bool:
        return self._last is not None and self._target is not None \
            and self._last >= self._target


def ended(event: MlperfEvent, line: str, reached: bool = False) -> LogEvent | None:
    """`run_stop` as the run's own word on its end: `success` finished it (COMPLETED),
    `aborted` (`abort`, v0.5's `success: false`) failed it, and a `run_stop` that says
    neither only that it stopped — unless its last evaluation had `reached` the quality
    target it printed (see `QualityTarget`)."""
    if event.key != "run_stop":
        return None
    status = str(event.metadata.get("status", "")).lower()
    evidence = line.strip()[:500]
    if status == "success" or (not status and reached):
        return LogEvent(EventKind.COMPLETED, evidence, RUN_STOP)
    state = "FAILED" if status.startswith("abort") else "ENDED"
    return LogEvent(EventKind.JOB_STATE, evidence, state)


def parsed_from(event: MlperfEvent) -> Parsed | None:
    """What an event says of training: an evaluation's figure at its epoch, or the epochs
    trained; None for the rest (settings, sizes, submission details, interval starts)."""
    epoch = epoch_of(event)
    if is_measure(event.key):
        value = number_from(event.value)
        if value is not None:
            return Parsed(FORMAT, epoch=epoch, metrics={event.key: value})
        return None
    if event.key in ("epoch_stop", "block_stop") and epoch is not None:
        return Parsed(FORMAT, epoch=epoch)
    return None

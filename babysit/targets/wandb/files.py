"""Reading a local W&B run as it is written: the `run-<id>.wandb` transaction log.

wandb ≥ 0.31 ships no Python reader for this file, so babysit frames it itself
(`wandb_framing`) and decodes each record with wandb's own generated protobuf classes,
imported only when the first record needs decoding.

W&B buffers the file: by default wandb-core flushes it every 15 s. A training script started
with `WANDB_X_TRANSACTION_LOG_FLUSH_INTERVAL=1` (the `x_transaction_log_flush_interval`
setting) makes a live run visible within a second.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babysit.targets.wandb.framing import TransactionLogFramer, WandbFormatError

__all__ = ["RunFileUpdate", "WandbFormatError", "WandbRunDir", "find_run_file"]

_READ_SIZE = 1 << 20  # bytes per read, so a large backlog is framed without holding it all


@dataclass(frozen=True)
class RunFileUpdate:
    """What one poll found in the records appended since the previous poll.

    history: (_step, numeric values) per history row, in file order. Values are floats,
      NaN and ±Inf included; nested keys are joined with "/"; strings, booleans, lists and
      media objects (values carrying a `_type`) are dropped, as are keys whose first part
      starts with "_" (`_timestamp`, `_runtime`, `_wandb/…`); `_step` becomes the first
      element (None when the row has none).
    system: one dict per system-metrics record, keys as W&B names them ("gpu.0.gpu",
      "memory_percent", …), plus "_timestamp" (seconds since the epoch) when recorded.
    config: config values set in this batch, nested keys joined with "/", plain Python
      values (lists stay lists); W&B's own `_wandb` entry is left out; removals are not shown.
    summary: numeric summary values set in this batch, under the same key rules as history
      (`_step` kept).
    run: from the run record, when one was seen: the non-empty ones of entity, project,
      run_id, display_name. The file holds no URL, so "url" never appears.
    exit_code / finished: from the exit record, written by `run.finish()` and by wandb's
      exit hook after an uncaught exception (exit_code 1). A killed process writes none.
    skipped_records: corrupt chunks and undecodable records skipped in this batch.
    """

    history: tuple[tuple[int | None, dict[str, float]], ...]
    system: tuple[dict[str, float], ...]
    config: dict[str, object]
    summary: dict[str, float]
    run: dict[str, str]
    exit_code: int | None
    finished: bool
    skipped_records: int


def find_run_file(directory: str | os.PathLike[str]) -> Path:
    """The transaction log for `directory`: a run directory (`wandb/run-…`,
    `wandb/offline-run-…`), the `wandb/latest-run` link, the `wandb/` (or `.wandb/`)
    directory itself or the directory holding it (then its latest run), or the
    `.wandb` file itself. Symlinks are resolved now, so a later run does not take over.

    Raises FileNotFoundError naming what was looked for.
    """
    start = Path(directory).expanduser()
    if start.is_file() and start.suffix == ".wandb":
        return start.resolve()
    candidates = [start, start / "latest-run", start / "wandb" / "latest-run",
                  start / ".wandb" / "latest-run"]
    for candidate in candidates:
        if candidate.is_dir():
            found = sorted(candidate.glob("run-*.wandb"), key=_mtime)
            if found:
                # A run directory holds one; if a copy left more, the newest is the live one.
                return found[-1].resolve()
    raise FileNotFoundError(
        f"no W&B run file (run-*.wandb) in {start}: pass a run directory such as "
        f"wandb/run-…, wandb/latest-run, or the wandb/ directory of a run started with "
        f"wandb.init()")


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


class WandbRunDir:
    """Incremental reader of one run's transaction log.

    Each `poll()` reads only the bytes appended since the last one. A record still being
    written waits for a later poll; a corrupt one is skipped and counted.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        """Raises FileNotFoundError if `directory` holds no run-*.wandb (see find_run_file)."""
        self._path = find_run_file(directory)
        self._framer = TransactionLogFramer()
        self._seen_size = 0
        self._identity: tuple[int, int] | None = None
        self._record_type: Any = None

    @property
    def path(self) -> Path:
        """The .wandb file being read."""
        return self._path

    def poll(self) -> RunFileUpdate:
        """Everything appended since the previous poll.

        Raises OSError (FileNotFoundError, PermissionError, …; the message names the file)
        if the file cannot be read, WandbFormatError if it is not a W&B transaction log or
        was truncated or replaced since the last poll, and ModuleNotFoundError if records
        need decoding and wandb is not installed.
        """
        decoder = _Decoder()
        with self._path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            identity = (stat.st_dev, stat.st_ino)
            if self._identity is not None and identity != self._identity:
                raise WandbFormatError(f"{self._path} was replaced by another file")
            self._identity = identity
            if stat.st_size < self._seen_size:
                raise WandbFormatError(
                    f"{self._path} shrank from {self._seen_size} to {stat.st_size} bytes")
            self._seen_size = stat.st_size
            if self._record_type is None and stat.st_size > self._framer.next_offset:
                # Before any byte is consumed, so a missing wandb loses nothing.
                self._record_type = _record_class()
            # Read up to the size seen now; what is appended meanwhile is the next poll's.
            while (offset := self._framer.next_offset) < stat.st_size:
                handle.seek(offset)
                piece = handle.read(min(_READ_SIZE, stat.st_size - offset))
                if not piece:
                    break
                framed = self._framer.feed(piece)
                decoder.skipped += framed.corrupt
                for payload in framed.payloads:
                    decoder.take(self._decode(payload))
                if self._framer.next_offset < offset + len(piece):
                    break  # a doubtful chunk at the end: read it again next poll
        return decoder.update()

    def _decode(self, payload: bytes) -> Any:
        """The Record message, or None when the payload does not parse."""
        record = self._record_type()
        try:
            record.ParseFromString(payload)
        except Exception:  # protobuf's DecodeError, or worse on garbage: skip it
            return None
        return record


def _record_class() -> Any:
    try:
        # Through importlib: the generated module picks its protobuf flavour at import
        # time, which type checkers cannot follow.
        module: Any = importlib.import_module("wandb.proto.wandb_internal_pb2")
    except ImportError as exc:
        raise ModuleNotFoundError(
            "reading a W&B run file needs the wandb package: pip install wandb") from exc
    return module.Record


class _Decoder:
    """Gathers the records of one poll into a RunFileUpdate."""

    def __init__(self) -> None:
        self.history: list[tuple[int | None, dict[str, float]]] = []
        self.system: list[dict[str, float]] = []
        self.config: dict[str, object] = {}
        self.summary: dict[str, float] = {}
        self.run: dict[str, str] = {}
        self.exit_code: int | None = None
        self.finished = False
        self.skipped = 0

    def take(self, record: Any) -> None:
        if record is None:
            self.skipped += 1
            return
        kind = record.WhichOneof("record_type")
        if kind == "history":
            self.history.append(_history_row(record.history.item, record.history))
        elif kind == "stats":
            self.system.append(_system_row(record.stats))
        elif kind == "config":
            self._config(record.config.update)
        elif kind == "summary":
            self.summary.update(_numeric_values(record.summary.update, typed=False)[1])
        elif kind == "run":
            run = record.run
            for name in ("entity", "project", "run_id", "display_name"):
                if getattr(run, name):
                    self.run[name] = str(getattr(run, name))
            self._config(run.config.update)
            self.summary.update(_numeric_values(run.summary.update, typed=False)[1])
        elif kind == "exit":
            self.exit_code = int(record.exit.exit_code)
            self.finished = True

    def _config(self, items: Any) -> None:
        for item in items:
            value = _json(item.value_json)
            if value is not _MISSING:
                _flatten_plain(_item_path(item), value, self.config)
        self.config.pop("_wandb", None)
        for key in [k for k in self.config if k.startswith("_wandb/")]:
            del self.config[key]

    def update(self) -> RunFileUpdate:
        return RunFileUpdate(
            history=tuple(self.history), system=tuple(self.system), config=self.config,
            summary=self.summary, run=self.run, exit_code=self.exit_code,
            finished=self.finished, skipped_records=self.skipped)


_MISSING = object()


def _item_path(item: Any) -> str:
    return "/".join(item.nested_key) if item.nested_key else str(item.key)


def _json(text: str) -> object:
    if not text:
        return _MISSING
    try:
        return json.loads(text)  # accepts W&B's NaN, Infinity and -Infinity
    except ValueError:
        return _MISSING


def _typed_value(item: Any) -> object:
    """A history item's value: the typed form when written (x_history_value_encoding
    includes "typed"), else the JSON form."""
    case = item.WhichOneof("value")
    if case == "none":
        return None
    if case == "json":
        return _json(item.json)
    if case is not None:
        return getattr(item, case)
    return _json(item.value_json)


def _history_row(items: Any, history: Any) -> tuple[int | None, dict[str, float]]:
    step_value, values = _numeric_values(items, typed=True)
    step = _as_step(step_value)
    if step is None and history.HasField("step"):
        step = int(history.step.num)
    values.pop("_step", None)
    return step, values


def _numeric_values(items: Any, *, typed: bool) -> tuple[object, dict[str, float]]:
    """The `_step` value (or _MISSING) and the numeric values of history or summary items."""
    raw: dict[str, object] = {}
    for item in items:
        value = _typed_value(item) if typed else _json(item.value_json)
        if value is not _MISSING:
            raw[_item_path(item)] = value
    # wandb-core splits a logged media object into "key/_type", "key/…" items: drop them all.
    media = tuple(path[: -len("_type")] for path in raw if path.endswith("/_type"))
    values: dict[str, float] = {}
    for path, value in raw.items():
        if path.startswith(media) or (path.startswith("_") and path != "_step"):
            continue
        _flatten_numeric(path, value, values)
    return raw.get("_step", _MISSING), values


def _flatten_numeric(path: str, value: object, out: dict[str, float]) -> None:
    if isinstance(value, dict):
        if "_type" in value:
            return  # a media object (histogram, image, table, …), not a metric
        for key, inner in value.items():
            _flatten_numeric(f"{path}/{key}", inner, out)
        return
    number = _as_float(value)
    if number is not None:
        out[path] = number


def _flatten_plain(path: str, value: object, out: dict[str, object]) -> None:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            _flatten_plain(f"{path}/{key}", inner, out)
    else:
        out[path] = value


def _as_float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an int beyond the float range
        return math.inf if value > 0 else -math.inf


def _as_step(value: object) -> int | None:
    number = _as_float(value)
    if number is None or not math.isfinite(number):
        return None
    return int(number)


def _system_row(stats: Any) -> dict[str, float]:
    row: dict[str, float] = {}
    for item in stats.item:
        number = _as_float(_json(item.value_json))
        if number is not None:
            row[str(item.key)] = number
    if stats.HasField("timestamp"):
        row["_timestamp"] = stats.timestamp.seconds + stats.timestamp.nanos / 1e9
    return row

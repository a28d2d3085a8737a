"""A TensorBoard log dir (or one event file), read incrementally: each event file from
a byte offset of its own, so a poll reads only the records appended since the last.

What is read (scalars only), how runs and train/eval folders are told apart, and how
steps from several files are ordered is written once, for users, in
references/log-formats.md ("TensorBoard event files"); the comments below say why each
piece of code does what it does."""

from __future__ import annotations

import heapq
import importlib
import math
import os
import struct
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from babysit.clock import Waker
from babysit.model import Record
from babysit.reading.changes import GrowthWaker
from babysit.snapshot import LogSnapshot, Snapshot
from babysit.targets.base import TargetError, TargetUnavailable
from babysit.targets.common.tracker_rows import StepOrigin
from babysit.targets.kinds import require_extra
from babysit.targets.tensorboard import KIND, SEARCH_DEPTH, is_event_file_name
from babysit.targets.tensorboard.framing import MAX_KEPT, frame
from babysit.targets.tensorboard.tags import EVAL_WORDS, TRAIN_WORDS, metric_name, scope_of_run

FORMAT = "tensorboard"
CHUNK = 4 * 1024 * 1024
MAX_FILES = 2000  # event files followed at most (a log dir of a whole sweep is too many)
MAX_ROWS_PER_POLL = 100_000  # rows of one file handed over by one poll (see _RowKeeper)
MAX_SPECIAL_ROWS = 1000
_SCAN_ENTRIES = 20000


# --- the files -------------------------------------------------------------------------

class EventFile:
    """One event file, read from a byte offset; records still being written wait."""

    def __init__(self, path: Path, run: str) -> None:
        self.path = path
        self.run = run  # its folder relative to the log dir, "/"-separated ("" at the top)
        self.offset = 0
        self.identity: tuple[int, int] | None = None
        self.broken: str | None = None  # why it is no longer read
        self.mtime = 0.0

    def read(self, notices: list[str], take: Callable[[list[bytes]], None]) -> int:
        """Hands `take` the data of every whole record appended since the last read, a
        chunk's worth at a time (never the whole file at once), and returns the bytes
        read. Raises OSError when the file cannot be read."""
        if self.broken is not None:
            return 0
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            self.mtime = info.st_mtime
            identity = (info.st_dev, info.st_ino)
            if self.identity is not None and identity != self.identity and self.offset:
                notices.append(f"{self.path} was replaced by another file; reading it from "
                               f"the start")
                self.offset = 0
            elif info.st_size < self.offset:
                notices.append(f"{self.path} shrank ({self.offset} → {info.st_size} bytes); "
                               f"reading it from the start")
                self.offset = 0
            self.identity = identity
            return self._read_to(fd, info.st_size, notices, take)
        finally:
            os.close(fd)

    def _read_to(self, fd: int, size: int, notices: list[str],
                 take: Callable[[list[bytes]], None]) -> int:
        start = self.offset
        skipped = bad = oversized = 0
        need = 0
        while self.offset < size:
            want = min(size - self.offset, max(CHUNK, need))
            buf = os.pread(fd, want, self.offset)
            if not buf:
                break
            framed = frame(buf, file_start=self.offset == 0)
            if framed.not_tfrecord:
                self.broken = "not a TFRecord file"
                notices.append(f"{self.path} is not a TensorBoard event file (its first "
                               f"record's checksum fails); skipping it")
                break
            take(framed.payloads)
            skipped += framed.skipped_bytes
            bad += framed.bad_records
            self.offset += framed.consumed
            need = framed.need
            if framed.oversized and framed.consumed == 0:
                if self.offset + framed.oversized > size:
                    break  # still being written: stepped over once it is all there
                self.offset += framed.oversized
                oversized += 1
                continue
            if framed.consumed == 0 and not (need and self.offset + need <= size):
                break  # the rest is a record still being written
        if skipped:
            notices.append(f"skipped {skipped} damaged byte(s) in {self.path}")
        if bad:
            notices.append(f"skipped {bad} damaged record(s) in {self.path}")
        if oversized:
            notices.append(f"skipped {oversized} record(s) of more than "
                           f"{MAX_KEPT // (1024 * 1024)} MiB in {self.path} unread (no "
                           f"scalar is that large)")
        return self.offset - start


def first_header_ok(path: Path) -> bool | None:
    """Whether the file begins with a good record header; None while it is too short."""
    with path.open("rb") as handle:
        head = handle.read(12)
    if len(head) < 12:
        return None
    framed = frame(head, file_start=True)
    return not framed.not_tfrecord


def find_event_files(root: Path, depth: int = SEARCH_DEPTH) -> list[tuple[Path, str]]:
    """(file, run) for every event file under `root`, breadth first, in name order."""
    found: list[tuple[Path, str]] = []
    todo: list[tuple[Path, int]] = [(root, 0)]
    seen = 0
    while todo and seen < _SCAN_ENTRIES and len(found) < MAX_FILES:
        folder, level = todo.pop(0)
        try:
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in listed:
            seen += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    if level < depth and not entry.name.startswith("."):
                        todo.append((Path(entry.path), level + 1))
                elif is_event_file_name(entry.name) and entry.is_file():
                    run = Path(entry.path).parent.relative_to(root).as_posix()
                    found.append((Path(entry.path), "" if run == "." else run))
            except (OSError, ValueError):
                continue
    return found


def training_of(run: str) -> str:
    """The training a run belongs to: its path without train/eval folders."""
    parts = [p for p in run.split("/") if p and p.lower() not in TRAIN_WORDS | EVAL_WORDS]
    return "/".join(parts)


# --- decoding --------------------------------------------------------------------------

def _event_class() -> Any:
    try:
        # Through importlib: the generated module is not typed.
        module: Any = importlib.import_module("tensorboard.compat.proto.event_pb2")
    except ImportError as error:
        raise require_extra(KIND, "reading TensorBoard event files") from error
    return module.Event


# TensorFlow's DataType numbers, for one-element tensors: (struct format of
# tensor_content, the repeated field holding values otherwise).
_DTYPES: dict[int, tuple[str, str]] = {
    1: ("<f", "float_val"), 2: ("<d", "double_val"), 3: ("<i", "int_val"),
    4: ("<B", "int_val"), 5: ("<h", "int_val"), 6: ("<b", "int_val"), 9: ("<q", "int64_val"),
    10: ("<?", "bool_val"), 14: ("<H", "half_val"), 17: ("<H", "int_val"),
    19: ("<e", "half_val"), 22: ("<I", "uint32_val"), 23: ("<Q", "uint64_val"),
}
_BFLOAT16 = 14
_HALF = 19


def tensor_scalar(tensor: Any) -> float | None:
    """The value of a one-element numeric tensor, else None."""
    count = 1
    for dim in tensor.tensor_shape.dim:
        count *= dim.size
    spec = _DTYPES.get(tensor.dtype)
    if count != 1 or spec is None:
        return None
    fmt, field_name = spec
    content: bytes = tensor.tensor_content
    if content:
        if len(content) != struct.calcsize(fmt):
            return None
        (raw,) = struct.unpack(fmt, content)
    else:
        values = getattr(tensor, field_name)
        if not values:
            return None
        raw = values[0]
        if tensor.dtype == _HALF:  # half_val holds the 16 bits
            (raw,) = struct.unpack("<e", struct.pack("<H", raw & 0xFFFF))
    if tensor.dtype == _BFLOAT16:
        (raw,) = struct.unpack("<f", struct.pack("<I", (int(raw) & 0xFFFF) << 16))
    return float(raw)


def event_scalars(event: Any, plugins: dict[str, str]) -> Iterator[tuple[str, float]]:
    """(tag, value) of each scalar in an Event. `plugins` remembers, per tag, the plugin
    that wrote it: v2 summaries name it only in a tag's first event."""
    for value in event.summary.value:
        tag = value.tag
        if value.HasField("metadata") and value.metadata.plugin_data.plugin_name:
            plugins[tag] = value.metadata.plugin_data.plugin_name
        kind = value.WhichOneof("value")
        if kind == "simple_value":
            yield tag, float(value.simple_value)
        elif kind == "tensor" and plugins.get(tag, "scalars") == "scalars":
            number = tensor_scalar(value.tensor)
            if number is not None:
                yield tag, number


# --- rows to records ---------------------------------------------------------------------

@dataclass
class _Row:
    step: int
    metrics: dict[str, float]
    time: float
    runs: set[str] = field(default_factory=set)


class _RowKeeper:
    """The rows of one file's new points, consecutive points at the same step joined,
    bounded: at most `cap` rows, however many events a poll reads (a first poll of a
    log dir holding 10⁶ events). The last cap/2 rows are kept whole; the earlier ones
    one in `stride` (the stride doubles whenever they would pass cap/2), and always
    those that hold a non-finite value or a metric's first appearance (up to
    MAX_SPECIAL_ROWS), so the history's NaN is not thinned away."""

    def __init__(self, run: str, cap: int) -> None:
        self.run = run
        self._half = max(1, cap // 2)
        self._tail: deque[tuple[int, _Row]] = deque()
        self._early: list[tuple[int, bool, _Row]] = []
        self._current: _Row | None = None
        self._names: set[str] = set()
        self._special = 0
        self.stride = 1
        self.points = 0
        self.rows_seen = 0

    def add(self, points: Iterable[tuple[int, str, float, float]]) -> None:
        for step, name, value, wall in points:
            self.points += 1
            current = self._current
            if current is not None and current.step == step:
                current.metrics[name] = value
                current.time = max(current.time, wall)
                continue
            if current is not None:
                self._push(current)
            self._current = _Row(step, {name: value}, wall, {self.run})

    def rows(self) -> list[_Row]:
        if self._current is not None:
            self._push(self._current)
            self._current = None
        return [row for _, _, row in self._early] + [row for _, row in self._tail]

    @property
    def thinned(self) -> int:
        return self.rows_seen - len(self._early) - len(self._tail)

    def _push(self, row: _Row) -> None:
        self.rows_seen += 1
        self._tail.append((self.rows_seen, row))
        if len(self._tail) > self._half:
            self._retire(*self._tail.popleft())

    def _retire(self, index: int, row: _Row) -> None:
        special = self._special < MAX_SPECIAL_ROWS and (
            not row.metrics.keys() <= self._names
            or not all(math.isfinite(v) for v in row.metrics.values()))
        self._names.update(row.metrics)
        self._special += special
        if special or index % self.stride == 0:
            self._early.append((index, special, row))
            if len(self._early) > self._half:
                self.stride *= 2
                self._early = [kept for kept in self._early
                               if kept[1] or kept[0] % self.stride == 0]


def _merged(per_file: list[list[_Row]]) -> list[_Row]:
    """The files' rows side by side in step order (each file's own order kept), rows at
    the same step joined."""
    out: list[_Row] = []
    rows: Iterable[_Row] = per_file[0] if len(per_file) == 1 else \
        heapq.merge(*per_file, key=lambda r: r.step)
    for row in rows:
        if out and out[-1].step == row.step:
            out[-1].metrics.update(row.metrics)
            out[-1].time = max(out[-1].time, row.time)
            out[-1].runs |= row.runs
        else:
            out.append(_Row(row.step, dict(row.metrics), row.time, set(row.runs)))
    return out


# --- the target --------------------------------------------------------------------------

class TensorBoardTarget:
    target_type: ClassVar[str] = "tensorboard"

    def __init__(self, path: str | os.PathLike[str], *,
                 wall_time: Callable[[], float] = time.time) -> None:
        self._label = os.fspath(path)
        self.root = Path(path)
        self._now = wall_time
        if not self.root.exists():
            raise TargetError(f"not found: {self.root}")
        self.single = not self.root.is_dir()
        if self.single and not self.root.is_file():
            raise TargetError(f"{self.root} is not a regular file")
        self._event = _event_class()
        self._files: dict[Path, EventFile] = {}
        self._plugins: dict[tuple[Path, str], dict[str, str]] = {}
        self._main: str | None = None  # the training watched (see training_of)
        self._others: set[str] = set()  # trainings besides the main one, already named
        self._names: dict[tuple[str, str], str] = {}  # (run, tag) -> metric
        self._high: int | None = None  # the newest step handed over
        self._run_high: dict[str, int] = {}
        self._origin = StepOrigin()
        self._newest_event = 0.0
        self._notices: list[str] = []
        found = self._discover()
        if not found:
            raise TargetError(f"no TensorBoard event files (events.out.tfevents.*) in "
                              f"{self.root}")
        if len(found) >= MAX_FILES:
            self._notices.append(f"{self.root} holds more than {MAX_FILES:,} event files (a "
                                 f"whole sweep?): following the first {MAX_FILES:,}; give "
                                 f"one run's folder to watch that run")
        self._check_start(found)
        self._main = self._pick_main(found)
        runs = sorted({run or "." for _, run in found})
        self._notices.append(f"reading {len(found)} TensorBoard event file(s) in "
                             f"{self.root}" + (f" (runs: {', '.join(runs)})"
                                               if not self.single else ""))

    @property
    def label(self) -> str:
        return self._label

    def _discover(self) -> list[tuple[Path, str]]:
        if self.single:
            return [(self.root, "")]
        return find_event_files(self.root)

    def _check_start(self, found: list[tuple[Path, str]]) -> None:
        """A clear error when no file is an event file at all (text named tfevents)."""
        verdicts = []
        for path, _ in found:
            try:
                verdicts.append(first_header_ok(path))
            except OSError as error:
                raise TargetError(f"cannot read {path}: {error.strerror or error}") from error
        if verdicts and all(v is False for v in verdicts):
            names = ", ".join(str(p) for p, _ in found[:3])
            raise TargetError(f"not a TensorBoard event file (no valid TFRecord at the start): "
                              f"{names}")

    def _pick_main(self, found: list[tuple[Path, str]]) -> str:
        """The training written last, when the log dir holds several."""
        def mtime(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0
        newest = max(found, key=lambda item: (mtime(item[0]), item[0].name))
        main = training_of(newest[1])
        others = sorted({training_of(run) for _, run in found} - {main})
        self._others.update(others)
        if others:
            self._notices.append(
                f"{self.root} holds several runs: watching {main or '.'} (written last); "
                f"the scalars of {', '.join(o or '.' for o in others)} are kept under their "
                f"run's name and not judged")
        return main

    def _name(self, run: str, tag: str, notices: list[str]) -> str:
        known = self._names.get((run, tag))
        if known is not None:
            return known
        scope = scope_of_run(self.root.parent.name if self.single else run)
        name = metric_name(tag, scope)
        training = training_of(run)
        if training != self._main:
            if training not in self._others:
                self._others.add(training)
                notices.append(f"another run in {self.root}: {training or '.'}; its scalars "
                               f"are kept as {training or '.'}/<name> and not judged")
            name = f"{training or '.'}/{name}"
        self._names[(run, tag)] = name
        return name

    def poll(self, final: bool = False) -> Snapshot:
        notices, self._notices = self._notices, []
        try:
            found = self._discover()
        except OSError as error:
            raise TargetUnavailable(f"cannot read {self.root}: {error}") from error
        for path, run in found:
            if path not in self._files:
                if self._files or self._high is not None:
                    notices.append(f"new event file: {path}")
                self._files[path] = EventFile(path, run)
        per_file: list[list[_Row]] = []
        new_bytes = points = 0
        for path in sorted(self._files, key=lambda p: (self._files[p].run, p.name)):
            event_file = self._files[path]
            keeper = _RowKeeper(event_file.run, MAX_ROWS_PER_POLL)

            def take(payloads: list[bytes], event_file: EventFile = event_file,
                     keeper: _RowKeeper = keeper) -> None:
                keeper.add(self._decode(event_file, payloads, notices))

            try:
                new_bytes += event_file.read(notices, take)
            except FileNotFoundError:
                if self.single:
                    raise TargetUnavailable(f"{path} is gone") from None
                continue  # deleted (a cleaned-up run): what was read stays
            except OSError as error:
                raise TargetUnavailable(f"cannot read {path}: {error.strerror or error}") \
                    from error
            points += keeper.points
            per_file.append(keeper.rows())
            if keeper.thinned:
                notices.append(
                    f"{path}: {keeper.rows_seen:,} steps read at once; the last "
                    f"{MAX_ROWS_PER_POLL // 2:,} are kept whole, the earlier ones one in "
                    f"{keeper.stride} (with every non-finite value and each metric's first "
                    f"point): {keeper.thinned:,} left out, memory bounded")
        records = self._records(_merged(per_file))
        self._origin.see((r.step for r in records), None)
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                new_bytes=new_bytes,
                new_lines=points,
                formats=(FORMAT,),
                quiet_for=self._quiet_for(),
                steps_from_zero=self._origin.from_zero),
            notices=tuple(notices),
            stall_hint=("babysit reads the event files only and cannot see the process; "
                         "writers flush them every few minutes by default (flush_secs=120 "
                         "for PyTorch's SummaryWriter)"),
        )

    def _decode(self, event_file: EventFile, payloads: list[bytes],
                notices: list[str]) -> Iterator[tuple[int, str, float, float]]:
        plugins = self._plugins.setdefault((event_file.path, event_file.run), {})
        damaged = 0
        for payload in payloads:
            try:
                event = self._event.FromString(payload)
            except Exception:  # protobuf's DecodeError, or worse on garbage
                damaged += 1
                continue
            wall = float(event.wall_time)
            if math.isfinite(wall):
                self._newest_event = max(self._newest_event, wall)
            if event.WhichOneof("what") != "summary":
                continue
            step = int(event.step)
            for tag, value in event_scalars(event, plugins):
                yield step, self._name(event_file.run, tag, notices), value, wall
        if damaged:
            notices.append(f"skipped {damaged} record(s) of {event_file.path} that are not "
                           f"events")

    def _records(self, rows: list[_Row]) -> list[Record]:
        records = []
        for row in rows:
            step: int | None = row.step
            if self._high is not None and row.step < self._high:
                restarted = any(self._run_high.get(run, -1) >= row.step for run in row.runs)
                if restarted:
                    self._high = row.step
                else:
                    step = None  # late: another run already reported a later step
            else:
                self._high = row.step
            for run in row.runs:
                self._run_high[run] = row.step
            records.append(Record(step=step, metrics=row.metrics, fmt=FORMAT,
                                  time=row.time or None))
        return records

    def _quiet_for(self) -> float | None:
        newest = self._newest_event
        if not newest:
            newest = max((f.mtime for f in self._files.values()), default=0.0)
        if not newest:
            return None
        return max(0.0, self._now() - newest)

    def change_waker(self) -> Waker:
        paths = {str(self.root)}
        for event_file in self._files.values():
            paths.add(str(event_file.path))
            paths.add(str(event_file.path.parent))
        return GrowthWaker(sorted(paths))

    def close(self) -> None:
        pass

"""LogParser: the stateful part of parsing.

Lines alone are ambiguous: a Hugging Face loss dict has no step (the progress bar
before it does), a Keras bar counts batches within the epoch its header announced,
and a traceback's meaning arrives on its last line. LogParser keeps exactly that
context and turns each line into zero or one Record.
"""

from __future__ import annotations

import re
from collections import Counter

from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.bars import Bar, parse_bar
from babysit.parsing.events import exception_line, find_events
from babysit.parsing.formats import LINE_PARSERS, LineParser, Parsed, parse_key_values
from babysit.parsing.text import clean, split_rank

_EVAL_DESC = re.compile(r"valid|eval|test|predict|sanity|inference", re.IGNORECASE)
_EPOCH_DESC = re.compile(r"^[Ee]poch[\s:]*(\d+)(?:\s*/\s*(-?\d+))?$")
# Lines that announce the planned length of a run.
_TARGET_LINE = re.compile(
    r"max_steps\W{0,3}\s*[=:]?\s*`?(\d[\d,]*)|[Tt]otal optimization steps\s*=\s*(\d[\d,]*)|"
    r"\btrain(?:ing)? for (\d[\d,]*) (?:steps|iterations|iters)\b|"
    r"\b(?:max_iters|train_iters|num_training_steps|total_steps)\b[\s.=:]*(\d[\d,]*)")
_KERAS_EPOCH = re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
_MAX_TRACEBACK_LINES = 400
_MAY_CARRY_EVENTS = frozenset({"key-value", "jsonl", ""})


def _redraw_key(line: str) -> str | None:
    """For a line that is nothing but a tqdm bar, a key naming the bar (its
    description and total); None for any other line, including a bar with text glued
    after it (a loss dict, a traceback)."""
    if line[-1:] != "]":
        end = line.rstrip()
        if not end.endswith("]"):
            return None
    else:
        end = line
    bar_at = end.find("%|")
    if bar_at < 0:
        return None
    bracket = end.find(" [", bar_at)
    if bracket < 0:
        bracket = end.find("[", bar_at)
        if bracket < 0:
            return None
    if "=" in end[bracket:]:
        return None  # a postfix (`loss=0.52`) makes every frame worth reading
    slash = end.rfind("/", bar_at, bracket)
    return f"{end[: max(0, bar_at - 3)]}|{end[slash + 1 : bracket]}"


def _target_in(line: str) -> int | None:
    match = _TARGET_LINE.search(line)
    if match is None:
        return None
    text = next(g for g in match.groups() if g is not None)
    value = int(text.replace(",", ""))
    return value if value > 0 else None


class LogParser:
    """Feed it lines in order; it returns what each line said."""

    def __init__(self) -> None:
        self.formats: Counter[str] = Counter()
        self.step: int | None = None
        self.target: int | None = None
        self._main_total: int | None = None
        # Bars described `Epoch N` restart every epoch; steps of finished epochs add up.
        self._bar_epoch: int | None = None
        self._first_bar_epoch: int | None = None
        self._epoch_offset = 0
        self._epoch_last_n = 0
        self._keras_epoch: tuple[int, int] | None = None
        self._traceback_lines = 0  # >0 while inside a traceback
        self._preferred: LineParser | None = None

    def feed_lines(self, lines: list[str]) -> list[Record]:
        """Parse many lines in order. A run of redraws of the same tqdm bar is parsed
        only at its last redraw: the ones before it say nothing the last does not."""
        records: list[Record] = []
        pending: str | None = None
        pending_key = ""
        feed = self.feed
        for line in lines:
            key = _redraw_key(line)
            if key is not None:
                if pending is not None and key != pending_key:
                    record = feed(pending)
                    if record is not None:
                        records.append(record)
                pending, pending_key = line, key
                continue
            if pending is not None:
                record = feed(pending)
                if record is not None:
                    records.append(record)
                pending = None
            record = feed(line)
            if record is not None:
                records.append(record)
        if pending is not None:
            record = feed(pending)
            if record is not None:
                records.append(record)
        return records

    def feed(self, raw_line: str) -> Record | None:
        """Parse one line (already split on newlines and carriage returns)."""
        line = clean(raw_line)
        if not line.strip():
            return None
        rank, line = split_rank(line)
        in_traceback = self._traceback_lines > 0

        events: list[LogEvent] = []
        bar_parsed: Parsed | None = None
        rest = line
        bar = None if in_traceback else parse_bar(line)
        if bar is not None:
            bar_parsed, events = self._from_bar(bar)
            rest = line[bar.end :]
        elif (keras := _KERAS_EPOCH.match(line)) is not None:
            self._keras_epoch = (int(keras.group(1)), int(keras.group(2)))
            self.formats["keras"] += 1
            return Record(epoch=float(keras.group(1)), total_epochs=int(keras.group(2)),
                          events=(LogEvent(EventKind.NEW_STAGE, line.strip(),
                                           f"epoch {keras.group(1)}"),),
                          rank=rank, fmt="keras", step=self.step, target_steps=self.target)
        parsed: Parsed | None = None
        has_rest = bool(rest.strip())
        if not in_traceback and has_rest:
            parsed = self._parse_text(rest)
        # A line in one of the specific training formats cannot also be an error or
        # checkpoint message; everything else is checked for one.
        if has_rest and (parsed is None or parsed.fmt in _MAY_CARRY_EVENTS):
            found = find_events(rest)
            events.extend(found)
            events.extend(self._track_traceback(rest, found))
            if ("steps" in rest or "iters" in rest) and (target := _target_in(rest)):
                self.target = target
                parsed = parsed or Parsed("", target=target)
        return self._merge(bar_parsed, parsed, tuple(events), rank)

    def _parse_text(self, text: str) -> Parsed | None:
        # The format that matched last is tried first, unless it is the permissive
        # key/value fallback, which must never shadow a specific format.
        preferred = self._preferred
        if preferred is not None:
            parsed = preferred(text)
            if parsed is not None:
                return parsed
        for parser in LINE_PARSERS:
            if parser is preferred:
                continue
            parsed = parser(text)
            if parsed is not None:
                self._preferred = parser if parser is not parse_key_values else None
                return parsed
        return None

    def _merge(self, bar: Parsed | None, text: Parsed | None, events: tuple[LogEvent, ...],
               rank: int | None) -> Record | None:
        if bar is None and text is None and not events:
            return None
        metrics: dict[str, float] = {}
        step = target = total_epochs = None
        epoch = None
        fmt = ""
        for part in (bar, text):
            if part is None:
                continue
            if part.fmt:
                self.formats[part.fmt] += 1
            fmt = fmt or part.fmt
            metrics.update(part.metrics)
            step = part.step if part.step is not None else step
            target = part.target if part.target is not None else target
            epoch = part.epoch if part.epoch is not None else epoch
            total_epochs = part.total_epochs if part.total_epochs is not None else total_epochs
        if step is not None:
            self.step = step
        if target is not None:
            self.target = target
        return Record(
            step=step if step is not None else self.step,
            target_steps=target if target is not None else self.target,
            epoch=epoch,
            total_epochs=total_epochs,
            metrics=metrics,
            events=events,
            rank=rank,
            fmt=fmt,
        )

    def _from_bar(self, bar: Bar) -> tuple[Parsed | None, list[LogEvent]]:
        """Decide whether a bar is the training loop's, and if so where it puts us."""
        if _EVAL_DESC.search(bar.desc):
            self.formats[bar.style] += 1
            return None, []
        rate = {"it/s": bar.rate} if bar.rate is not None else {}
        if bar.style == "keras":
            return self._from_keras_bar(bar, rate)
        epoch_match = _EPOCH_DESC.match(bar.desc)
        if epoch_match is not None and bar.total:
            return self._from_epoch_bar(bar, int(epoch_match.group(1)), epoch_match.group(2),
                                        rate), []
        if bar.total is not None and self._main_total is not None and bar.total < self._main_total:
            # A shorter loop inside training: an evaluation or a data pass.
            return Parsed(bar.style), []
        if bar.total is not None:
            self._main_total = bar.total
        return Parsed(bar.style, bar.n, bar.total, None, None, {**bar.metrics, **rate}), []

    def _from_epoch_bar(self, bar: Bar, epoch: int, last: str | None,
                        rate: dict[str, float]) -> Parsed:
        """A bar per epoch (Lightning, hand-written tqdm loops): the global step is the
        steps of the epochs before plus this bar's count."""
        assert bar.total
        # Lightning numbers epochs from 0 (`Epoch 0:`); hand-written loops mostly from 1.
        base = 0 if bar.desc.startswith("Epoch") else 1
        if self._first_bar_epoch is None:
            self._first_bar_epoch = epoch
            # Joining mid-run (a long log's tail): assume the earlier epochs were full.
            self._epoch_offset = max(0, epoch - base) * bar.total
        elif self._bar_epoch is not None and epoch != self._bar_epoch:
            self._epoch_offset += self._epoch_last_n
            self._epoch_last_n = 0
        self._bar_epoch = epoch
        self._epoch_last_n = max(self._epoch_last_n, bar.n)
        epochs = None
        if last is not None and int(last) >= 0:
            # Lightning shows the last epoch's index (`Epoch 2/2` of three epochs).
            epochs = int(last) + 1 - base
        target = epochs * bar.total if epochs else None
        fmt = {"rich": "lightning-rich"}.get(bar.style, "tqdm-epochs")
        if bar.style == "tqdm" and base == 0:
            fmt = "lightning"
        return Parsed(fmt, self._epoch_offset + bar.n, target, epoch + bar.n / bar.total,
                      epochs, {**bar.metrics, **rate})

    def _from_keras_bar(self, bar: Bar,
                        rate: dict[str, float]) -> tuple[Parsed | None, list[LogEvent]]:
        events: list[LogEvent] = []
        if self._keras_epoch is None or bar.total is None:
            return Parsed("keras", bar.n, bar.total, None, None, {**bar.metrics, **rate}), events
        epoch, epochs = self._keras_epoch
        step = (epoch - 1) * bar.total + bar.n
        if epoch == epochs and bar.n == bar.total:
            events.append(LogEvent(EventKind.COMPLETED, f"Epoch {epoch}/{epochs} finished",
                                   "keras: last epoch finished"))
        return Parsed("keras", step, epochs * bar.total, epoch - 1 + bar.n / bar.total, epochs,
                      {**bar.metrics, **rate}), events

    def _track_traceback(self, line: str, events: tuple[LogEvent, ...]) -> list[LogEvent]:
        """Follow a traceback from its header to the `SomeError: message` that ends it."""
        if any(e.kind is EventKind.TRACEBACK_START for e in events):
            self._traceback_lines = 1
            return []
        if self._traceback_lines == 0:
            return []
        self._traceback_lines += 1
        closing = exception_line(line)
        if closing is not None:
            self._traceback_lines = 0
            name, message = closing
            text = f"{name}: {message}" if message else name
            return [LogEvent(EventKind.EXCEPTION, line.strip()[:500], text[:300])]
        if self._traceback_lines > _MAX_TRACEBACK_LINES:
            self._traceback_lines = 0
        return []

"""Header lines: lines that set the context the lines after them are read in, rather
than report a step — a Keras epoch header (`Epoch 3/10`, the bars after it count that
epoch's batches), a hand-written loop's `Epoch 3`, an Ultralytics table header (its
column names) and its validation table (`Class Images Instances Box(P R mAP50 …):`,
then the row `all 128 929 0.64 …`)."""

from __future__ import annotations

from collections import Counter

from babysit import lazy_re
from babysit.model import EventKind, LogEvent, Record
from babysit.parsing.bar_steps import BarSteps
from babysit.parsing.final_epoch import FinalEpoch
from babysit.parsing.outer_loops import HINTS as ROUND_HINTS
from babysit.parsing.readers import Line, ParseContext
from babysit.parsing.text import to_number

_KERAS_EPOCH = lazy_re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
# A hand-written loop's header line, `Epoch 3` alone, or set in a banner (`==== Epoch 3
# ====`, `#### EPOCH 3 ####`, `----- epoch 3 -----`): the lines after it are that epoch's.
_EPOCH_HEADER = lazy_re.compile(r"^[\s#=*~<>|\[\]-]*(?:Epoch|EPOCH|epoch)[\s:#]+(\d+)"
                                r"[\s#=*~<>|\[\]:.-]*$")
_YOLO_HEADER = lazy_re.compile(r"^\s*Epoch\s+GPU_mem\s+")
_YOLO_VAL_HEADER = lazy_re.compile(r"^\s*Class\s+Images\s+Instances\s+(.*?):")
_YOLO_VAL_ROW = lazy_re.compile(r"^\s*all\s+\d+\s+\d+((?:\s+[\d.]+)+)\s*$")


class HeaderReader:
    """Reads header lines into the bars' context (the parser's BarSteps), the final
    epoch's count and the formats seen, which it shares with the parser."""

    def __init__(self, bars: BarSteps, final_epoch: FinalEpoch, formats: Counter[str]) -> None:
        self._bars = bars
        self._final_epoch = final_epoch
        self._formats = formats
        self._yolo_val: tuple[str, ...] = ()  # the columns of the validation table

    def wants(self, line: Line) -> bool:
        """What every pattern needs (or a validation table is open): most lines end here."""
        text = line.text
        return bool(self._yolo_val) or "poch" in text or "EPOCH" in text or "Class" in text \
            or any(hint in text for hint in ROUND_HINTS)

    def read(self, line: Line, context: ParseContext) -> Record | None:
        """The record a header line makes; claims the line when it is a header, record
        or not. A hand-written loop's `Epoch 3` is left for the other readers."""
        text = line.text
        self._bars.rounds.line(text)
        keras = _KERAS_EPOCH.match(text)
        if keras is not None:
            line.claimed = True
            # Keras counts its own epochs (`Epoch 1/1` of a `fit` called once per outer
            # `epoch 56`): the records under it are in Keras's count, not the header's.
            self._bars.header_epoch = None
            self._bars.keras_header(int(keras.group(1)), int(keras.group(2)))
            self._final_epoch.counted(int(keras.group(1)), int(keras.group(2)))
            self._formats["keras"] += 1
            return Record(epoch=float(keras.group(1)), total_epochs=int(keras.group(2)),
                          events=(LogEvent(EventKind.NEW_STAGE, text.strip(),
                                           f"epoch {keras.group(1)}"),),
                          rank=line.rank, fmt="keras", step=context.step,
                          target_steps=context.target)
        header_epoch = _EPOCH_HEADER.match(text)
        if header_epoch is not None:
            self._bars.epoch_hint = max(self._bars.epoch_hint, int(header_epoch.group(1)))
            self._bars.header_epoch = int(header_epoch.group(1))
            return None
        if _YOLO_HEADER.match(text):
            line.claimed = True
            self._bars.yolo_columns = tuple(text.split())
            self._formats["ultralytics"] += 1
            return None
        header = _YOLO_VAL_HEADER.match(text)
        if header is not None:
            line.claimed = True
            self._yolo_val = tuple(header.group(1).replace("Box(", "").replace(")", "").split())
            return None
        row = _YOLO_VAL_ROW.match(text) if self._yolo_val else None
        if row is not None:
            line.claimed = True
            values = [to_number(v) for v in row.group(1).split()]
            metrics = {f"val/{name.lower()}": v
                       for name, v in zip(self._yolo_val, values, strict=False) if v is not None}
            return Record(step=context.step, metrics=metrics, rank=line.rank, fmt="ultralytics")
        return None

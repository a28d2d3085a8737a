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
from babysit.parsing.events import NEXT_REPETITION
from babysit.parsing.federated_rounds import FederatedRounds
from babysit.parsing.final_epoch import FinalEpoch
from babysit.parsing.log_prefix import message
from babysit.parsing.outer_loops import HINTS as ROUND_HINTS
from babysit.parsing.readers import Line, ParseContext
from babysit.parsing.text import to_number

# What may stand before a header's word: rules, marks and brackets, and symbols outside
# ASCII (an emoji, an arrow, a bullet).
_LEAD = r"^(?:[\s#=*~<>|\[\]-]|[^\x00-\x7f\w])*"
_KERAS_EPOCH = lazy_re.compile(r"^\s*Epoch (\d+)/(\d+)\s*$")
# A hand-written loop's header line, `Epoch 3` alone, or set in a banner (`==== Epoch 3
# ====`, `#### EPOCH 3 ####`, `----- epoch 3 -----`): the lines after it are that epoch's.
# Also with a word between (`Epoch of: 5`, `Epoch No. 5`) or a verb before (`Start epoch
# 8:`, 2s-AGCN's `Training epoch: 1` behind its `[ Tue Oct 20 19:11:09 2020 ]` head), and a
# label that heads what
# follows (`Epoch of: 5 Perf:`, then `Aligned R-Squared: … | Aligned RMSE: …`).
# Or with its plan (`[Epoch 1/10]` over a `train:` block and a `valid:` block, a Colab
# notebook's hand loop): the outer counter, as Keras's header says it; or the plan in
# brackets after it (Pointnet2's `Epoch 251 (251/251):`), or the counter and the plan in
# brackets (pytorch-nested-unet's `Epoch [93/100]` over its two bars). Any rule or symbol
# before it, an emoji too (`📅 Época 13/15`, in English `epoch`, see `foreign_words`).
_EPOCH_HEADER = lazy_re.compile(_LEAD + r"(?:(?:Start(?:ing)?|Begin(?:ning)?|Training|Running) )?"
                                r"(?:Epoch|EPOCH|epoch|Generation|GENERATION|generation)"
                                r"(?:\s+(?:of|no\.?|No\.?|number|#))?(?:[\s:#]+\[?|\s*\[)(\d+)"
                                r"(?:\s*\(\s*\d+(?=\s*/))?(?:\s*/\s*(\d+))?(?:(?<=\d)\s*\))?"
                                r"(?:\s+[A-Z][a-z]{1,11}:)?"
                                # (and the time the epoch took: bentrevett's tutorials'
                                # `Epoch: 01 | Epoch Time: 0m 57s`, its figures on the
                                # lines after it)
                                r"(?:\s*[|,]\s*(?:[Ee]poch )?[Tt]ime:\s*"
                                r"(?:\d+(?:\.\d+)?[hms]?\s*)+)?"
                                # (or that it begins: torchpack's `Epoch 3/10 started.`)
                                r"(?:\s+(?:[Ss]tart(?:ed|s|ing)?|[Bb]egin(?:s|ning)?|[Bb]egun))?"
                                r"[\s#=*~<>|\[\]:.-]*$")
# A round of a planned number of rounds, alone on its line (a federated simulation's
# `Round 40/40`, then its clients' lines and the round's `Avg Loss: …, Acc: …`): the outer
# counter, as an epoch's header with its plan says it.
_ROUND_HEADER = lazy_re.compile(_LEAD + r"(?:Round|ROUND|round)[\s:#]+(\d+)\s*/\s*"
                                r"(\d+)[\s#=*~<>|\[\]:.-]*$")
# A fold of a cross-validation heading its training (`Fold 2`, `===== FOLD 3/5 =====`,
# `Training fold 4`): each fold a whole training of its own.
# (or in Chinese, with the fold's sizes after it: `===== 折 1/5：训练 237 / 测试 60 =====`)
_FOLD_HEADER = lazy_re.compile(_LEAD + r"(?:(?:Start(?:ing)?|Training|Train|Running)\s+)?"
                               r"(?:Fold|FOLD|fold|折)[\s:#_-]*(\d+)(?:\s*(?:/|of)\s*(\d+))?"
                               r"(?:\s*[：:][^=#*~<>|]{0,60}?)?[\s#=*~<>|\[\]:.-]*$")
# ... or followed by a recap of the best so far, no measure of this epoch (UniMatch's
# `===========> Epoch: 59, Previous best: 86.41 @epoch-38, EMA: 86.29 @epoch-38`).
_EPOCH_HEADER_RECAP = lazy_re.compile(_LEAD + r"(?:Epoch|EPOCH|epoch)[\s:#]+(\d+)"
                                      r"(?:\s*/\s*(\d+))?\s*[,;|]\s*(?:[Pp]revious |[Cc]urrent )?"
                                      r"[Bb]est\b(?!\s+(?:model|checkpoint|weights)\b)")
# An epoch's footer, alone on its line (Avalanche's `Epoch 2 ended.` after the epoch's
# bar, before its figures; `End of epoch 3`, `==== Epoch 4 done ====`): the lines before
# it were that epoch's, so a bar finishing after it counts the next one.
_DECOR = r"[\s#=*~<>|\[\]-]*"
_EPOCH_FOOTER = lazy_re.compile(
    rf"^{_DECOR}(?:Epoch|EPOCH|epoch)[\s:#]+(\d+)(?:\s*/\s*(\d+))?\s+"
    rf"(?:ended|finished|done|completed?|is\s+over){_DECOR}[.!]*{_DECOR}$|"
    rf"^{_DECOR}(?:End|END|end)\s+of\s+(?:Epoch|EPOCH|epoch)[\s:#]+(\d+)(?:\s*/\s*(\d+))?"
    rf"{_DECOR}[.!]*{_DECOR}$")
_YOLO_HEADER = lazy_re.compile(r"^\s*Epoch\s+GPU_mem\s+")
# (YOLOv5 before v7.0 and YOLOv7 count `Labels` where Ultralytics 8 counts `Instances`,
# and name their columns `mAP@.5 mAP@.5:.95`, whose colon is no end of the header)
_YOLO_VAL_HEADER = lazy_re.compile(r"^\s*Class\s+Images\s+(?:Instances|Labels)\s+(.*?):(?:\s|$)")
# The older names, as Ultralytics 8 writes them (`mAP50`, `mAP50-95`).
_IOU_AT = (("@.5:.95", "50-95"), ("@0.5:0.95", "50-95"), ("@.5", "50"), ("@0.5", "50"))
# Ultralytics' validation columns after `Class Images Instances`, by how many there are.
_YOLO_VAL_DEFAULT = {4: ("P", "R", "mAP50", "mAP50-95"),
                     8: ("P", "R", "mAP50", "mAP50-95",
                         "mask_P", "mask_R", "mask_mAP50", "mask_mAP50-95")}
_YOLO_VAL_ROW = lazy_re.compile(r"^\s*all\s+\d+\s+\d+((?:\s+[\d.]+)+)\s*$")
# A class's row under the `all` row (the final validation of the best weights prints one
# per class): its label, which may be a number (`65  30  8  0.878  1  0.995  0.694`, a
# dataset of kart plates), its images and instances, then the same measures.
_YOLO_CLASS_ROW = lazy_re.compile(r"^\s*\S+\s+\d+\s+\d+((?:\s+[\d.]+)+)\s*$")


class HeaderReader:
    """Reads header lines into the bars' context (the parser's BarSteps), the final
    epoch's count and the formats seen, which it shares with the parser."""

    def __init__(self, bars: BarSteps, final_epoch: FinalEpoch, formats: Counter[str]) -> None:
        self._bars = bars
        self._final_epoch = final_epoch
        self._formats = formats
        self._yolo_val: tuple[str, ...] = ()  # the columns of the validation table
        # The measures an `all` row just gave: the class rows under it give as many.
        self._class_values: int | None = None
        self._federated = FederatedRounds()  # a Flower server's rounds
        self._fold_seen: int | None = None  # the fold the latest fold header named

    def wants(self, line: Line) -> bool:
        """What every pattern needs (or a validation table is open): most lines end here."""
        text = line.text
        return bool(self._yolo_val) or self._class_values is not None or "poch" in text \
            or "EPOCH" in text or "Class" in text or "old" in text or "OLD" in text \
            or "折" in text or (bool(self._bars.yolo_columns) and "all " in text) \
            or any(hint in text for hint in ROUND_HINTS) or self._federated.wants(text)

    def epoch_header(self, epoch: int) -> None:
        """An epoch's header: the lines after it are that epoch's."""
        self._bars.epoch_hint = max(self._bars.epoch_hint, epoch)
        self._bars.header_epoch = epoch
        self._bars.headers_read += 1
        self._final_epoch.headed(epoch)

    def read(self, line: Line, context: ParseContext) -> Record | None:
        """The record a header line makes; claims the line when it is a header, record
        or not. A hand-written loop's `Epoch 3` is left for the other readers."""
        text = line.text
        self._bars.rounds.line(text)
        if self._federated.wants(text):
            federated = self._federated.read(text, message(text), line.rank)
            if federated is not None:
                line.claimed = True
                return federated if isinstance(federated, Record) else None
        if self._class_values is not None:
            row = _YOLO_CLASS_ROW.match(text)
            if row is not None and len(row.group(1).split()) == self._class_values:
                line.claimed = True  # one class's measures: no record of the run's
                return None
            self._class_values = None
        keras = _KERAS_EPOCH.match(text)
        if keras is None and (text[:1].isdigit() or text[:1] == "["):
            # the same header after a logger's head (`2018-09-04 18:44:21,417:INFO:
            # Epoch 8/10`): a hand loop printing Keras's shape through `logging`
            keras = _KERAS_EPOCH.match(message(text))
        if keras is not None:
            line.claimed = True
            # Keras counts its own epochs (`Epoch 1/1` of a `fit` called once per outer
            # `epoch 56`): the records under it are in Keras's count, not the header's.
            self._bars.header_epoch = None
            epoch, epochs = int(keras.group(1)), int(keras.group(2))
            self._bars.keras_header(epoch, epochs)
            self._final_epoch.counted(epoch, epochs)
            self._formats["keras"] += 1
            # Its records count the epochs done (`epoch 1.4` is 40 % into the second),
            # so the header that opens epoch 2 stands at 1.0, where its bars begin: at
            # 2.0 every bar after it would seem to go back an epoch. A call's only epoch
            # (`Epoch 1/1`, once per round of an outer loop) places nothing: at 0.0 each
            # round would seem to go back to a new run's start.
            return Record(epoch=float(epoch - 1) if epochs > 1 else None,
                          total_epochs=epochs,
                          events=(LogEvent(EventKind.NEW_STAGE, text.strip(),
                                           f"epoch {epoch}"),),
                          rank=line.rank, fmt="keras", step=context.step,
                          target_steps=context.target)
        if "old" in text or "OLD" in text or "折" in text:
            fold = _FOLD_HEADER.match(text) or _FOLD_HEADER.match(message(text))
            if fold is not None:
                line.claimed = True
                number = int(fold.group(1))
                if fold.group(2) is not None and number == int(fold.group(2)):
                    # (`Running fold 2/2` after `0/2` and `1/2`, `Fold 5/5`: the last)
                    self._final_epoch.last_repetition = text.strip()[:160]
                if self._fold_seen is not None and number != self._fold_seen:
                    self._fold_seen = number
                    return Record(step=context.step, target_steps=context.target,
                                  events=(LogEvent(EventKind.NEW_STAGE, text.strip()[:500],
                                                   NEXT_REPETITION),), rank=line.rank)
                self._fold_seen = number
                return None
        header_epoch = _EPOCH_HEADER.match(text)
        if header_epoch is None and "poch" in text and (text[:1].isdigit() or text[:1] in "[|"):
            # (behind a logger's head: `| 2021-07-08 17:10:25 | INFO | Start epoch 8:`)
            header_epoch = _EPOCH_HEADER.match(message(text))
        if header_epoch is None and "est" in text:
            header_epoch = _EPOCH_HEADER_RECAP.match(message(text))
        if header_epoch is None and ("ound" in text or "OUND" in text):
            header_epoch = _ROUND_HEADER.match(text)
        if header_epoch is not None:
            self.epoch_header(int(header_epoch.group(1)))
            if header_epoch.group(2) is not None:
                self._final_epoch.counted(int(header_epoch.group(1)), int(header_epoch.group(2)))
            return None
        if ("nd" in text or "ne" in text or "ished" in text or "ete" in text or "ver" in text) \
                and (footer := _EPOCH_FOOTER.match(text)) is not None:
            ended, planned = footer.group(1) or footer.group(3), footer.group(2) or footer.group(4)
            self._bars.epoch_said(float(ended))
            if planned is not None:
                self._final_epoch.counted(int(ended), int(planned))
            return None
        if _YOLO_HEADER.match(text):
            line.claimed = True
            self._bars.yolo_columns = tuple(text.split())
            self._formats["ultralytics"] += 1
            return None
        header = _YOLO_VAL_HEADER.match(text)
        if header is not None:
            line.claimed = True
            self._yolo_val = tuple(_modern(name) for name in header.group(1).replace(
                "Box(", "").replace(")", "").split())
            return None
        row = _YOLO_VAL_ROW.match(text) if self._yolo_val or self._bars.yolo_columns else None
        if row is not None:
            values = [to_number(v) for v in row.group(1).split()]
            # A log of stdout alone has no validation header (it comes with the bar, on
            # stderr): the detector's own columns, box then mask (segmentation).
            columns = self._yolo_val or _YOLO_VAL_DEFAULT.get(len(values), ())
            if not columns:
                return None
            line.claimed = True
            self._class_values = len(values)
            metrics = {f"val/{name.lower()}": v
                       for name, v in zip(columns, values, strict=False) if v is not None}
            return Record(step=context.step, metrics=metrics, rank=line.rank, fmt="ultralytics")
        return None


def _modern(name: str) -> str:
    for old, new in _IOU_AT:
        name = name.replace(old, new)
    return name

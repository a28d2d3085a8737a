"""Reading a line by its shape, when no framework parser knows it.

The framework parsers in `formats` and `frameworks` are hints: they know the shapes of
the logs they were written for. Everything else a training log prints is still made of
a few shapes, and this module reads those from the log itself:

- tables: a row of column names, then rows of values with as many cells (YOLOv5,
  fastai, CSV/TSV metric files, `step<TAB>loss`); a row may also be the description of
  a progress bar (YOLOv5 draws one per epoch, with the row before the bar);
- bare columns: rows of numbers without a header, read once the same shape has come
  back a few times (the first integer column is the step);
- boxed key/value blocks (`| ep_rew_mean | 21.3 |`, stable-baselines3; without side bars
  under a rule of dashes, `  reward  |  0.026`, RLCard), read as one record when the
  block closes;
- a non-finite value (`nan`, `-inf`) in a line whose shape the run has printed before
  with a number in that place: a value of that metric, named or not. A `nan` nobody
  could name is still reported, never dropped.

Nothing here runs for a line a framework parser already understood, so the usual
shapes cost nothing extra.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter, deque
from dataclasses import replace
from itertools import pairwise

from babysit import lazy_re
from babysit.parsing.counter_rows import read_counter_row
from babysit.parsing.formats import STEP_KEYS, Parsed, changed_from, split_counters
from babysit.parsing.header_cells import delimited_names, has_prose, is_rule, multiword_names
from babysit.parsing.lone_values import LONE_VALUE, lone_value
from babysit.parsing.text import normalise_key, to_number

_NUMBER = r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
# A token that is a non-finite number on its own (`nan`, `-inf`, `NaN`, C's `-nan`), not
# part of a word (`nanoGPT`, `info`, `inference`) or a call (`isnan(`).
NON_FINITE_TOKEN = lazy_re.compile(r"(?<![\w.])[-+]?(?:nan|inf(?:inity)?)(?![\w(.])", re.IGNORECASE)
# Any number-like token, for a line's template: numbers and non-finite tokens alike.
# A duration's number is a value too, with its unit glued on (`12s`, `733ms`, `0us`: CatBoost's
# `total: 12m 12s  remaining: 733ms`), or no two lines of such a log would share a template.
_VALUE_TOKEN = lazy_re.compile(rf"(?<![\w.]){_NUMBER}(?:ms|us|µs|s|m|h)?(?![\w])|"
                               rf"{NON_FINITE_TOKEN.pattern}",
                               re.IGNORECASE)
_CELL = lazy_re.compile(
    rf"^(?:{_NUMBER}(?:%|[KMGT]i?B?)?|[-+]?(?:nan|inf(?:inity)?))$", re.IGNORECASE)
_COUNTER_CELL = lazy_re.compile(r"^(\d+)/(\d+)$")
# A column named for the time left (`Remaining Time`, `Estimated Time`, `ETA`, `time_left`).
_TIME_LEFT = lazy_re.compile(r"(?i)remaining|estimated|\beta\b|^eta|time[ _-]?left")
# A clock (`1:02:03`) or a duration with its unit (`1.36s`, `733ms`): a value, not a metric.
_TIME_CELL = lazy_re.compile(r"^\(?\d+(?::\d\d){1,2}(?:\.\d+)?\)?$|"
                             r"^\d+(?:\.\d+)?(?:ms|us|s|m|h)$")
# A date in a row, the time of day beside it (RWKV-LM's `train_log.txt`: `0 1.179688
# 3.2534 0.00001001 2025-05-27 10:59:28.237880 0`): when the row was written, no figure.
_DATE_CELL = lazy_re.compile(r"^\d{4}-\d{2}-\d{2}$")
# A moment written as one cell, a clock inside it (ADAAD's CSV `…, 26.10000, Aug16-15:41:04,`,
# `2024/05/01-10:11:12`, `20240501_101112`): when the row was written, no figure either.
_STAMP_CELL = lazy_re.compile(r"^[A-Za-z]{0,9}[\d/_.-]*\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?$")
# A row's label that names its split, and the prefix its figures take ("": the training's).
_SPLIT_LABELS = {"train": "", "training": "", "trn": "", "valid": "val", "validation": "val",
                 "val": "val", "dev": "val", "eval": "val", "test": "test"}
_NAME_CELL = lazy_re.compile(r"^[A-Za-z_][\w./@%()\[\]:+-]*$")  # (`lossG+lossD`: a sum's column)
# A column of remarks in a hand-written table (`| Status` over `| [BEST] (210s)`).
_NOTE_NAMES = frozenset({"status", "note", "notes", "remark", "remarks", "comment", "comments",
                         "info", "flag", "flags", "mark", "marker", "message", "msg"})
_FUNCTION_CELL = lazy_re.compile(r"^<[A-Za-z_]\w*>$")
_UNIT_CELL = lazy_re.compile(r"^\([^()]{1,16}\)$")  # `(hh:mm:ss)`, `(%)`
_BOX_LINE = lazy_re.compile(r"^\s*\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|\s*$")
_RULE_LINE = lazy_re.compile(r"^\s*-{8,}\s*$")
_MARKER_CELL = lazy_re.compile(r"^(?:<|>|\*{1,3}|!|\+)$")
# A word of a row above a header that groups its columns by split (aenet's
# `|------------TRAIN-----------|  |------------TEST------------|` over `epoch  MAE
# <RMSE>  MAE  <RMSE>`).
_GROUP_WORD = lazy_re.compile(r"[A-Za-z]+")
# The names a boxed block gives its progress by: the environment's steps, else episodes.
_BOX_STEPS = frozenset({"total_timesteps", "timesteps", "timestep"})
_BOX_EPISODES = frozenset({"episode", "episodes"})
# A boxed block's row without its side bars, under a rule of dashes (RLCard's Logger:
# `----------------------------------------`, `  episode      |  1`, `  reward       |
# 0.026`, the dashes again): a name, one bar, one value.
_BARE_BOX_LINE = lazy_re.compile(r"^\s*([A-Za-z_][\w ./()-]*?)\s*\|\s*([^|\s]+)\s*$")
_EPOCH_NAMES = frozenset({"epoch", "epochs", "ep"})
_STEP_NAMES = frozenset(STEP_KEYS) | {"total_timesteps", "timesteps"}
# Counters a table names its columns by, beyond the usual keys: spaCy 2's `Itn.`, spaCy
# 3's `E` (the epoch) and `#` (the step).
_STEP_COLUMNS = {"itn": "step", "it": "step", "#iter": "step", "#": "step", "e": "epoch",
                 "ep": "epoch"}
# Words that name a split or a phase before a metric's name in a spaced header.
_QUALIFIERS = frozenset({"train", "training", "valid", "validation", "val", "test", "eval",
                         "dev"})
_MAX_CELLS = 40
# The column of a metrics file in long form that holds every measure's value, each row
# naming its measure in a column of words (`_tidy_row`).
_VALUE_COLUMNS = frozenset({"value", "values", "metric_value"})
_HEADER_REACH = 200  # lines a header may stand above the first row it names
_INDEX_REACH = 2  # ... and a frame's header above its first row (its index unnamed)
_BARE_REPEATS = 3  # rows of one shape before bare columns are believed
# A header of per-class measures (scikit-learn's classification_report: `precision
# recall f1-score support`, the label column unnamed): its rows are the classes, each led
# by its label (`0  0.61  0.75  0.67  59`), not a loop's records.
_PER_CLASS = frozenset({"precision", "recall", "f1_score", "f1", "support", "specificity",
                        "sensitivity", "iou", "dice", "accuracy", "acc"})
# A table's first column that holds each row's class (a per-class report under `class
# precision recall f1 support`, whose classes may be numbers: `3  0.91  0.88  0.89  1010`):
# its rows are the classes, not a loop's records.
_LABEL_COLUMNS = frozenset({"class", "classes", "category", "categories", "label", "labels"})
# A row's first cell that says its counter with its word (`| epoch 0  | 0.7601 | …` under
# `| # epoch  | AUROC | …`, DeepPurpose's prettytable of its validation per epoch).
_WORDED_COUNT = lazy_re.compile(r"^(?P<word>[A-Za-z]+)\s*#?\s*(?P<n>\d+)$")
_COUNTER_WORDS = frozenset({"epoch", "step", "iter", "iteration", "round", "episode",
                            "update"})
# Lines between two bare rows of one shape that still count as the same table: a loop's
# rows come close together; the same shape scattered through other text (or through
# random bytes) is chance.
_BARE_REACH = 50
_RECENT = 64  # lines kept to tell a metric line's shape from a one-off
_MAX_TEMPLATES = 8192
# A template's first line is kept up to this length (a metric line is shorter; a long one
# is some dump's, and the memory is bounded by it).
_FIRST_LINE_CHARS = 400


# Two characters a banner is drawn with, at a line's head or tail.
_DECORATION = frozenset({"**", "==", "~~"})


def template(line: str) -> str:
    """The line with every number-like token masked: lines of one template differ only
    in their values."""
    return _VALUE_TOKEN.sub("#", line)


def _split(line: str) -> tuple[str, list[str]]:
    # (an issue's paste keeps the backticks that opened its code: `` `epoch,step,… ``)
    text = line.strip().strip("`").strip()
    if '"' in text and "," in text and "\t" not in text:
        # A CSV row whose quoted cells hold commas (a pandas frame of sklearn's
        # classification reports: `"{'precision': 0.77, …}",…,0.4655,7,0.2019`): split as
        # CSV does; a quoted structure is no figure of its column (left empty).
        cells = next(csv.reader([text]), [])
        return ",", ["" if "{" in cell or "[" in cell or "," in cell else cell.strip()
                     for cell in cells]
    if "(" in text and "," in text and "\t" not in text and _commas_grouped(text):
        # Columns grouped in parentheses (SASRec's `epoch (val_ndcg, val_hr) (test_ndcg,
        # test_hr)` over `20 (0.5094, 0.7697) (0.4853, 0.7445)`): each group's commas
        # part its cells, the groups are apart by spaces.
        return " ", text.replace("(", " ").replace(")", " ").replace(",", " ").split()
    if text.startswith("[") and "," in text and "\t" not in text \
            and (grouped := _BRACKET_GROUPED.match(text)) is not None:
        # Counters grouped in brackets before the figures (the PyTorch tutorial's loop as
        # a QM9 density CNN prints it: `[Epoch, Entry] - Loss` over `[1,     14]
        # 1.049`): the bracket's commas part its cells, a dash after it none.
        return " ", [*(c.strip() for c in grouped.group(1).split(",")),
                     *grouped.group(2).split()]
    for sep in ("\t", ","):
        if sep in text:
            return sep, [cell.strip() for cell in text.split(sep)]
    if text.startswith("|") and text.endswith("|") and text.count("|") >= 3:
        return "|", [cell.strip() for cell in text.strip("|").split("|")]
    if text.count(" | ") >= 2:
        # Columns set apart by ` | ` with no border (a hand-written loop's `epoch | tr_loss
        # | … | time` over `    1 |   1.540 | … |   61s`, sealed-18), or a border on one
        # side only (pytorch-tabnet's `| 1     | -44154.26172 |  -1209990.25000 |   0.0`):
        # cells as a bordered table's, unless one is empty (then the pipes are no columns).
        cells = [cell.strip() for cell in text.removeprefix("|").split("|")] \
            if text[-1] != "|" else [cell.strip() for cell in text[:-1].split("|")]
        if all(cells):
            return "|", cells
    return " ", text.split()


_BRACKET_GROUPED = lazy_re.compile(r"^\[((?:\s*[\w.+-]+\s*,){1,3}\s*[\w.+-]+\s*)\]\s*(?:-\s+)?"
                                   r"([^,\[\]]+)$")
_PHRASE = lazy_re.compile(r"^[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,4}$")
_PHRASE_ENDS = lazy_re.compile(r"^[\W_]+|[\W_]+$")
# A list of quoted names alone on its line (`['acc', 'auc', 'fmeasure']`), and a split's
# label before a list of figures (`Validation -  [0.53, 0.5553, 0.5053]`).
_NAME_LIST = lazy_re.compile(r"^\s*\[((?:\s*'[A-Za-z_][\w@./-]{0,30}'\s*,?){2,16})\]\s*$")
_QUOTED = lazy_re.compile(r"'([^']+)'")
_LABELLED_LIST = lazy_re.compile(r"^\s*([A-Za-z]+)\s*[-:=]\s*\[([-+\d.eE,\s]+)\]\s*$")
_GROUP = lazy_re.compile(r"\(([^()]*)\)")


def _commas_grouped(text: str) -> bool:
    """Whether every comma of the line is inside parentheses, two groups or more, each of
    plain cells (no quote, no nested group), and nothing outside them but cells apart by
    spaces."""
    groups = _GROUP.findall(text)
    if len(groups) < 2 or "," in _GROUP.sub(" ", text) or "'" in text or '"' in text:
        return False
    return all("," in group for group in groups)


def _is_value(cell: str) -> bool:
    return _CELL.match(cell) is not None or _COUNTER_CELL.match(cell) is not None \
        or _TIME_CELL.match(cell) is not None or _DATE_CELL.match(cell) is not None \
        or _STAMP_CELL.match(cell) is not None


def _number(cell: str) -> float | None:
    if _TIME_CELL.match(cell) or _DATE_CELL.match(cell) or _STAMP_CELL.match(cell):
        return None
    return to_number(cell.rstrip("KMGTiB") if cell[-1:] in "KMGTiB" else cell)


_ARRAY_CELL = lazy_re.compile(r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?nan|[-+]?inf)",
                               re.IGNORECASE)


def _numbers_only(text: str) -> bool:
    cells = text.split()
    return bool(cells) and all(_ARRAY_CELL.fullmatch(c) for c in cells)


def _opens_array(line: str) -> bool:
    """Whether the line begins an array whose elements go on past it: after its last `[`
    only numbers, and no `]`."""
    at = line.rfind("[")
    return at >= 0 and "]" not in line[at:] and _numbers_only(line[at + 1:])


class ShapeReader:
    """The context that reading by shape needs: the column names a log announced, how
    often each bare shape came back, an open boxed block, and the last lines read."""

    def __init__(self) -> None:
        # Headers waiting for their first row, by (separator, width): (line no, names).
        self._pending: dict[tuple[str, int], tuple[int, tuple[str, ...]]] = {}
        self._headers: dict[tuple[str, int], tuple[str, ...]] = {}
        # The words a labelled row of each shape carried first (see `_labelled_row`).
        self._row_labels: dict[tuple[str, int], tuple[tuple[int, str], ...]] = {}
        self._bare: Counter[tuple[str, int]] = Counter()
        self._bare_seen: dict[tuple[str, int], int] = {}  # the line of the shape's last row
        self._bare_first: dict[tuple[str, int], int | None] = {}  # its first row's counter
        self.bare_first: int | None = None  # ... of the shape of the latest bare row
        self._box: dict[str, float] = {}
        # Other lines came after the open box's rows: it ended without its border (OpenAI
        # Baselines' `logger.dumpkvs` pasted without its dashes, an `Iteration 3027`
        # line between one table and the next).
        self._box_ended = False
        self._bare_box = False  # the open block's rows have no side bars (`_BARE_BOX_LINE`)
        self._rule_at = -1  # the line number of the last rule of dashes
        self._box_shapes: set[frozenset[str]] = set()  # the names of the blocks closed so far
        self._section = ""
        self._line_no = 0
        self.recent: deque[str] = deque(maxlen=_RECENT)
        self._templates: dict[str, int] = {}  # how often each template was asked about
        # The line each template asked about once was (a metric line's first, read as
        # none, see `recurring`); `first_line`: that line, when the line just asked about
        # is its template's second.
        self._first_lines: dict[str, str] = {}
        self.first_line: str | None = None
        self.epoch_base: int | None = None  # 0 when the log counts epochs from 0
        self.final_row = False  # the last row read was the planned last epoch's
        # The last row read put the run's own estimate of the time left at 0 (a column
        # named for it: scikit-learn's `Iter  Train Loss  Remaining Time`, `0.00s`).
        self.time_left_zero = False
        self._boxed_rows = False  # rows of a boxed table were read since its last rule
        self.table_closed = False  # the line read was the rule that closed such a table
        # An array printed over several lines (numpy's `[0.8888889 1. …` on a line, its
        # rows on the next ones, up to the `]`): its rows are one value's elements, never
        # a table's records (a per-class accuracy array with a `nan` for a class absent).
        self._in_array = False
        self._array_row = False  # the line noted last is such a row
        # Rows of a bare shape read before the line being read made it believed (see
        # `row`): records the run printed that no parse returned.
        self.rows_unread = 0
        self._list_names: tuple[str, ...] = ()  # the names a list printed last (`_listed`)

    def note(self, line: str) -> None:
        """Every line read, whatever parsed it: the recent lines a `nan` is judged by, and
        whether the line is part of an array printed over several lines."""
        self._line_no += 1
        self.rows_unread = 0
        self.recent.append(line)
        self.follow_arrays(line)
        if self._box and not line.lstrip().startswith(("|", "-", "+", "=")) \
                and not (self._bare_box and _BARE_BOX_LINE.match(line)):
            self._box_ended = True  # (a box whose border a paste lost: see `_box_line`)

    def inside_array(self) -> bool:
        """Whether the line noted last continues an array begun on an earlier line."""
        return self._array_row

    def follow_arrays(self, line: str) -> None:
        """Whether the line begins, continues or ends an array printed over several lines
        (every line, the repeated ones the parser passes over too)."""
        if self._in_array or "[" in line:
            self._array_row = self._in_array and _numbers_only(line.replace("]", " "))
            self._in_array = (self._array_row and "]" not in line) or _opens_array(line)
        else:
            self._array_row = False

    # --- lines no parser understood ----------------------------------------------------

    def read(self, line: str) -> Parsed | bool | None:
        """What an otherwise unknown line says: a Parsed record, True when it was taken
        in as context (a header, part of a boxed block), None when it says nothing."""
        if "[" in line:
            listed = self._listed(line)
            if listed is not None:
                return listed
        box = _BOX_LINE.match(line)
        if box is not None:
            return self._box_line(box.group(1), box.group(2))
        if "|" in line and (self._bare_box or self._rule_at == self._line_no - 1) \
                and (bare := _BARE_BOX_LINE.match(line)) is not None:
            self._bare_box = True
            return self._box_line(bare.group(1), bare.group(2))
        if _RULE_LINE.match(line):
            self._rule_at = self._line_no
            if self._box:
                return self._close_box()
        self.table_closed = False
        if is_rule(line):
            # A table's border: a boxed progress table closed after its rows (Turi
            # Create draws the bottom border when training returns) ends that loop.
            # Not the rule under a header just printed: a new table's top (a relaunch
            # logging `Epoch | Loss | Acc …` again, then its rule, then epoch 1).
            under_header = any(at == self._line_no - 1 for at, _ in self._pending.values())
            self.table_closed = self._boxed_rows and not under_header
            self._boxed_rows = False
            return True
        if self._array_row:
            return True  # an element row of a printed array (see `note`)
        if line[:2] in _DECORATION or line.rstrip()[-2:] in _DECORATION:
            # A header set in a banner (`*******train_loss,train_acc,valid_loss,valid_ac****`
            # over a hand loop's tab-separated row): the names inside it.
            line = line.strip().strip("*=~").strip()
        sep, cells = _split(line)
        if sep == "\t" and "" in cells:
            cells = self._aligned(cells)
        if cells and cells[0].startswith("#") and len(cells) >= 3:
            # A header written as a comment above its columns (`#  step  rmse_val  …  lr`:
            # DeePMD's lcurve.out, numpy.savetxt's `header=`): the names after the mark.
            named = [c for c in (cells[0].lstrip("#").strip(), *cells[1:]) if c]
            if named and all(_NAME_CELL.match(c) for c in named):
                cells = named
        if len(cells) == 1 and lone_value(cells[0]):
            return self.row(cells, sep)  # a loop that prints one number a line (lone_values)
        if not 2 <= len(cells) <= _MAX_CELLS:
            return None
        if sep == " " and "=" not in line and ":" not in line:
            pairs = self._spaced_pairs(cells, line)
            if pairs is not None:
                return pairs
        if self._header_continued(sep, cells):
            return None
        if "<" in line:
            # A metric given as an unnamed function names its column by its repr
            # (fastai v1's `epoch  train_loss  valid_loss  <lambda>`): its bare name.
            cells = [c[1:-1] if _FUNCTION_CELL.match(c) else c for c in cells]
        multiword = multiword_names(line)
        if multiword is None and sep in (",", "\t"):
            delimited = delimited_names(cells)  # `Wall time,Step,Value`
            multiword = (sep, delimited) if delimited is not None else None
        if multiword is not None:  # `| Iteration | Loss | Elapsed Time |`, `Itn.  Dep Loss`
            self._pending[(multiword[0], len(multiword[1]))] = (self._line_no, multiword[1])
            return None  # as any header: it counts once a row follows it
        if sep == "," and len(cells) >= 3 and not cells[0]:
            # A pandas frame written with its index (`df.to_csv(path)`: `,intent_loss,
            # intent_acc,set`, or names of words: `,epoch,batch loss,batch acc`): the
            # index's column is unnamed, and counts rows, not the loop (`_named` passes
            # it by).
            indexed = tuple(normalise_key(c) for c in cells[1:]) \
                if all(_NAME_CELL.match(c) for c in cells[1:]) else delimited_names(cells[1:])
            if indexed is not None:
                self._pending[(sep, len(cells))] = (self._line_no, ("", *indexed))
                return None
        if all(_NAME_CELL.match(c) for c in cells):
            names = tuple(normalise_key(c) for c in cells)
            if len(set(names)) < len(names):
                names = _grouped(names, line, self.recent[-2] if len(self.recent) > 1 else "")
            if any(ch.isdecimal() for ch in line) and not any(c[0].isupper() for c in cells) \
                    and not any("_" in c for c in cells) and not set(names) <= _PER_CLASS:
                return None  # `loss0 loss1`? words with digits but no capitals: prose-ish
                # (a name with an underscore, `f2_opt`, `top5_acc`, is a column's)
            if has_prose(cells):
                return None  # a sentence's words, no columns' names
            if len(self._pending) > 64:
                self._pending.clear()
            self._pending[(sep, len(cells))] = (self._line_no, names)
            return None  # a header only counts once a row follows it
        if cells and (worded := _WORDED_COUNT.match(cells[0])) is not None:
            word = worded.group("word").lower()
            pending = self._pending.get((sep, len(cells)))
            if word in _COUNTER_WORDS or (pending is not None and pending[1][0] == word):
                cells = [worded.group("n"), *cells[1:]]
        if sep == "," and len(cells) > 2 and not cells[-1] \
                and not self._announced((sep, len(cells))) \
                and self._announced((sep, len(cells) - 1)):
            # A row that ends on its separator (`0, 26.00907, …, Aug16-15:41:04,` under
            # `epoch, train_loss, …, time`): the empty cell after it is no column.
            cells = cells[:-1]
        if len(cells) > 2 and _MARKER_CELL.match(cells[-1]) \
                and not self._announced((sep, len(cells))) \
                and self._announced((sep, len(cells) - 1)):
            # A mark after a row's figures, under no column (aenet's ` 3  8.368408E-03 …
            # 2.141188E-04 <`, the epoch's networks kept as the best so far)
            cells = cells[:-1]
        notes = self._note_columns((sep, len(cells)))
        if notes:
            # A column its header names for remarks (`Status`, `Notes`): its words are no
            # figure, and say nothing of the row's others (a hand loop's `| [BEST] (210s)`
            # after its losses and scores).
            cells = ["" if at in notes and not _is_value(c) else c for at, c in enumerate(cells)]
        # A CSV or TSV row may leave a column empty (a metric logged at other steps).
        empty_ok = sep in (",", "\t") or bool(notes)
        if not all(_is_value(c) or (empty_ok and not c) for c in cells) or not any(cells):
            tidy = self._tidy_row(sep, cells) if empty_ok else None
            if tidy is not None:
                return tidy
            if empty_ok and self._labelled_row(sep, cells):
                parsed = self.row(cells, sep)
                split = self._split_label(cells)
                if parsed is not None and split is not None:
                    # (a row labelled with its split, `39,0.3616,0.9362,valid` under `…,set`:
                    # a held-out split's figures under the training's names)
                    parsed = replace(parsed, metrics={f"{split}_{k}": v
                                                      for k, v in parsed.metrics.items()})
                return parsed
            if sep == ",":
                return self._delimited_pairs(cells, line)
            return self._counter_row(line) if sep == " " else None
        return self.row(cells, sep)

    def _listed(self, line: str) -> Parsed | bool | None:
        """Names printed as a list, then figures as lists under a split's label (an EEGNet
        demo's `['acc', 'auc', 'fmeasure']`, then `Train -  [0.63, 0.6536, 0.6408]`,
        `Validation -  [0.53, 0.5553, 0.5053]`): each figure by its name, the split's
        prefix before it. True for the names' line (taken in), None for any other."""
        names = _NAME_LIST.match(line)
        if names is not None:
            self._list_names = tuple(normalise_key(n) for n in _QUOTED.findall(names.group(1)))
            return True
        if not self._list_names:
            return None
        figures = _LABELLED_LIST.match(line)
        if figures is None:
            return None
        label = figures.group(1).lower()
        values = [to_number(v.strip()) for v in figures.group(2).split(",")]
        if label not in _SPLIT_LABELS or len(values) != len(self._list_names) \
                or any(v is None for v in values):
            return None
        prefix = _SPLIT_LABELS[label]
        prefix = f"{prefix}_" if prefix else "train_"
        return Parsed("listed", metrics={f"{prefix}{name}": value for name, value
                                         in zip(self._list_names, values, strict=True)
                                         if value is not None})

    def _tidy_row(self, sep: str, cells: list[str]) -> Parsed | None:
        """A row of a metrics file in long form, one measure a row under a header that
        names a column for the values (a β-TCVAE's `Epoch,Loss,Value` over `0,recon_loss,
        114.49`, `0,tc_loss,-32.88`; `step,metric,value`): the row's measure by the name
        in its one column of words, at the row's counters."""
        key = (sep, len(cells))
        names = self._take_header(key) if self._announced(key) else None
        if names is None or _VALUE_COLUMNS.isdisjoint(names):
            return None
        words = [at for at, c in enumerate(cells) if c and not _is_value(c)]
        if len(words) != 1 or names[words[0]] in _VALUE_COLUMNS \
                or not _NAME_CELL.match(cells[words[0]]):
            return None
        at_value = next(at for at, name in enumerate(names) if name in _VALUE_COLUMNS)
        named = list(names)
        named[at_value] = normalise_key(cells[words[0]])
        counters = [c if at != words[0] else "" for at, c in enumerate(cells)]
        return self._named(tuple(named), counters, "table")

    def _announced(self, key: tuple[str, int]) -> bool:
        return key in self._pending or key in self._headers

    def _note_columns(self, key: tuple[str, int]) -> frozenset[int]:
        """The places of the columns that the header announced for rows of this shape
        names for remarks, not figures."""
        pending = self._pending.get(key)
        names = pending[1] if pending is not None else self._headers.get(key)
        if not names or _NOTE_NAMES.isdisjoint(names):
            return frozenset()
        return frozenset(at for at, name in enumerate(names) if name in _NOTE_NAMES)

    def _labelled_row(self, sep: str, cells: list[str]) -> bool:
        """A row of a CSV or TSV file under its header whose few words are labels, not
        measures (a metrics file's `regime` column, `0,adamw,113,0.3,…,5.1861,…`): its
        numbers are the row's values, its words no metric."""
        key = (sep, len(cells))
        if key not in self._pending and key not in self._headers:
            return False
        words = tuple((at, c) for at, c in enumerate(cells) if c and not _is_value(c))
        values = sum(1 for c in cells if c and _is_value(c))
        if values < 2 or 3 * len(words) > values \
                or not all(_NAME_CELL.match(word) for _, word in words):
            return False
        # The same words in the same places on every row: a label of the whole file. Words
        # that change from row to row sort the rows into kinds (a federated run's `global,
        # test` rows among its clients' `train_epoch_1`), no one series — unless the one
        # word is the row's split (`train`, `valid`), a series for each.
        if len(words) == 1 and words[0][1].lower() in _SPLIT_LABELS:
            return True
        return self._row_labels.setdefault(key, words) == words

    @staticmethod
    def _split_label(cells: list[str]) -> str | None:
        """The held-out split a row's label names (`val`, `test`), None for a training
        row or a row with no such label."""
        labels = [c.lower() for c in cells if c.lower() in _SPLIT_LABELS]
        if len(labels) != 1:
            return None
        split = _SPLIT_LABELS[labels[0]]
        return split or None

    def _aligned(self, cells: list[str]) -> list[str]:
        """Cells apart by tabs, some empty: where the empty ones only align the columns
        (robust_overfitting's `Epoch \\t Train Time \\t Test Time \\t LR \\t \\t Train
        Loss …`, its rows `0 \\t 518.4 \\t \\t 108.2 \\t \\t 0.1000 …`), the cells without
        them. A header's empty cell names no column; a row's are alignment only where,
        without them, the row is as wide as a header of the log and with them it is not
        (a metric file's empty cell is a value not logged at that step, `12\\t\\t0.41`)."""
        compact = [cell for cell in cells if cell]
        if len(compact) >= 2 and all(_NAME_CELL.match(cell) for cell in compact):
            return compact
        # (a header of names of several words is kept as apart by spaces, `header_cells`)
        # A header just printed, its rows still to come, is the one a row of its width
        # answers (fast_adversarial's closing `Test Loss \t Test Acc \t PGD Loss \t PGD
        # Acc`, then `0.2865 \t \t 0.9169 \t …`: four values, not the five-wide epoch
        # table's row with an empty cell).
        announced = {width for _, width in self._pending}
        if len(compact) in announced and len(cells) not in announced:
            return compact
        widths = announced | {width for _, width in self._headers}
        return compact if len(compact) in widths and len(cells) not in widths else cells

    def _header_continued(self, sep: str, cells: list[str]) -> bool:
        """A header's second line, right under its first, finishing its names (MATLAB's
        training table: `| Epoch | … | Mini-batch | Validation | Mini-batch |
        Validation |` over `| | … | RMSE | RMSE | Loss | Loss |`): each word joins the
        name above it, so the columns read `mini_batch_rmse`, `validation_loss`, not two
        columns of one name. A unit in parentheses (`(hh:mm:ss)`) names nothing."""
        key = (sep, len(cells))
        pending = self._pending.get(key)
        if sep != "|" or pending is None or pending[0] != self._line_no - 1 \
                or all(cells) or not any(cells) \
                or not all(not c or _NAME_CELL.match(c) or _UNIT_CELL.match(c) for c in cells):
            return False
        names = tuple(f"{name}_{normalise_key(word)}" if word and not word.startswith("(")
                      else name for name, word in zip(pending[1], cells, strict=True))
        self._pending[key] = (self._line_no, names)
        return True

    def _counter_row(self, line: str) -> Parsed | None:
        """`4767 train 11.57`, `35000 35% (1m 4s) nan Nam / Russian ✗`: a row that leads
        with its counter (`counter_rows`), once its shape came back."""
        if "=" in line or ":" in line:
            return None
        row = read_counter_row(line)
        return row[1] if row is not None and self.recurring(row[0]) else None

    def _spaced_pairs(self, cells: list[str], line: str) -> Parsed | None:
        """`tick 3  kimg 18.2  lod 0.00  minibatch 32  sec/tick 652.4`: names each followed
        by a value, in a line the run prints over and over."""
        values: dict[str, float] = {}
        for name, cell in pairwise(cells):
            if _NAME_CELL.match(name) and _CELL.match(cell) and not name[0].isdecimal():
                number = _number(cell)
                if number is not None:
                    values.setdefault(normalise_key(name), number)
        if len(values) < 3 or len(values) * 2 < len(cells) - 2 or not self.recurring(line):
            return None
        return split_counters(values, "spaced-pairs")

    def _delimited_pairs(self, cells: list[str], line: str) -> Parsed | None:
        """Names and values in turn, set apart by commas, in a line the run prints over
        and over: a CSV writer's `iteration,100,test_loss,2.06,test_accuracy,0.516` (the
        Lottery Ticket code), a Python 2 print of a tuple, `('epoch:', 0, 'loss:', 0.71)`.
        Every cell in its place, or none is read."""
        cleaned = [cell.strip("()[]'\" ").rstrip(":=").strip() for cell in cells]
        if len(cleaned) % 2 or len(cleaned) < 4:
            return None
        # (a tuple's quoted names may be phrases, `'\tfinished with reward'`: a Keras PPO
        # loop's `('Episode #', 5800, '\tfinished with reward', -245.07, …)`)
        phrases = line.lstrip().startswith("(") and "'" in line
        values: dict[str, float] = {}
        for name, cell in zip(cleaned[::2], cleaned[1::2], strict=True):
            number = _number(cell) if _CELL.match(cell) else None
            if phrases:
                name = _PHRASE_ENDS.sub("", name.replace("\\t", " "))
            if number is None or name[:1].isdecimal() or not (
                    _NAME_CELL.match(name) or (phrases and _PHRASE.match(name))):
                return None
            values.setdefault(normalise_key(name), number)
        if len(values) < 2 or not self.recurring(line):
            return None
        return split_counters(values, "delimited-pairs")

    def row(self, cells: list[str], sep: str) -> Parsed | None:
        """A row of values: named by the header announced for rows of its width, or, for
        bare numbers, once their shape has come back a few times."""
        key = (sep, len(cells))
        names = self._indexed(key, cells)
        if names is None:
            names = self._take_header(key)
        if names is None and len(cells) > 2 and cells[-1].startswith("(") \
                and _TIME_CELL.match(cells[-1]):
            # A row with the time it took at its end, in brackets, under a header that
            # names no time (fastai v1's `1  1.513021  1.041628  0.507326  (00:13)` under
            # `epoch  train_loss  valid_loss  error_rate`): the named cells before it.
            narrower = self._take_header((sep, len(cells) - 1))
            if narrower is not None:
                cells, names = cells[:-1], narrower
        if names is not None and names[0] in _LABEL_COLUMNS:
            return None  # one class's row of a per-class table, not a loop's record
        if names is None:
            if not all(cells) or self._per_class_row(key):
                return None  # an empty cell (`,9`): not a row of numbers
            last = self._bare_seen.get(key)
            self._bare_seen[key] = self._line_no
            if last is None or self._line_no - last > _BARE_REACH:
                self._bare[key] = 0
                # (where a bare first column began, 0 or 1: its rows before the shape is
                # believed are no records, but they say how the loop counts)
                self._bare_first[key] = int(cells[0]) if cells[0].isdecimal() else None
            self._bare[key] += 1
            self.bare_first = self._bare_first.get(key)
            if self._bare[key] < _BARE_REPEATS:
                return None
            if self._bare[key] == _BARE_REPEATS:
                # The rows before this one were the run's records too, though only now is
                # their shape believed: a log that prints no step counts them (a Torch7
                # `optim.Logger` file's one column, 250 epochs' accuracies, is 250
                # records, not 248).
                self.rows_unread = _BARE_REPEATS - 1
            names = tuple(self._bare_names(cells))
            if sep == "|":
                self._boxed_rows = True
            parsed = self._named(names, cells, "table")
            # (a bare first column is a counter with no name: the loop's, whatever it
            # counts — RWKV-LM's train_log.txt counts epochs, as its config's
            # `max_epochs` says; the parser judges it against the plan)
            return replace(parsed, unnamed=True) \
                if parsed.step is not None and parsed.target is None else parsed
        if sep == "|":
            self._boxed_rows = True
        return self._named(names, cells, "table")

    def _indexed(self, key: tuple[str, int], cells: list[str]) -> tuple[str, ...] | None:
        """A pandas frame printed with its index (`   MAE  RMSE  R-squared` over `0
        9.439865  3.446558  0.112432`): its header right above, one name narrower, the
        index's column unnamed (it counts rows; `_named` passes it by). Nearer than any
        header of the rows' own width further up (a line of words, `Extracting SQL
        semantic features`, is no name of these columns)."""
        if len(cells) <= 2 or not cells[0].isdecimal() or self._per_class_row(key):
            return None
        narrower = self._pending.get((key[0], key[1] - 1))
        if narrower is None or self._line_no - narrower[0] > _INDEX_REACH \
                or narrower[1][0] in _EPOCH_NAMES or narrower[1][0] in _STEP_NAMES \
                or narrower[1][0] in _STEP_COLUMNS or cells[-1].startswith("(") \
                or _TIME_CELL.match(cells[-1]) is not None:
            return None  # (its first column the loop's counter, or the extra cell a time at
            # the end: fastai v1's `(00:13)`, JDE's test table's `2.14s`)
        names = self._headers[key] = ("", *narrower[1])
        self._pending.pop(key, None)  # (the older header of this width names none of them)
        return names

    def _per_class_row(self, key: tuple[str, int]) -> bool:
        """A row under a recent header of per-class measures one name narrower than it:
        the unnamed first column is the class's label (`_PER_CLASS`)."""
        pending = self._pending.get((key[0], key[1] - 1))
        if pending is None:
            return False
        names = set(pending[1])
        # (however far above: a report printed after every epoch prints its header again,
        # and a header repeated many times is read once, `printed_before`; 400 lines on,
        # the classes' rows of BERT-BiLSTM's eighth report counted as steps 0 to 8)
        return names <= _PER_CLASS and ("support" in names or {"precision", "recall"} <= names)

    def bar_row(self, desc: str) -> Parsed | None:
        """The description of a progress bar that is a row of a table (YOLOv5 draws one
        bar per epoch after the row's values)."""
        sep, cells = _split(desc.rstrip(":").strip())
        if len(cells) < 2 or not all(_is_value(c) for c in cells):
            return None
        names = self._take_header((sep, len(cells)))
        if names is None and _COUNTER_CELL.match(cells[0]):
            # No header seen (a pasted piece of the log): the row still leads with its
            # epoch, so the bar after it counts that epoch's batches.
            names = tuple(self._bare_names(cells))
        return self._named(names, cells, "table") if names is not None else None

    def _take_header(self, key: tuple[str, int]) -> tuple[str, ...] | None:
        """The names for rows of this shape: a header of that width printed shortly
        before (a newer one replaces an older: YOLO prints its header every epoch), or
        a wider one whose two-word names make it that width."""
        pending = self._pending.pop(key, None)
        if pending is None:
            pending = self._spaced_header(key)
        if pending is None and key not in self._headers:
            pending = self._header_apart(key)
        if pending is not None and self._line_no - pending[0] <= _HEADER_REACH:
            self._headers[key] = pending[1]
        return self._headers.get(key)

    def _header_apart(self, key: tuple[str, int]) -> tuple[int, tuple[str, ...]] | None:
        """A header of the rows' width whose names are set apart otherwise than their
        cells (a script's `epoch, grad_step, ppl, avg_f1` over rows it writes with tabs,
        `0\t53\t10.2931\t1.2813`): the latest such header, if any."""
        width = key[1]
        found = max(((line_no, names, other) for other, (line_no, names)
                     in self._pending.items() if other[1] == width and other != key),
                    default=None)
        if found is None:
            return None
        del self._pending[found[2]]
        return found[0], found[1]

    def _spaced_header(self, key: tuple[str, int]) -> tuple[int, tuple[str, ...]] | None:
        """A space-separated header whose names are two words (fastai's rendered table:
        `epoch train loss valid loss accuracy`), joined back to one name per column."""
        sep, width = key
        if sep != " ":
            return None
        for (other_sep, other_width), (line_no, words) in list(self._pending.items()):
            if other_sep != " " or other_width <= width:
                continue
            names: list[str] = []
            for word in words:
                if names and names[-1] in _QUALIFIERS:
                    names[-1] = f"{names[-1]}_{word}"
                else:
                    names.append(word)
            if len(names) == width:
                del self._pending[(other_sep, other_width)]
                return line_no, tuple(names)
        return None

    @staticmethod
    def _bare_names(cells: list[str]) -> list[str]:
        names = [f"col{i + 1}" for i in range(len(cells))]
        if len(cells) == 1:
            return [LONE_VALUE]
        if cells[0].isdecimal():
            names[0] = "step"
        elif _COUNTER_CELL.match(cells[0]):
            names[0] = "epoch"  # YOLO's results.txt: `12/299  0.18G  0.079 ...`
        return names

    def _named(self, names: tuple[str, ...], cells: list[str], fmt: str) -> Parsed:
        self.final_row = False
        self.time_left_zero = any(
            _TIME_LEFT.search(name) is not None and _TIME_CELL.match(cell) is not None
            and not any(c in "123456789" for c in cell)
            for name, cell in zip(names, cells, strict=False))
        values: dict[str, float] = {}
        epoch: float | None = None
        epochs: int | None = None
        step: int | None = None
        target: int | None = None
        part_way = False  # a counter inside the epoch short of its total (`160/165`)
        for name, cell in zip(names, cells, strict=False):
            if not cell or not name:
                continue  # (an unnamed column: a pandas frame's index)
            name = _STEP_COLUMNS.get(name, name)
            counter = _COUNTER_CELL.match(cell)
            if counter is not None:
                done, total = int(counter.group(1)), int(counter.group(2))
                if name in _EPOCH_NAMES:
                    epoch, epochs = self._epoch(done, total)
                    # A row is written as its epoch ends: the last epoch's row ends the run.
                    self.final_row = done == total
                else:
                    part_way = part_way or done < total
                    if name in _STEP_NAMES:
                        step, target = done, total
                continue
            number = _number(cell)
            if number is not None:
                values[name] = number
        # (not a row of a batch part way through that epoch: JDE's `29/29  160/165 …`, a
        # row every 40 batches, the last five of the last epoch still to come)
        self.final_row = self.final_row and not part_way
        parsed = split_counters(values, fmt)
        return Parsed(fmt, step if step is not None else parsed.step,
                      target if target is not None else parsed.target,
                      epoch if epoch is not None else parsed.epoch,
                      epochs if epochs is not None else parsed.total_epochs, parsed.metrics)

    def _epoch(self, done: int, total: int) -> tuple[float, int]:
        """An `e/E` epoch cell: logs that count from 0 print the last index (YOLOv5's
        `0/299` of 300 epochs), logs that count from 1 the number of epochs."""
        if self.epoch_base is None or done == 0:
            self.epoch_base = 0 if done == 0 else (self.epoch_base or 1)
        if self.epoch_base == 0:
            return float(done), total + 1
        return float(done - 1), total

    # --- boxed key/value blocks (stable-baselines3) ------------------------------------

    @property
    def box_open(self) -> bool:
        """Whether rows of a boxed block were read and the block not yet closed."""
        return bool(self._box)

    @property
    def box_recurs(self) -> bool:
        """Whether the open block's names are an earlier block's: a table of progress
        printed at every update, not a configuration printed once."""
        return frozenset(self._box) in self._box_shapes

    def _box_line(self, key: str, value: str) -> Parsed | bool | None:
        if not key:
            return None
        if self._box_ended:
            # the last block ended at the lines between: a record if it is a table the
            # run prints again and again (a configuration's is printed once); this row
            # opens the next one
            recurs = self.box_recurs
            closed = self._close_box()
            self._box_line(key, value)
            return closed if recurs else True
        if not value:
            self._section = normalise_key(key).rstrip("/") + "/"
            return True
        number = to_number(value)
        if number is None:
            return True
        name = normalise_key(key)
        if not key.startswith(("/", " ")) and self._section and "/" not in name:
            name = self._section + name
        self._box[name] = number
        return True

    def _close_box(self) -> Parsed | None:
        values, self._box, self._section = self._box, {}, ""
        self._box_ended = self._bare_box = False
        if len(self._box_shapes) < 64:
            self._box_shapes.add(frozenset(values))
        step = _box_counter(values, _BOX_STEPS)
        parsed = split_counters(values, "boxed-table")
        if step is None and parsed.step is None:
            # (the episodes only where nothing else counts: RLCard's Logger prints
            # `episode` beside the evaluation's reward; stable-baselines3's and Baselines'
            # `episodes` stay a figure beside their `total_timesteps` or `steps`)
            step = _box_counter(parsed.metrics, _BOX_EPISODES)
        return Parsed("boxed-table", step if step is not None else parsed.step, parsed.target,
                      parsed.epoch, parsed.total_epochs, parsed.metrics)

    # --- a `nan` no parser placed ----------------------------------------------------

    def recurring(self, line: str) -> bool:
        """Whether this line's template came before (the caller asks once per line, for
        the lines no parser placed): a metric line comes back, a configuration value or
        a remark does not. The spaces between fields are not compared: a column padded
        to its width pads by its value's (`act=125481   err`, `act=88905    err`)."""
        shape = " ".join(template(line).split())
        seen = self._templates.get(shape, 0)
        if len(self._templates) >= _MAX_TEMPLATES:
            self._templates.clear()
            self._first_lines.clear()
        self._templates[shape] = seen + 1
        if seen == 0:
            if len(line) <= _FIRST_LINE_CHARS:
                self._first_lines[shape] = line
            self.first_line = None
        else:
            self.first_line = self._first_lines.pop(shape, None)
        return seen > 0

    def printed_before(self, line: str) -> bool:
        """Whether a line of this template is among the recent lines, or came before in
        the lines asked about (for the rare lines that need it: a `nan` in a line
        without a step). The spaces between fields are not compared: a right-aligned
        field (`loss:    0.78993`, `loss:        inf`) pads by its value's width."""
        shape = template(line).split()
        recent = list(self.recent)[:-1]
        if any(earlier is not line and template(earlier).split() == shape
               for earlier in recent):
            return True
        return self.recurring(line)

    def stray_non_finite(self, line: str) -> dict[str, float]:
        """Non-finite values in a line whose template the run printed before with a
        number where the `nan` stands now: named after the word before them, or
        `value` when none. A one-off line (a config value `max_norm: inf`, a sentence
        quoting `nan`) has no such history and gives nothing."""
        found: dict[str, float] = {}
        shape = template(line)
        slots = [m for m in _VALUE_TOKEN.finditer(line)]
        odd = [i for i, m in enumerate(slots) if NON_FINITE_TOKEN.fullmatch(m.group(0))]
        if not odd:
            return found
        for earlier in list(self.recent)[:-1]:
            if earlier is line or template(earlier) != shape:
                continue
            values = [m.group(0) for m in _VALUE_TOKEN.finditer(earlier)]
            for index in odd:
                match = slots[index]
                if changed_from(line, match.end()):
                    continue  # a best-so-far's starting `inf` (`decreased (inf --> 0.06)`)
                if index < len(values) and NON_FINITE_TOKEN.fullmatch(values[index]) is None:
                    name = name_before(line, match.start()) or f"value{index + 1}"
                    found[name] = to_number(match.group(0)) or math.nan
            if found:
                return found
        return found


# (a class's or a layer's number after the words, `precision class 1 = nan`, is the name's)
_WORD_BEFORE = lazy_re.compile(r"(?<![\w./])([A-Za-z_][\w./]*(?:[ _][A-Za-z_][\w./]*)?"
                               r"(?:[ _]\d{1,3})?)\s?\W{0,3}$")


def name_before(line: str, at: int) -> str | None:
    """The name a value follows (`loss: nan`, `loss nan`, `Loss=nan`), if any."""
    match = _WORD_BEFORE.search(line[max(0, at - 40):at])
    if match is None:
        return None
    name = normalise_key(match.group(1))
    return name if name.rstrip("_0123456789") not in ("step", "iter", "epoch") else None


def _box_counter(values: dict[str, float], names: frozenset[str]) -> int | None:
    """The block's progress by one of these names, taken out of its figures."""
    for name, value in list(values.items()):
        if name.rsplit("/", 1)[-1] in names and math.isfinite(value):
            del values[name]
            return int(value)
    return None


def _grouped(names: tuple[str, ...], header: str, above: str) -> tuple[str, ...]:
    """Names a header gives twice, told apart by the split whose group (in the row above
    it) stands over each (`|---TRAIN---|  |---TEST---|` over `epoch  MAE  <RMSE>  MAE
    <RMSE>`: `mae`, `rmse`, `test_mae`, `test_rmse`); as they were where the row above
    names no split."""
    groups = []  # (centre, the split's prefix) of each group over the header
    for word in _GROUP_WORD.finditer(above):
        prefix = _SPLIT_LABELS.get(word.group(0).lower())
        if prefix is None:
            continue
        start, end = word.span()
        while start > 0 and not above[start - 1].isspace():
            start -= 1
        while end < len(above) and not above[end].isspace():
            end += 1
        groups.append(((start + end) / 2, prefix))
    if len(groups) < 2:
        return names
    repeated = {name for name in names if names.count(name) > 1}
    out, at = [], 0
    for name in names:
        found = header.lower().find(name.strip("_"), at) if name else -1
        if found < 0:
            out.append(name)
            continue
        at = found + len(name)
        if name not in repeated:
            out.append(name)
            continue
        centre = found + len(name) / 2
        prefix = min(groups, key=lambda group: abs(group[0] - centre))[1]
        out.append(f"{prefix}_{name}" if prefix else name)
    return tuple(out)

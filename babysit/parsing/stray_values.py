"""A `nan` that no parser placed, in a line of a shape the run prints with a number
there: a non-finite value all the same (see `shapes.ShapeReader.stray_non_finite`)."""

from __future__ import annotations

import math
from dataclasses import replace

from babysit import lazy_re
from babysit.model import Record
from babysit.parsing.formats import key_values
from babysit.parsing.log_prefix import message
from babysit.parsing.readers import Line, ParseContext
from babysit.parsing.shapes import NON_FINITE_TOKEN, ShapeReader, name_before, template
from babysit.parsing.text import to_number

# Counters are where the run is, not values a `nan` is judged beside.
_COUNTERS = frozenset({"step", "iter", "iteration", "epoch", "global_step"})


# A line of one name and its one figure (`skeleton_left_side=0.5630`), and the header of
# a held-out split's figures (`[Epoch 240] Validation:`).
_LONE = lazy_re.compile(r"^\s*[A-Za-z_][\w.@/ -]{0,60}?\s*[=:]\s*[-+]?[\w.]+\s*$")
_SPLIT_HEADER = lazy_re.compile(r"\b(?:[Vv]alid(?:ation)?|VALID(?:ATION)?|[Ee]val(?:uation)?|"
                                r"EVAL(?:UATION)?|[Tt]est(?:ing)?|TEST|[Dd]ev)\b[^=]{0,40}:\s*$")


# A row of a printed array or matrix: values apart by spaces, commas or semicolons,
# perhaps in brackets.
_ROW_PUNCTUATION = str.maketrans("[](),;", "      ")
_MIN_ROW = 3
_FINITE_CELL = lazy_re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# What a tensor's or an array's repr wraps its values in (PyTorch's `tensor([nan, nan,
# nan, nan], device='cuda:0', requires_grad=True)`, numpy's `array([nan, nan],
# dtype=float32)`, JAX's `Array([nan], dtype=float32)`): not values.
_REPR_PARTS = lazy_re.compile(r"\b(?:tensor|array|Array|DeviceArray|Tensor)(?=\()|"
                              r"\b\w+=(?:'[^']*'|\"[^\"]*\"|[\w.:<>]+)")


class StrayNonFinite:
    """Reads the `nan`s of a line by the shapes the run printed before (its ShapeReader,
    which the parser shares: it notes every line)."""

    def __init__(self, shapes: ShapeReader) -> None:
        self._shapes = shapes

    def wants(self, line: Line) -> bool:
        return line.hints_non_finite and not line.in_traceback

    def amend(self, line: Line, record: Record | None, context: ParseContext) -> Record | None:
        text = line.text
        if NON_FINITE_TOKEN.search(text) is None:
            return record
        if record is not None and any(not math.isfinite(v) for v in record.metrics.values()):
            return record
        found = self._shapes.stray_non_finite(text) or self._all_non_finite(text) \
            or self._repeated_nan(text) or self._nan_beside_figures(text)
        if not found or self._class_row(text, found):
            return record
        line.claimed = True
        if record is None:
            # The line's finite values come with them: what the `nan` is judged beside (a
            # finite loss, a `count: 0` that makes every mean on the line 0/0).
            found = {**{k: v for k, v in key_values(text).items()
                        if math.isfinite(v) and k not in _COUNTERS}, **found}
            return Record(step=context.step, target_steps=context.target, metrics=found,
                          rank=line.rank, fmt="shape")
        return replace(record, metrics={**record.metrics, **found})

    def _class_row(self, text: str, found: dict[str, float]) -> bool:
        """Whether a lone `name=nan` is one class's row of an evaluation's breakdown: under
        a held-out split's header (`[Epoch 240] Validation:`), among rows of one figure
        each (GluonCV's VOC metric, `arrow_down=nan` beside `arrow_up=0.848`, then
        `mAP=0.667`). A class the split holds no example of has no average precision; the
        summary leaves it out. Not a loss, which is never undefined so."""
        if len(found) != 1 or any("loss" in name for name in found) or not _LONE.match(text):
            return False
        for earlier in reversed(list(self._shapes.recent)[:-1]):
            if not _LONE.match(earlier):
                return _SPLIT_HEADER.search(earlier) is not None
        return False

    @staticmethod
    def _nan_beside_figures(text: str) -> dict[str, float]:
        """A NaN given to a name on a line of named figures, beside a finite one (an
        unlearning run's closing `Forget Ability: 0.48404255319148937, Utility: nan`,
        numpy's `Mean of empty slice` warning above it): a figure the run computed as
        NaN, said once. (Only NaN: an `inf` beside figures may be a bound, `grad_norm_max:
        inf, lr: 0.1`.)"""
        if "nan" not in text.lower() or text.count("|") >= 2:
            return {}  # (not a table's row: detectron2's per-category AP, `| bicycle | nan |`)
        values = key_values(text)
        if len(values) < 2 or not any(math.isfinite(v) for v in values.values()):
            return {}
        return {k: v for k, v in values.items() if math.isnan(v) and k not in _COUNTERS}

    def _repeated_nan(self, text: str) -> dict[str, float]:
        """A named value that is NaN on a line the run prints again and again (DL4J's line
        search, `BackTrackLineSearch - tmpStep: NaN` at every step): never a number in
        the log's memory, yet a NaN every time is a value computed as NaN, not a setting
        (a setting is printed once; and an `inf` may be a bound, so only NaN counts)."""
        if "nan" not in text.lower():
            return {}
        shape = template(text).split()
        if not any(template(earlier).split() == shape
                   for earlier in list(self._shapes.recent)[:-1]):
            return {}  # not among the recent lines: said once, so far
        found = {}
        for token in NON_FINITE_TOKEN.finditer(text):
            if token.group(0).lower().lstrip("+-") != "nan" \
                    or not text[:token.start()].rstrip().endswith((":", "=")) \
                    or text[token.end():token.end() + 2].strip()[:1].isalpha():
                continue  # a value given to a name, not a word (`number of nan iterations`)
            name = name_before(text, token.start())
            if name is not None:
                found[name] = math.nan
        return found

    def _all_non_finite(self, text: str) -> dict[str, float]:
        """A printed row of values that are all non-finite (Julia's display of a model's
        output, `2×10 CuArray{Float32,2}:` then `NaN  NaN  NaN …`; numpy's `[nan nan
        nan]`): the model computes NaN, whatever value it is. A row of numbers at least
        half of them (three or more) non-finite is such a row too. Not a row inside an array
        whose other rows are finite (a per-class table's classes absent from a set)."""
        # (behind a logger's head: VITS's `… ljs_base INFO [nan, nan, nan, nan, 1.35, 134.3,
        # 0, 0.0002]`, its four GAN losses NaN at step 0)
        cells = _REPR_PARTS.sub(" ", message(text)).translate(_ROW_PUNCTUATION).split()
        if len(cells) < _MIN_ROW or self._shapes.inside_array():
            return {}
        odd = [c for c in cells if NON_FINITE_TOKEN.fullmatch(c)]
        if len(odd) < len(cells) and (
                len(odd) < _MIN_ROW or 2 * len(odd) < len(cells)
                or not all(_FINITE_CELL.fullmatch(c) for c in cells if c not in odd)):
            # Mostly non-finite, the rest numbers: a logger's row of its counters then
            # its figures (RAFT's `[   100,  0.0000078]        nan,        nan,        nan,
            # nan`: the step and the learning rate, then every metric NaN).
            return {}
        return {"printed_values": to_number(odd[0]) or math.nan}

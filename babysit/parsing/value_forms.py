"""Numbers as other languages and libraries print them, rewritten to the plain spelling
every reader of numbers knows (`0.5`, `nan`, `inf`).

A value's repr may carry more than its digits:

- Julia prints a `Float32` with its exponent after an `f` (`0.5f0`, `1.0f-5`), and its
  non-finite values with their width (`NaN32`, `-Inf32`, `NaN16`); a `Float16` as a call,
  `Float16(0.5)` (Julia's `base/ryu/Ryu.jl` and `show(io, x::Float16)` in `base/float.jl`).
- Flux's Tracker (`Tracker.jl`, `src/lib/real.jl`) shows a tracked scalar as its value
  followed by ` (tracked)`: `loss(x, y) = 0.29602579662457984 (tracked)`.

An array in a value's place whose every element is non-finite (a model's output gone
NaN, `model(x) = Float32[NaN, NaN] (tracked)`) is that value: its one non-finite value
stands for it. An array with any finite element is left as it is (per-class figures with
a NaN for a class absent from the batch are routine).

Read as they stand, `0.5f0` is no number, `NaN32` no NaN (a run whose loss went NaN said
nothing), and `(tracked)` breaks a line of fields. Rewritten once, as the line is
cleaned, every format, template and non-finite reader sees one spelling.
"""

from __future__ import annotations

import re

from babysit import lazy_re

# `0.5f0`, `-1.25f-5`: a Julia Float32, mantissa `f` exponent (Julia always shows its
# point, so a hash's `3f20` is left alone).
_FLOAT32 = lazy_re.compile(r"(?<![\w.])([-+]?\d+\.\d*)f([-+]?\d+)(?![\w.])")
# `NaN32`, `-Inf16`, `Inf64`: Julia's non-finite values of a given width.
_SIZED_NON_FINITE = lazy_re.compile(r"(?<![\w.])([-+]?)(NaN|Inf)(?:16|32|64)(?![\w.])")
# `Float16(0.5)`, `Float32(NaN)`: a value shown as a call of its type.
_TYPE_CALL = lazy_re.compile(r"(?<![\w.])Float(?:16|32|64)\(\s*([-+]?[\w.]+)\s*\)")
# Tracker's mark after a tracked value (a scalar's, or an array's bracket).
_TRACKED = lazy_re.compile(r"(?<=[\w.\]])\s+\(tracked\)")
# An array in a value's place whose every element is non-finite, with its element type
# or none: Julia's `Float32[NaN, NaN]`, `[NaN NaN; NaN NaN]`, numpy's `[nan nan]`.
_NON_FINITE_ARRAY = lazy_re.compile(
    r"(?P<slot>[=:]\s*)(?:[A-Z]\w*(?:\{[^{}]*\})?)?\[\s*"
    r"(?P<first>[-+]?(?:nan|inf)\w*)(?:[\s,;]+[-+]?(?:nan|inf)\w*)*\s*\]",
    re.IGNORECASE)


def plain_numbers(text: str) -> str:
    """`text` with Julia's Float32 / Float16 spellings and Tracker's `(tracked)` mark
    rewritten as plain numbers (the very same string when it has none). Substring tests
    first: this runs at every line, and almost none has any of them."""
    if "(tracked)" in text:
        text = _TRACKED.sub("", text)
    if "NaN" in text or "Inf" in text:
        text = _SIZED_NON_FINITE.sub(r"\1\2", text)
    if "[" in text and ("nan" in text or "NaN" in text or "inf" in text or "Inf" in text):
        text = _NON_FINITE_ARRAY.sub(r"\g<slot>\g<first>", text)
    if "Float" in text:
        text = _TYPE_CALL.sub(r"\1", text)
    if "f0" in text or "f-" in text or "f1" in text:
        text = _FLOAT32.sub(r"\1e\2", text)
    return text

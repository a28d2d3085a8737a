"""Whatever text arrives, the parser returns records or nothing; it never raises."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from babysit.parsing.parser import LogParser

_PIECES = st.sampled_from([
    "step", "loss", "=", ":", "nan", "inf", "-", "1e-4", "2.5", "|", "%|", "/", "[", "]",
    "{'", "'", "}", '{"', '"', "Traceback (most recent call last):", "Error: x", "Epoch",
    "━", "it/s", "\x1b[31m", "[rank1]: ", " ", "\t", "12", "/100", "iteration", "Killed",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), st.lists(_PIECES, max_size=12).map("".join)),
                max_size=30))
def test_parser_never_raises_on_arbitrary_lines(lines: list[str]):
    parser = LogParser()
    for line in lines:
        record = parser.feed(line)
        if record is not None and record.step is not None:
            assert isinstance(record.step, int)


_JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["step", "loss", "lr", "train", "x", "_step"]),
                                _JSON, max_size=5), max_size=10))
def test_json_lines_of_any_shape_never_crash_the_parser(objects: list[dict]):
    import json

    parser = LogParser()
    for obj in objects:
        parser.feed(json.dumps(obj))
        parser.feed("{'" + json.dumps(obj)[2:])  # the same, shaped like a HF dict

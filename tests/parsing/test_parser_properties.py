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

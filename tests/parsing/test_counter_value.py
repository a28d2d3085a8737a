"""A step counter and one number per line (see `parsing.counter_value`), in the shape the
makemore-style loops print, with made-up values."""

from __future__ import annotations

import pytest

from babysit.parsing.counter_value import parse_counter_value


def test_the_counter_gives_the_step_and_the_plan():
    parsed = parse_counter_value("  30000/ 120000: 2.4411")
    assert parsed is not None
    assert (parsed.step, parsed.target, parsed.metrics) == (30000, 120000, {"value": 2.4411})


@pytest.mark.parametrize("line", [
    "12/10: 0.5",  # past its total
    "3/4: 0.5 loss",  # more than one figure
    "Epoch 3/4: 0.5",  # words before the counter: another parser's
    "10:30: 0.5",
])
def test_other_lines(line: str):
    assert parse_counter_value(line) is None

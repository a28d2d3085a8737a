"""NaN and infinity as every platform prints them (issue 23): the old Microsoft C
runtime's `1.#QNAN`, `-1.#IND`, `1.#INF`, the UCRT's `-nan(ind)`, Julia's `NaN32`."""

from __future__ import annotations

import math

import pytest

from babysit.parsing.parser import LogParser
from babysit.parsing.text import clean, to_number


@pytest.mark.parametrize(("token", "expected"), [
    ("1.#QNAN", math.nan), ("-1.#IND00", math.nan), ("1.#SNAN0", math.nan),
    ("-nan(ind)", math.nan), ("nan(snan)", math.nan), ("NaN32", math.nan),
    ("1.#INF00", math.inf), ("-1.#INF", -math.inf), ("-Inf32", -math.inf),
])
def test_a_platform_s_spelling_is_read(token: str, expected: float) -> None:
    value = to_number(token)
    assert value is not None
    assert (math.isnan(value) and math.isnan(expected)) or value == expected


def test_lines_are_cleaned_to_one_spelling() -> None:
    assert clean("loss = -1.#IND000; acc = 0.5") == "loss = nan; acc = 0.5"
    assert clean("cost: -nan(ind) grad: 1.#INF") == "cost: nan grad: inf"
    assert clean("issue #1.#2 and C# 1.5") == "issue #1.#2 and C# 1.5"  # not numbers


def test_a_windows_nan_in_a_metric_line_is_a_nan_loss() -> None:
    parser = LogParser()
    records = [parser.feed(f"Iter {i}: TrainLoss = {v}; Err = 0.4") for i, v in
               ((10, "2.31"), (20, "2.05"), (30, "1.#QNAN0"))]
    last = records[-1]
    assert last is not None and math.isnan(last.metrics["train_loss"])


def test_a_right_aligned_inf_keeps_its_line_s_shape() -> None:
    parser = LogParser()
    lines = [f"round: {n:4d} | loss: {v:>10} | wer: 12.5" for n, v in
             ((1, "0.81234"), (2, "0.80112"), (3, "inf"))]
    records = [parser.feed(line) for line in lines]
    last = records[-1]
    assert last is not None and last.metrics.get("loss") == math.inf

"""Whatever text arrives, the parser returns records or nothing; it never raises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from babysit.parsing.parser import LogParser

_PIECES = st.sampled_from([
    "step", "loss", "=", ":", "nan", "inf", "-", "1e-4", "2.5", "|", "%|", "/", "[", "]",
    "{'", "'", "}", '{"', '"', "Traceback (most recent call last):", "Error: x", "Epoch",
    "━", "it/s", "\x1b[31m", "[rank1]: ", " ", "\t", "12", "/100", "iteration", "Killed",
])


@settings(max_examples=150, deadline=None)
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


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["step", "loss", "lr", "train", "x", "_step"]),
                                _JSON, max_size=5), max_size=10))
def test_json_lines_of_any_shape_never_crash_the_parser(objects: list[dict]):
    import json

    parser = LogParser()
    for obj in objects:
        parser.feed(json.dumps(obj))
        parser.feed("{'" + json.dumps(obj)[2:])  # the same, shaped like a HF dict


def test_json_nested_thousands_deep_or_with_huge_integers_is_skipped_not_fatal():
    parser = LogParser()
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    huge = '{"step": 3, "loss": ' + "9" * 400 + "}"
    assert parser.feed(deep) is None
    record = parser.feed(huge)
    assert record is not None and record.step == 3 and "loss" not in record.metrics
    after = parser.feed('{"step": 4, "loss": 1.5}')
    assert after is not None and after.metrics == {"loss": 1.5}  # steps already read stay


_FRAMEWORK_PIECES = st.sampled_from([
    "| epoch 001 | loss 2.3 | num_updates 10 |", "Epoch(train) [1][ 50/100] loss: 0.5",
    "Train: 3 [ 240/2502 ( 10%)]  Loss: 3.36 (3.48)", "[step=2/739328,epoch=0]",
    "{| Epoch: 55/167 (996/1926) | Loss: 0.29 | Step: 425k | }", "Epoch: [34][3670/4999]",
    "[Iteration 45459]", "[Rank 0] step=10, skipped=6, lr=[1e-05]", "OVERFLOW! Rank 0 "
    "Skipping step. Attempted loss scale: 1, reducing to 1", "*** JOB 1 ON n CANCELLED AT x ***",
    "Received 1 death signal, shutting down workers", "Epoch 0/-2 ━━━ 5/-- ", "#015",
    "[1,mpirank:0,algo-1]<stdout>:", "Saving checkpoint to out/c", "Exception during training:",
    "    153/200      9.87G     0.46     0.23", "global step 400000:", "Worker group FAILED. 3/3",
])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=120),
                          st.lists(st.one_of(_PIECES, _FRAMEWORK_PIECES), max_size=10)
                          .map(lambda parts: "".join(parts).encode())), max_size=40))
def test_bytes_of_any_kind_through_reading_parsing_and_the_rules_never_raise(chunks):
    """Arbitrary bytes, cut anywhere, through the line splitter, the parser and the
    run's rules, then the end of input: nothing escapes."""
    from babysit.config import RuleSettings
    from babysit.core.run import Run
    from babysit.reading.lines import LineSplitter

    splitter, parser = LineSplitter(max_line=256), LogParser()
    run = Run(RuleSettings(), None, 0.0)
    for chunk in chunks:
        run.absorb(parser.feed_lines(splitter.feed(chunk + b"\n" if len(chunk) % 3 else chunk)))
    run.absorb(parser.feed_lines(splitter.flush()))
    run.absorb(parser.finish())
    for anomaly in run.ledger.anomalies:
        assert anomaly.description


@pytest.mark.parametrize("line", ["²\n0", "² 0 1", "³ loss 0.5", "step ² loss=1.0",
                                  "⁵/10 loss=0.3", "١٢ 0.5 0.7"])
def test_digits_int_refuses_never_raise(line: str):
    """`str.isdigit` says yes to superscripts (`²`) that `int` refuses (Hypothesis found
    `²\\n0` crashing the counter-row reader in CI): a guard before `int` asks `isdecimal`."""
    parser = LogParser()
    for part in (line, line, line):
        parser.feed(part)
    parser.finish()

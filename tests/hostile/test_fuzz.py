"""Fuzzing: 10,000+ generated inputs — log bytes, JSON lines, config files, previous
verdict files — and no exception escapes. (Hypothesis, in CI on every run; the
examples are small so the whole file takes a few seconds.)"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babysit.config import ConfigError, RuleSettings, Settings, load_settings
from babysit.core.run import Run
from babysit.core.session import _already_reported
from babysit.parsing.parser import LogParser
from babysit.reading.lines import LineSplitter

_WORDS = st.sampled_from([
    b"step", b" ", b"=", b":", b"loss", b"nan", b"inf", b"1e308", b"-1", b"9" * 40, b"/",
    b"|", b"%|", b"[", b"]", b"{", b"}", b"'", b'"', b"\r", b"\n", b"\x00", b"\xff\xfe",
    b"Traceback (most recent call last):", b"Error: x", b"Epoch", b"\xe2\x94\x81",
    b"[rank3]: ", b"Killed", b"Saving checkpoint to a/b", b"Training finished",
    b"OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1",
    b"*** JOB 1 ON n CANCELLED AT t ***", b"Worker group FAILED. 3/3 attempts left; will "
    b"restart", b"\x1b[31m", b"#015", b"Epoch(train) [1][5/9] loss: ", b"num_updates",
])
_LOG = st.lists(st.one_of(st.binary(max_size=64), st.lists(_WORDS, max_size=14).map(b"".join)),
                max_size=20)
_JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from([10**400, -(10**400)])
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=10)
def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# 3,000 + 1,600 + 3,000 + 2,600 = 10,200 cases on every CI run.


@fuzz(3000)
@given(_LOG)
def test_fuzz_log_bytes(chunks: list[bytes]):
    splitter, parser = LineSplitter(max_line=512), LogParser()
    run = Run(RuleSettings(), None, 0.0)
    for chunk in chunks:
        run.absorb(parser.feed_lines(splitter.feed(chunk)))
    run.absorb(parser.feed_lines(splitter.flush()))
    run.absorb(parser.finish())


@fuzz(1600)
@given(st.lists(_JSON, max_size=6))
def test_fuzz_json_lines(values: list[object]):
    parser = LogParser()
    for value in values:
        text = json.dumps(value, allow_nan=True)
        parser.feed(text)
        parser.feed('{"step": 1, "m": ' + text + "}")


_TOML_VALUE = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(
        lambda f: {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(f), repr(f))),
    st.text(max_size=10).map(json.dumps), st.sampled_from(["true", "[1, 2]", "{a = 1}", '"x"']))
_TOML = st.lists(st.tuples(st.sampled_from(["poll", "rules", "notify", "other", "tool"]),
                           st.sampled_from(["interval", "max_interval", "spike_k",
                                            "divergence_steps", "severity", "urls", "x",
                                            "max_polls", "stall_polls", "schedule"]),
                           _TOML_VALUE), max_size=5)


_SCRATCH = Path(tempfile.mkdtemp(prefix="babysit-fuzz-"))


@fuzz(3000)
@given(st.one_of(_TOML.map(lambda rows: "\n".join(f"[{t}]\n{k} = {v}" for t, k, v in rows)),
                 st.binary(max_size=80).map(lambda b: b.decode("latin-1"))))
def test_fuzz_config_files(text: str):
    directory = _SCRATCH
    (directory / "babysit.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        loaded = load_settings(directory, env={})
    except ConfigError:
        return  # refused with a message: the outcome a bad file should have
    assert isinstance(loaded, Settings)
    assert 0.1 <= loaded.poll.interval <= 86400


@fuzz(2600)
@given(st.one_of(_JSON.map(lambda v: json.dumps(v, allow_nan=True)),
                 st.fixed_dictionaries({"target": st.just("t.log"),
                                        "anomalies_detected": _JSON}).map(json.dumps),
                 st.binary(max_size=60).map(lambda b: b.decode("latin-1"))))
def test_fuzz_previous_verdict_files(text: str):
    directory = _SCRATCH
    (directory / "babysit-training.json").write_text(text, encoding="utf-8",
                                                     errors="surrogateescape")
    seen = _already_reported(Settings(out_dir=directory), "t.log")
    assert all(isinstance(kind, str) and (step is None or isinstance(step, int))
               for kind, step in seen)

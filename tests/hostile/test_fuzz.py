"""Fuzzing: 10,000+ generated inputs — log bytes, JSON lines, config files, previous
verdict files — and no exception escapes. Each input kind gets a Hypothesis test (which
shrinks what it finds to a small case) and a seeded random sweep of 2,500 cases from the
same vocabulary (cheap per case, so the bulk of the count costs seconds, not minutes).
A failing sweep case names its seed and index, so it can be replayed."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babysit.config import ConfigError, RuleSettings, Settings, load_settings
from babysit.core.run import Run
from babysit.core.session import _already_reported
from babysit.parsing.parser import LogParser
from babysit.reading.lines import LineSplitter

_WORD_LIST = [
    b"step", b" ", b"=", b":", b"loss", b"nan", b"inf", b"1e308", b"-1", b"9" * 40, b"/",
    b"|", b"%|", b"[", b"]", b"{", b"}", b"'", b'"', b"\r", b"\n", b"\x00", b"\xff\xfe",
    b"Traceback (most recent call last):", b"Error: x", b"Epoch", b"\xe2\x94\x81",
    b"[rank3]: ", b"Killed", b"Saving checkpoint to a/b", b"Training finished",
    b"OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1",
    b"*** JOB 1 ON n CANCELLED AT t ***", b"Worker group FAILED. 3/3 attempts left; will "
    b"restart", b"\x1b[31m", b"#015", b"Epoch(train) [1][5/9] loss: ", b"num_updates",
]
_WORDS = st.sampled_from(_WORD_LIST)
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


# Per kind: 250 Hypothesis examples + 2,500 sweep cases; 11,000 cases on every CI run.
_EXAMPLES = 250
_SWEEP = 2500
_SEED = 20261130


@fuzz(_EXAMPLES)
@given(_LOG)
def test_fuzz_log_bytes(chunks: list[bytes]):
    feed_log(chunks)


def feed_log(chunks: list[bytes]) -> None:
    splitter, parser = LineSplitter(max_line=512), LogParser()
    run = Run(RuleSettings(), None, 0.0)
    for chunk in chunks:
        run.absorb(parser.feed_lines(splitter.feed(chunk)))
    run.absorb(parser.feed_lines(splitter.flush()))
    run.absorb(parser.finish())


@fuzz(_EXAMPLES)
@given(st.lists(_JSON, max_size=6))
def test_fuzz_json_lines(values: list[object]):
    feed_json(values)


def feed_json(values: list[object]) -> None:
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


@fuzz(_EXAMPLES)
@given(st.one_of(_TOML.map(lambda rows: "\n".join(f"[{t}]\n{k} = {v}" for t, k, v in rows)),
                 st.binary(max_size=80).map(lambda b: b.decode("latin-1"))))
def test_fuzz_config_files(text: str):
    load_config(text)


def load_config(text: str) -> None:
    directory = _SCRATCH
    (directory / "babysit.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        loaded = load_settings(directory, env={})
    except ConfigError:
        return  # refused with a message: the outcome a bad file should have
    assert isinstance(loaded, Settings)
    assert 0.1 <= loaded.poll.interval <= 86400


@fuzz(_EXAMPLES)
@given(st.one_of(_JSON.map(lambda v: json.dumps(v, allow_nan=True)),
                 st.fixed_dictionaries({"target": st.just("t.log"),
                                        "anomalies_detected": _JSON}).map(json.dumps),
                 st.binary(max_size=60).map(lambda b: b.decode("latin-1"))))
def test_fuzz_previous_verdict_files(text: str):
    read_previous(text)


def read_previous(text: str) -> None:
    directory = _SCRATCH
    (directory / "babysit-training.json").write_text(text, encoding="utf-8",
                                                     errors="surrogateescape")
    seen = _already_reported(Settings(out_dir=directory), "t.log")
    assert all(isinstance(kind, str) and (step is None or isinstance(step, int))
               for kind, step in seen)


# --- the seeded sweeps -------------------------------------------------------------------

_KEYS = ["step", "loss", "eval_loss", "lr", "grad_norm", "epoch", "", "a.b", "_step", "ÿ"]


def _random_json(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth >= 3 or roll < 0.5:
        return rng.choice([None, True, False, rng.uniform(-1e308, 1e308), float("nan"),
                           float("inf"), -float("inf"), rng.randint(-(2**70), 2**70),
                           10**400, "", "nan", rng.randbytes(6).decode("latin-1")])
    if roll < 0.75:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(_KEYS): _random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _random_toml(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.randbytes(rng.randint(0, 80)).decode("latin-1")
    rows = []
    for _ in range(rng.randint(0, 5)):
        table = rng.choice(["poll", "rules", "notify", "other", "tool"])
        key = rng.choice(["interval", "max_interval", "spike_k", "divergence_steps", "severity",
                          "urls", "x", "max_polls", "stall_polls", "schedule"])
        value = rng.choice([str(rng.randint(-(10**30), 10**30)), repr(rng.uniform(-1e9, 1e9)),
                            "nan", "inf", "-inf", '"x"', "true", "[1, 2]", "{a = 1}",
                            json.dumps(rng.randbytes(4).decode("latin-1"))])
        rows.append(f"[{table}]\n{key} = {value}")
    return "\n".join(rows)


def _random_previous(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return rng.randbytes(rng.randint(0, 60)).decode("latin-1")
    if roll < 0.6:
        return json.dumps(_random_json(rng))
    return json.dumps({"target": "t.log", "anomalies_detected": _random_json(rng)})


def _random_log(rng: random.Random) -> list[bytes]:
    return [rng.randbytes(rng.randint(0, 64)) if rng.random() < 0.3
            else b"".join(rng.choices(_WORD_LIST, k=rng.randint(0, 14)))
            for _ in range(rng.randint(0, 20))]


_SWEEPS = {
    "log bytes": (_random_log, feed_log),
    "json lines": (lambda rng: [_random_json(rng) for _ in range(rng.randint(0, 6))],
                   feed_json),
    "config files": (_random_toml, load_config),
    "previous verdicts": (_random_previous, read_previous),
}


@pytest.mark.parametrize("kind", sorted(_SWEEPS))
def test_seeded_sweep_never_raises(kind: str):
    make, check = _SWEEPS[kind]
    rng = random.Random(f"{_SEED}-{kind}")
    for index in range(_SWEEP):
        case = make(rng)
        try:
            check(case)
        except Exception as error:
            raise AssertionError(f"{kind} case {index} (seed {_SEED}): {case!r}") from error

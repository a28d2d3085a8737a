"""Fuzzing: 10,000+ generated inputs — log bytes, JSON lines, config files (babysit.toml
and pyproject.toml), previous verdict files, TensorBoard event files, profiler traces,
dashboard session files — and no exception escapes. Each input kind gets a Hypothesis test (which
shrinks what it finds to a small case) and a seeded random sweep of 2,500 cases from the
same vocabulary (cheap per case, so the bulk of the count costs seconds, not minutes).
A failing sweep case names its seed and index, so it can be replayed."""

from __future__ import annotations

import gzip
import json
import os
import random
import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babysit.config import ConfigError, RuleSettings, Settings, load_settings
from babysit.core.run import Run
from babysit.core.session import _already_reported, _previous_verdict, _proposals_shown
from babysit.efficiency.trace import summarize_file
from babysit.efficiency.trace_load import TraceError
from babysit.efficiency.trace_report import render_lines, summary_to_dict
from babysit.parsing.parser import LogParser
from babysit.reading.lines import LineSplitter
from babysit.safe_files import ensure_private_dir
from babysit.serve import registry
from babysit.serve.api import metrics_document
from babysit.targets.base import TargetError, TargetUnavailable

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


# Per kind: 250 Hypothesis examples + 2,500 sweep cases (600-800 for the kinds that write a
# file and open a target per case); 15,000 cases on every CI run.
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
    st.text(max_size=10).map(json.dumps), st.sampled_from(["true", "[1, 2]", "{a = 1}", '"x"']),
    st.sampled_from([1, 40, 5000]).map(lambda n: "[" * n + "]" * n), st.just("9" * 5000))
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
    previous = _previous_verdict(Settings(out_dir=directory), "t.log")
    seen = _already_reported(previous)
    assert all(isinstance(kind, str) and (step is None or isinstance(step, int))
               for kind, step in seen)
    assert all(isinstance(head, str) for head in _proposals_shown(previous))


# --- pyproject.toml: [tool.babysit] and what may stand in its place -----------------------

def _random_pyproject(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.25:
        return "tool = " + rng.choice(['"x"', "1", "[1]", "[[[[]]]]", "true"]) + "\n"
    if roll < 0.45:
        return "[tool]\nbabysit = " + rng.choice(['"x"', "2", "[]", "{poll = 1}"]) + "\n"
    return _random_toml(rng).replace("[poll]", "[tool.babysit.poll]").replace(
        "[rules]", "[tool.babysit.rules]").replace("[tool]", "[tool.other]")


def load_pyproject(text: str) -> None:
    directory = _SCRATCH / "pyproject"
    directory.mkdir(exist_ok=True)
    (directory / "pyproject.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        loaded = load_settings(directory, env={})
    except ConfigError as error:
        assert len(str(error)) < 2000  # one readable line, not a 5,000-deep repr
        return
    assert isinstance(loaded, Settings)


@fuzz(_EXAMPLES)
@given(st.randoms(use_true_random=False))
def test_fuzz_pyproject_files(rng: random.Random):
    load_pyproject(_random_pyproject(rng))


# --- TensorBoard event files: framing, checksums, lengths, protobufs ----------------------

def _header(length: int, good: bool = True) -> bytes:
    from babysit.targets.tensorboard.framing import masked_crc32c

    field = struct.pack("<Q", length)
    crc = masked_crc32c(field) if good else 0
    return field + struct.pack("<I", crc)


def _random_event(rng: random.Random) -> bytes:
    try:
        from tensorboard.compat.proto.event_pb2 import Event
    except ImportError:
        return rng.randbytes(rng.randint(0, 40))
    event = Event(step=rng.choice([0, 1, 7, rng.randint(-(2**63), 2**63 - 1)]),
                  wall_time=rng.choice([0.0, 1.7e9, float("nan"), float("inf"), -1e308]))
    if rng.random() < 0.1:
        event.file_version = "brain.Event:2"
        return bytes(event.SerializeToString())
    for _ in range(rng.randint(0, 3)):
        value = event.summary.value.add()
        value.tag = rng.choice(["loss", "train/loss", "eval/loss", "lr", "\x1b]52;c;x\x07",
                                "", "a" * 300, "Loss/val", "grad_norm"])
        if rng.random() < 0.5:
            value.simple_value = rng.choice([1.0, float("nan"), float("inf"), -0.0, 3e38])
            continue
        if rng.random() < 0.3:
            value.metadata.plugin_data.plugin_name = rng.choice(["scalars", "histograms", ""])
        tensor = value.tensor
        tensor.dtype = rng.randint(0, 30)
        for _ in range(rng.randint(0, 3)):
            tensor.tensor_shape.dim.add(size=rng.choice([0, 1, 2, -1, 2**40]))
        if rng.random() < 0.5:
            tensor.tensor_content = rng.randbytes(rng.choice([0, 1, 2, 4, 8, 16]))
        else:
            tensor.float_val.extend([rng.uniform(-1, 1)] * rng.randint(0, 2))
            tensor.half_val.extend([rng.randint(0, 2**31 - 1)] * rng.randint(0, 1))
    data = bytes(event.SerializeToString())
    if rng.random() < 0.1 and data:
        position = rng.randrange(len(data))
        data = data[:position] + bytes([rng.randint(0, 255)]) + data[position + 1:]
    return data


def _random_tfrecords(rng: random.Random) -> bytes:
    from babysit.targets.tensorboard.framing import masked_crc32c

    parts = []
    for _ in range(rng.randint(0, 8)):
        roll = rng.random()
        if roll < 0.1:
            parts.append(rng.randbytes(rng.randint(0, 40)))
        elif roll < 0.2:  # a length field claiming far more than follows
            parts.append(_header(rng.choice([2**30 - 1, 2**30 + 1, 2**63, 17 << 20, 99])))
        else:
            data = _random_event(rng)
            footer = struct.pack("<I", masked_crc32c(data) if rng.random() < 0.9 else 1)
            record = _header(len(data), good=rng.random() < 0.95) + data + footer
            parts.append(record[:rng.randint(0, len(record))] if rng.random() < 0.05
                         else record)
    return b"".join(parts)


def read_tensorboard(data: bytes) -> None:
    pytest.importorskip("tensorboard")
    from babysit.targets.tensorboard.events import TensorBoardTarget

    directory = _SCRATCH / "tensorboard"
    directory.mkdir(exist_ok=True)
    (directory / "events.out.tfevents.1.fuzz").write_bytes(data)
    try:
        target = TensorBoardTarget(directory)
    except TargetError:
        return  # refused at start with a message
    for _ in range(2):
        try:
            snapshot = target.poll()
        except TargetUnavailable:
            return
        assert all(isinstance(v, float) for r in snapshot.log.records for v in r.metrics.values())
        with (directory / "events.out.tfevents.1.fuzz").open("ab") as handle:
            handle.write(data[: len(data) // 2])


@fuzz(_EXAMPLES)
@given(st.randoms(use_true_random=False))
def test_fuzz_tensorboard_files(rng: random.Random):
    read_tensorboard(_random_tfrecords(rng))


# --- profiler traces ------------------------------------------------------------------------

def _random_trace_event(rng: random.Random) -> object:
    if rng.random() < 0.1:
        return _random_json(rng)
    number = [rng.uniform(-1e6, 1e6), rng.randint(0, 10**6), "12.5", "9" * 400, -1,
              float("nan"), None, [], 10**30, True]
    return {key: value for key, value in {
        "ph": rng.choice(["X", "M", "i", "B", None, 1]),
        "cat": rng.choice(["kernel", "Kernel", "gpu_memcpy", "cpu_op", "user_annotation", "",
                           None, ["x"]]),
        "name": rng.choice(["perf::step", "ProfilerStep#3", "gemm", "process_labels", "",
                            "\x1b[2J", None, 5]),
        "pid": rng.choice([0, 1, "0", None, {"a": 1}, 2**70]),
        "ts": rng.choice(number), "dur": rng.choice(number),
        "args": rng.choice([None, {"labels": "GPU 0"}, {"labels": 3}, []]),
    }.items() if rng.random() < 0.9}


def _random_trace(rng: random.Random) -> bytes:
    events = [_random_trace_event(rng) for _ in range(rng.randint(0, 12))]
    roll = rng.random()
    if roll < 0.1:
        return rng.randbytes(rng.randint(0, 80))
    text = json.dumps(events if roll < 0.3 else
                      {"schemaVersion": 1, "deviceProperties": [{"id": 0}],
                       "traceEvents": events, "traceName": "x"}, allow_nan=True)
    if rng.random() < 0.1:
        text = text.replace("1", "9" * rng.choice([30, 400, 5000]), 1)
    if rng.random() < 0.1:
        text = text[: rng.randint(0, len(text))]
    data = text.encode()
    return gzip.compress(data, mtime=0) if rng.random() < 0.3 else data


def read_trace(data: bytes) -> None:
    path = _SCRATCH / "trace.json"
    path.write_bytes(data)
    try:
        summary = summarize_file(path, top=3)
    except TraceError as error:
        assert "\n" not in str(error) and str(error).startswith(str(path))
        return
    json.dumps(summary_to_dict(summary, str(path)))
    assert all("\n" not in line for line in render_lines(summary, str(path)))


@fuzz(_EXAMPLES)
@given(st.randoms(use_true_random=False))
def test_fuzz_profiler_traces(rng: random.Random):
    read_trace(_random_trace(rng))


# --- dashboard session files --------------------------------------------------------------

def _random_session(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.15:
        return rng.randbytes(rng.randint(0, 80))
    if roll < 0.25:
        depth = rng.choice([10, 1000, 100_000])
        return ("[" * depth + "]" * depth).encode()
    entry = {"babysit_pid": rng.choice([os.getpid()] * 4 + [1, -1, "x", None]),
             "started_at": _random_json(rng),
             "url": rng.choice(["javascript:alert(1)", "https://wandb.ai/a/b", None, 3,
                                "http://127.0.0.1:1/", "data:x", " http://x"]),
             "series": _random_json(rng), "latest": _random_json(rng)}
    return json.dumps(entry if rng.random() < 0.9 else [entry], allow_nan=True).encode()


def read_session(data: bytes) -> None:
    directory = ensure_private_dir(_SCRATCH / "runtime")
    path = directory / f"session-{os.getpid()}.json"
    path.write_bytes(data)
    path.chmod(0o600)
    document = metrics_document(registry.collect(directory))
    json.dumps(document, allow_nan=False)  # what the server sends: strict JSON
    for run in document["runs"]:
        assert run["url"] is None or str(run["url"]).startswith(("http://", "https://"))


@fuzz(_EXAMPLES)
@given(st.randoms(use_true_random=False))
def test_fuzz_session_files(rng: random.Random):
    read_session(_random_session(rng))


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
        depth = rng.choice([1, 40, 5000])
        value = rng.choice([str(rng.randint(-(10**30), 10**30)), repr(rng.uniform(-1e9, 1e9)),
                            "nan", "inf", "-inf", '"x"', "true", "[1, 2]", "{a = 1}",
                            json.dumps(rng.randbytes(4).decode("latin-1")),
                            "[" * depth + "]" * depth, "9" * 5000])
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


_SWEEPS: dict[str, tuple[Any, Any]] = {
    "log bytes": (_random_log, feed_log),
    "json lines": (lambda rng: [_random_json(rng) for _ in range(rng.randint(0, 6))],
                   feed_json),
    "config files": (_random_toml, load_config),
    "pyproject files": (_random_pyproject, load_pyproject),
    "previous verdicts": (_random_previous, read_previous),
    "tensorboard files": (_random_tfrecords, read_tensorboard),
    "profiler traces": (_random_trace, read_trace),
    "session files": (_random_session, read_session),
}
# Cases that write and read a real file and open a target cost more: fewer of them.
_SWEEP_COUNTS = {"tensorboard files": 600, "profiler traces": 800, "session files": 800,
                 "pyproject files": 800}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(_SWEEPS))
def test_seeded_sweep_never_raises(kind: str):
    """Thousands of seeded garbage inputs of each kind through its reader; the log and
    JSON sweeps take each case through the parser and the rules (10-30 s each)."""
    make, check = _SWEEPS[kind]
    rng = random.Random(f"{_SEED}-{kind}")
    for index in range(_SWEEP_COUNTS.get(kind, _SWEEP)):
        case = make(rng)
        try:
            check(case)
        except Exception as error:
            raise AssertionError(f"{kind} case {index} (seed {_SEED}): {case!r}") from error

"""Every input bounded, second pass: traces with absurd numbers, gzip bombs, FIFOs and
devices where a file belongs, more events than a summary needs, outputs that are device
nodes. Each ends in one clear line and a documented exit code, at once."""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import zlib
from pathlib import Path

import pytest

from babysit.config import ConfigError, load_settings
from babysit.efficiency import trace_load
from babysit.efficiency.trace import summarize_file
from babysit.efficiency.trace_load import TraceError
from tests.efficiency.test_trace import babysit, kernel, step, write_trace


def one_error_line(done: object, code: int, says: str) -> None:
    stderr = done.stderr  # type: ignore[attr-defined]
    assert done.returncode == code, stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr and says in " ".join(stderr.replace("│", " ").split())


@pytest.mark.parametrize("digits", [400, 5000])
def test_timestamps_of_thousands_of_digits_are_skipped_not_a_crash(tmp_path: Path,
                                                                   digits: int):
    huge = "9" * digits
    text = json.dumps({"traceEvents": [step(0, 100), kernel(0, 50)]})
    text = text[:-2] + f', {{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, ' \
        f'"ts": {huge}, "dur": 1}}, {{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, ' \
        f'"ts": 1, "dur": "{huge}.5"}}]}}'
    (tmp_path / "t.json").write_text(text)
    done = babysit("trace", "t.json", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["devices"][0]["busy_fraction"] == 0.5 and summary["skipped_events"] == 2


@pytest.mark.parametrize("make", ["fifo", "dev-zero", "directory"])
def test_a_trace_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, make: str):
    if make == "fifo":
        os.mkfifo(tmp_path / "t.json")
        name = "t.json"
    elif make == "directory":
        (tmp_path / "t.json").mkdir()
        name = "t.json"
    else:
        name = "/dev/zero"
    done = babysit("trace", name, cwd=tmp_path)  # a FIFO without a writer: no hang
    one_error_line(done, 4, "is not a regular file")
    assert done.stderr.count("\n") == 1


def bomb(path: Path, size: int) -> Path:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    chunk = b" " * (1 << 20)
    with path.open("wb") as handle:
        handle.write(packer.compress(b'{"traceEvents": ['))
        for _ in range(size >> 20):
            handle.write(packer.compress(chunk))
        handle.write(packer.flush())
    return path


def test_a_gzip_bomb_stops_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(trace_load, "MAX_TRACE_BYTES", 4 << 20)
    path = bomb(tmp_path / "bomb.json.gz", 64 << 20)
    assert path.stat().st_size < 200_000
    with pytest.raises(TraceError, match=r"bomb.json.gz: decompresses to more than 4 MiB"):
        summarize_file(path)


def test_a_plain_trace_over_the_cap_is_refused_before_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(trace_load, "MAX_TRACE_BYTES", 1 << 20)
    path = write_trace(tmp_path / "t.json", [step(0, 100)] * 20_000)
    with pytest.raises(TraceError, match=r"t.json: more than 1 MiB: too large"):
        summarize_file(path)


def test_more_events_than_the_cap_are_refused_with_the_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(trace_load, "MAX_TRACE_EVENTS", 1000)
    path = write_trace(tmp_path / "t.json", [kernel(n, 1) for n in range(1001)])
    with pytest.raises(TraceError, match=r"t.json: more than 1,000 events"):
        summarize_file(path)
    path = write_trace(tmp_path / "t.json", [kernel(n, 1) for n in range(1000)])
    assert summarize_file(path).device_events == 1000


def test_metadata_before_the_events_is_skipped_and_a_cut_file_named(tmp_path: Path):
    # Kineto writes schemaVersion and deviceProperties before traceEvents.
    text = json.dumps({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "H100"}],
                       "traceEvents": [step(0, 100), kernel(0, 25)], "traceName": "x"})
    (tmp_path / "t.json").write_text(text)
    assert summarize_file(tmp_path / "t.json").devices[0].busy_fraction == 0.25
    (tmp_path / "t.json").write_text(text[:text.index("traceEvents") + 40])
    with pytest.raises(TraceError, match="not valid JSON"):
        summarize_file(tmp_path / "t.json")
    with gzip.open(tmp_path / "nested.json.gz", "wt") as handle:
        handle.write('{"traceEvents": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    with pytest.raises(TraceError, match="nested too deeply"):
        summarize_file(tmp_path / "nested.json.gz")


@pytest.mark.parametrize("output", ["null", "dir"])
def test_output_onto_a_device_or_a_directory_is_refused_and_left_alone(tmp_path: Path,
                                                                       output: str):
    """A device node of the test's own, never the machine's /dev/null: if this ever
    regressed, a rename over /dev/null as root would break the machine for every later
    test (it happened once while this was being written)."""
    write_trace(tmp_path / "t.json", [step(0, 100), kernel(0, 50)])
    (tmp_path / "dir").mkdir()
    if output == "null":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    before = os.stat(tmp_path / output)
    done = babysit("trace", "t.json", "--output", output, cwd=tmp_path)
    one_error_line(done, 2, "is not a regular file")
    after = os.stat(tmp_path / output)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


def test_output_onto_a_fifo_is_refused_without_waiting_for_a_reader(tmp_path: Path):
    write_trace(tmp_path / "t.json", [step(0, 100), kernel(0, 50)])
    os.mkfifo(tmp_path / "out")
    done = babysit("trace", "t.json", "--output", "out", cwd=tmp_path)
    one_error_line(done, 2, "is not a regular file")


# --- config values ----------------------------------------------------------------------

@pytest.mark.parametrize("depth", [100, 5000])
def test_a_deeply_nested_config_value_is_one_clear_error(tmp_path: Path, depth: int):
    (tmp_path / "babysit.toml").write_text(
        "[rules]\nstall_polls = " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(ConfigError) as raised:
        load_settings(tmp_path, env={})
    message = str(raised.value)
    assert ("nested too deeply" in message or "stall_polls: expected int" in message)
    assert len(message) < 300


@pytest.mark.parametrize("text, says", [
    ('tool = "x"\n', None),  # not a table: no [tool.babysit], nothing to read
    ('[tool]\nbabysit = "x"\n', "[tool.babysit] in"),
    ("[tool.babysit]\npoll = 3\n", "[poll] in the babysit config must be a table"),
])
def test_a_pyproject_whose_tool_is_not_a_table(tmp_path: Path, text: str, says: str | None):
    (tmp_path / "pyproject.toml").write_text(text)
    if says is None:
        assert load_settings(tmp_path, env={}).poll.interval > 0
        return
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_settings(tmp_path, env={})


def test_a_config_file_that_is_a_fifo_or_too_large_is_refused_at_once(tmp_path: Path):
    os.mkfifo(tmp_path / "babysit.toml")
    with pytest.raises(ConfigError, match="not a regular file"):
        load_settings(tmp_path, env={})
    (tmp_path / "babysit.toml").unlink()
    (tmp_path / "babysit.toml").write_text("# " + "x" * (5 << 20) + "\n")
    with pytest.raises(ConfigError, match="larger than"):
        load_settings(tmp_path, env={})


def test_a_variable_of_thousands_of_digits_is_one_short_error(tmp_path: Path):
    with pytest.raises(ConfigError) as raised:
        load_settings(tmp_path, env={"BABYSIT_STALL_POLLS": "9" * 5000})
    assert "BABYSIT_STALL_POLLS" in str(raised.value) and len(str(raised.value)) < 300


def test_a_fifo_where_the_verdict_goes_is_refused_and_left_alone(tmp_path: Path):
    (tmp_path / "train.log").write_text("step 1/10 | loss=2.5\n")
    os.mkfifo(tmp_path / "babysit-training.json")
    done = babysit("train.log", "--once", cwd=tmp_path)
    one_error_line(done, 2, "babysit-training.json is not a regular file")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "babysit-training.json").st_mode)

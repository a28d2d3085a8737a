"""`babysit trace`: a real CPU profiler trace, and small hand-written ones whose arithmetic
can be checked by eye. The CLI tests run real `babysit` processes."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from babysit.efficiency.trace import summarize, summarize_file
from tests.conftest import FIXTURES
from tests.forked_cli import python_m_babysit

CPU_TRACE = FIXTURES / "traces" / "cpu_mlp.json.gz"  # scripts/record_cpu_trace.py


def babysit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return python_m_babysit(*args, cwd=cwd)


def step(ts: float, dur: float, name: str = "perf::step",
         cat: str = "user_annotation") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 4242, "tid": 4242, "ts": ts,
            "dur": dur}


def kernel(ts: float, dur: float, device: int = 0, stream: int = 7, name: str = "gemm",
           cat: str = "kernel") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": device, "tid": stream, "ts": ts,
            "dur": dur}


def write_trace(path: Path, events: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def recorded_step_durations() -> list[float]:
    with gzip.open(CPU_TRACE, "rt") as handle:
        events = json.load(handle)["traceEvents"]
    return [e["dur"] for e in sorted(events, key=lambda e: e.get("ts", 0))
            if e.get("name") == "perf::step"]


# --- the real trace ------------------------------------------------------------------

def test_real_cpu_trace_steps_are_the_perf_step_ranges():
    summary = summarize_file(CPU_TRACE)
    assert summary.step_marker == "perf::step"
    assert [s.duration_us for s in summary.steps] == recorded_step_durations()
    assert len(summary.steps) == 5


def test_real_cpu_trace_has_no_device_numbers_to_invent():
    summary = summarize_file(CPU_TRACE)
    assert summary.devices == () and summary.device_events == 0
    assert summary.top_device_events == ()
    assert all(s.devices == () for s in summary.steps)


def test_real_cpu_trace_top_host_ranges_are_the_ops_that_ran():
    names = [t.name for t in summarize_file(CPU_TRACE, top=30).top_host_ranges]
    assert {"aten::addmm", "aten::mm", "aten::linear"} <= set(names)
    assert "perf::step" not in names  # the steps themselves are not a "where"


def test_real_cpu_trace_as_users_see_it(tmp_path: Path):
    done = babysit("trace", str(CPU_TRACE), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Steps: 5 (perf::step ranges)" in out
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("  step ")] == [
        ["step", str(n)] for n in range(1, 6)]
    assert "no device events" in out and "CPU-only trace" in out
    assert "busy" not in out.split("Devices:")[0]  # no per-step device column
    assert "aten::addmm" in out
    assert "perf::step " not in out.split("Top host ranges")[1]


def test_real_cpu_trace_as_json(tmp_path: Path):
    done = babysit("trace", str(CPU_TRACE), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # one object, nothing else on stdout
    durations = recorded_step_durations()
    assert data["step_marker"] == "perf::step" and data["step_count"] == 5
    assert [w["duration_ms"] for w in data["windows"]] == pytest.approx(
        [d / 1000 for d in durations])
    assert data["step_ms"]["max"] == pytest.approx(max(durations) / 1000)
    assert data["devices"] == [] and "CPU-only" in data["note"]
    assert any(r["name"] == "aten::addmm" and r["category"] == "cpu_op"
               for r in data["top_host_ranges"])


# --- the arithmetic, on hand-written traces --------------------------------------------

def test_overlapping_kernels_on_one_device_count_once():
    summary = summarize([
        step(0, 100),
        kernel(10, 30, stream=7),  # 10-40
        kernel(30, 30, stream=8),  # 30-60, overlaps the first on another stream
        kernel(90, 40, stream=7),  # 90-130: only 10 of it inside the step
    ])
    device = summary.steps[0].devices[0]
    assert device.device == "device 0"
    assert device.busy_us == 60 and device.kernel_us == 60
    assert device.busy_fraction == pytest.approx(0.6)
    assert summary.device_events == 3


def test_two_devices_are_kept_apart():
    summary = summarize([
        {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "GPU 1"}},
        step(0, 100),
        kernel(0, 50, device=0),
        kernel(25, 50, device=1),
        kernel(50, 50, device=1, stream=9),
    ])
    first, second = summary.steps[0].devices
    assert (first.device, first.busy_us) == ("device 0", 50)
    assert (second.device, second.busy_us) == ("GPU 1", 75)
    assert [d.busy_fraction for d in summary.devices] == [pytest.approx(0.5),
                                                           pytest.approx(0.75)]


def test_memcpy_and_memset_are_reported_apart_from_kernels():
    summary = summarize([
        step(0, 100),
        kernel(0, 40, name="gemm"),
        kernel(20, 40, stream=8, name="Memcpy HtoD (Pageable -> Device)", cat="gpu_memcpy"),
        kernel(70, 10, name="Memset (Device)", cat="gpu_memset"),
    ])
    device = summary.devices[0]
    assert device.busy_us == 70  # 0-60 and 70-80
    assert (device.kernel_us, device.memcpy_us, device.memset_us) == (40, 40, 10)
    kinds = {t.name: t.category for t in summary.top_device_events}
    assert kinds == {"gemm": "kernel", "Memcpy HtoD (Pageable -> Device)": "memcpy",
                     "Memset (Device)": "memset"}


def test_each_step_gets_its_own_share_and_the_total_adds_them():
    summary = summarize([
        step(0, 100), step(100, 50),
        kernel(80, 40),  # 20 in the first step, 20 in the second
        kernel(140, 5),
    ])
    assert [s.devices[0].busy_us for s in summary.steps] == [20, 25]
    total = summary.devices[0]
    assert (total.busy_us, total.window_us) == (45, 150)
    assert total.busy_fraction == pytest.approx(0.3)


def test_device_time_between_steps_is_not_counted():
    summary = summarize([step(0, 10), step(50, 10), kernel(20, 20)])
    assert summary.devices[0].busy_us == 0


def test_without_step_ranges_the_whole_trace_is_one_window():
    summary = summarize([
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
         "dur": 200},
        kernel(50, 100),
    ])
    assert summary.step_marker is None
    assert len(summary.steps) == 1 and summary.steps[0].duration_us == 200
    assert summary.devices[0].busy_fraction == pytest.approx(0.5)


def test_profiler_steps_are_the_steps_when_none_is_marked_perf_step():
    summary = summarize([
        step(0, 100, name="ProfilerStep#3"), step(100, 80, name="ProfilerStep#4"),
        step(0, 90, name="ProfilerStep#3", cat="gpu_user_annotation"),  # the device side
    ])
    assert summary.step_marker == "ProfilerStep#"
    assert [(s.name, s.duration_us) for s in summary.steps] == [("ProfilerStep#3", 100),
                                                                ("ProfilerStep#4", 80)]


def test_perf_step_wins_over_the_profilers_own_steps():
    summary = summarize([step(0, 100, name="ProfilerStep#0"), step(5, 90),
                         step(100, 100, name="ProfilerStep#1"), step(105, 90)])
    assert summary.step_marker == "perf::step"
    assert [s.start_us for s in summary.steps] == [5, 105]
    assert all(t.name.startswith("ProfilerStep") is False for t in summary.top_host_ranges)


def test_a_step_range_nested_in_another_is_the_same_step():
    summary = summarize([step(0, 100), step(10, 50), step(100, 100)])
    assert [(s.start_us, s.duration_us) for s in summary.steps] == [(0, 100), (100, 100)]


def test_events_with_missing_fields_are_skipped_not_fatal():
    summary = summarize([
        step(0, 100),
        {"ph": "X", "cat": "kernel", "pid": 0, "ts": 10, "dur": 20},  # no name: still busy
        {"ph": "X", "cat": "kernel", "name": "no_start", "pid": 0, "dur": 20},
        {"ph": "X", "cat": "kernel", "name": "no_duration", "pid": 0, "ts": 5},
        {"ph": "X", "cat": "kernel", "name": "negative", "pid": 0, "ts": 5, "dur": -1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": "7.5", "dur": "2"},
        {"ph": "X", "name": "no_category", "ts": 1, "dur": 1},
        "not an event", None, 42,
        {"ph": "M", "name": "process_labels", "args": None},
        {"ph": "s", "id": 1},
    ])
    assert summary.skipped_events == 6  # three kernels without a time, three non-events
    assert summary.devices[0].busy_us == 20
    assert [t.name for t in summary.top_device_events] == ["(unnamed)"]
    assert [(t.name, t.total_us) for t in summary.top_host_ranges] == [("aten::add", 2)]


def test_the_bare_array_form_of_a_chrome_trace_is_read(tmp_path: Path):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps([step(0, 100), kernel(0, 25)]))
    assert summarize_file(path).devices[0].busy_fraction == pytest.approx(0.25)


# --- the command line ------------------------------------------------------------------

def test_gzip_input_is_read_whatever_its_name(tmp_path: Path):
    events = [step(0, 100), kernel(0, 50)]
    for name in ("trace.json.gz", "renamed.json"):
        with gzip.open(tmp_path / name, "wt") as handle:
            json.dump({"traceEvents": events}, handle)
        done = babysit("trace", name, "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["devices"][0]["busy_fraction"] == 0.5


def test_gpu_trace_text_shows_busy_per_device_and_step(tmp_path: Path):
    write_trace(tmp_path / "t.json", [
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        step(0, 2000), step(2000, 2000),
        kernel(0, 1000), kernel(500, 1000, stream=8),  # 1500 µs busy in step 1
        kernel(2000, 500, name="Memcpy DtoH (Device -> Pinned)", cat="gpu_memcpy"),
    ])
    done = babysit("trace", "t.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "step 1" in done.stdout and "GPU 0 busy 75.0%" in done.stdout
    assert "GPU 0 busy 25.0%" in done.stdout
    assert "GPU 0: busy 50.0% (2.00 ms of 4.00 ms); kernels 1.50 ms, memcpy 500 µs" \
        in done.stdout
    assert "Top device events" in done.stdout and "CPU-only" not in done.stdout


def test_trace_without_steps_says_so(tmp_path: Path):
    write_trace(tmp_path / "t.json", [kernel(0, 10), kernel(30, 10)])
    done = babysit("trace", "t.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Steps: none marked" in done.stdout and "whole trace" in done.stdout
    assert "device 0: busy 50.0%" in done.stdout


def test_output_writes_the_json_summary_atomically(tmp_path: Path):
    write_trace(tmp_path / "t.json", [step(0, 100), kernel(0, 50)])
    done = babysit("trace", "t.json", "--output", "summary.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Trace: t.json")  # text still on stdout
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["devices"][0]["busy_ms"] == 0.05
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json", "t.json"]
    printed = babysit("trace", "t.json", "--json", cwd=tmp_path)
    assert json.loads(printed.stdout) == written


def test_output_that_cannot_be_written_is_a_usage_error(tmp_path: Path):
    write_trace(tmp_path / "t.json", [step(0, 100)])
    done = babysit("trace", "t.json", "--output", "missing/dir/summary.json", cwd=tmp_path)
    assert done.returncode == 2
    assert "--output" in done.stderr and "Traceback" not in done.stderr


# Named by the file: xdist workers must agree on the test ids, and bytes make poor ones.
@pytest.mark.parametrize("name, content, reason", [pytest.param(*case, id=case[0]) for case in [
    ("nope.json", None, "no such file"),
    ("text.json", b"step 1 | loss=2.5\n", "not valid JSON"),
    ("half.json", b'{"traceEvents": [{"ph": "X", "ts": 1', "not valid JSON"),
    ("other.json", b'{"loss": [2.5, 2.4]}', 'no "traceEvents" list'),
    ("empty.json", b'{"traceEvents": []}', "nothing to summarize"),
    ("binary.json", bytes(range(256)) * 4, "not text"),
    ("cut.json.gz", gzip.compress(b'{"traceEvents": []}' * 100, mtime=0)[:40], "gzip"),
]])
def test_unreadable_input_exits_4_with_one_line(tmp_path: Path, name: str,
                                                content: bytes | None, reason: str):
    if content is not None:
        (tmp_path / name).write_bytes(content)
    done = babysit("trace", name, cwd=tmp_path)
    assert done.returncode == 4
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"babysit: error: {name}: ") and reason in done.stderr


@pytest.mark.parametrize("kernels, counted", [(1, "(1 event;"), (2, "(2 events;")])
def test_the_device_event_count_reads_as_english(tmp_path: Path, kernels: int, counted: str):
    write_trace(tmp_path / "t.json", [kernel(30 * n, 10) for n in range(kernels)])
    done = babysit("trace", "t.json", cwd=tmp_path)
    assert f"Devices {counted}" in done.stdout, done.stdout

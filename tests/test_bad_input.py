"""Hostile logs: no crash, no false GO, and the good lines around the bad ones still count."""

from __future__ import annotations

import os
import random
from dataclasses import replace
from pathlib import Path

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import FakeClock, artifact_in

GOOD_START = "step 1/10 | loss=2.5\nstep 2/10 | loss=2.4\n"


def once(tmp_path: Path, data: bytes) -> tuple[ExitCode, dict]:
    log = tmp_path / "train.log"
    log.write_bytes(data)
    result = run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                         Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path),
                         NullObserver(), clock=FakeClock())
    return result.exit_code, artifact_in(tmp_path)


def test_binary_garbage_between_good_lines(tmp_path: Path):
    garbage = random.Random(0).randbytes(200_000)
    code, data = once(tmp_path, GOOD_START.encode() + garbage + b"\nstep 3/10 | loss=2.3\n")
    assert data["total_steps"] == 3 and data["decision"] != "GO"
    assert code is not ExitCode.GO


def test_invalid_utf8_inside_a_metric_line(tmp_path: Path):
    code, data = once(tmp_path, b"step 1/10 | loss=2.5 \xff\xfe\xfd\nstep 2/10 | loss=2.4\n")
    assert data["total_steps"] == 2 and data["final_metrics"]["loss"] == 2.4


def test_nul_bytes_from_a_preallocated_or_crashed_file(tmp_path: Path):
    code, data = once(tmp_path, GOOD_START.encode() + b"\x00" * 4096 + b"step 3/10 | loss=2.3\n")
    assert data["total_steps"] == 3


def test_fifty_megabyte_line_without_newline(tmp_path: Path):
    log = tmp_path / "train.log"
    with log.open("wb") as handle:
        handle.write(GOOD_START.encode())
        handle.write(b"x" * (50 * 1024 * 1024))
    target = LocalLogTarget(log, tail_bytes=1024 * 1024)
    snapshot = target.poll()
    assert snapshot.log.new_bytes > 0
    code, data = once(tmp_path, log.read_bytes())
    assert data["decision"] != "GO"


def test_cr_only_progress_bars_never_terminated(tmp_path: Path):
    bars = "".join(f"\r{p}%|##   | {p}/100 [00:01<00:09, 9.1it/s, loss={3 - p / 100:.2f}]"
                   for p in range(1, 101))
    code, data = once(tmp_path, bars.encode())
    assert data["total_steps"] == 100 and data["target_steps"] == 100
    assert data["final_metrics"]["loss"] == 2.0


def test_half_written_json_line_at_the_end(tmp_path: Path):
    text = '{"step": 1, "loss": 2.5}\n{"step": 2, "loss": 2.4}\n{"step": 3, "lo'
    code, data = once(tmp_path, text.encode())
    assert data["total_steps"] == 2
    assert code is ExitCode.CONDITIONAL


def test_interleaved_ranks_use_rank_zero_metrics_and_still_see_other_ranks_errors(
        tmp_path: Path):
    lines = []
    for step in range(1, 9):
        lines.append(f"[rank0]: step {step}/100 | loss={3 - step * 0.1:.2f}")
        lines.append(f"[rank1]: step {step - 1}/100 | loss={9 + step:.2f}")  # rising, behind
    lines.append("[rank1]: RuntimeError: NCCL error: unhandled system error")
    code, data = once(tmp_path, ("\n".join(lines) + "\n").encode())
    types = [a["type"] for a in data["anomalies_detected"]]
    assert "divergence" not in types
    assert "nccl" in types
    assert data["total_steps"] == 8
    assert code is ExitCode.NO_GO


def test_random_bytes_never_crash_the_parser(tmp_path: Path):
    rng = random.Random(42)
    for size in (1, 17, 4096, 65_537):
        code, data = once(tmp_path, rng.randbytes(size))
        assert data["decision"] != "GO"
        os.remove(tmp_path / "babysit-training.json")


def test_a_file_that_is_no_text_log_is_refused_by_name(tmp_path: Path):
    # A compressed log, a checkpoint: read as text each would be "0 % understood".
    import gzip
    for data, kind in ((gzip.compress(GOOD_START.encode()), "a gzip archive"),
                       (b"\x80\x04\x95" + bytes(range(256)) * 8, "a Python pickle"),
                       (b"\x01\x00\x00\x00" * 1000, "binary data")):
        code, artifact = once(tmp_path, data)
        assert code is ExitCode.UNREACHABLE, kind
        assert kind in artifact["summary"] and artifact["decision"] != "GO"
        os.remove(tmp_path / "babysit-training.json")


def test_utf16_and_zero_filled_logs_are_still_text(tmp_path: Path):
    code, data = once(tmp_path, "\ufeff".encode("utf-16-le") + GOOD_START.encode("utf-16-le"))
    assert data["total_steps"] == 2
    os.remove(tmp_path / "babysit-training.json")
    code, data = once(tmp_path, b"\x00" * 8192)  # preallocated, nothing written yet
    assert code is not ExitCode.UNREACHABLE

"""LocalLogTarget against real files: appends, rotation, truncation, deletion."""

from __future__ import annotations

import codecs
import math
import os
from pathlib import Path

import pytest

from babysit.targets.base import TargetError
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import append


def steps(snapshot) -> list[int]:
    return [r.step for r in snapshot.log.records if r.step is not None]


def test_each_poll_reads_only_appended_bytes(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\nstep=2 loss=1.9\n")
    target = LocalLogTarget(log)
    first = target.poll()
    assert steps(first) == [1, 2]
    append(log, "step=3 loss=1.8\n")
    second = target.poll()
    assert steps(second) == [3]
    assert second.log.new_bytes == len("step=3 loss=1.8\n")
    assert target.poll().log.new_bytes == 0


def test_partial_line_is_parsed_once_complete(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\nstep=2 lo")
    target = LocalLogTarget(log)
    assert steps(target.poll()) == [1]
    append(log, "ss=1.9\n")
    assert steps(target.poll()) == [2]


def test_final_poll_hands_over_an_unterminated_last_line(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\nTraining finished")
    target = LocalLogTarget(log)
    target.poll()
    final = target.poll(final=True)
    assert [e.line for r in final.log.records for e in r.events] == ["Training finished"]


def test_rotation_drains_the_old_file_then_reads_the_new_one(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\n")
    target = LocalLogTarget(log)
    target.poll()
    append(log, "step=2 loss=1.9\n")  # written just before rotation
    os.rename(log, tmp_path / "train.log.1")
    log.write_text("step=3 loss=1.8\n")
    snapshot = target.poll()
    assert steps(snapshot) == [2, 3]
    assert any("rotated" in n for n in snapshot.notices)


def test_truncation_restarts_from_the_beginning(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\nstep=2 loss=1.9\n")
    target = LocalLogTarget(log)
    target.poll()
    with log.open("w") as handle:  # copytruncate
        handle.write("step=3 loss=1.8\n")
    snapshot = target.poll()
    assert steps(snapshot) == [3]
    assert any("truncated" in n for n in snapshot.notices)


def test_deleted_log_is_reported_and_the_open_file_still_read(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\n")
    writer = log.open("a")
    target = LocalLogTarget(log)
    target.poll()
    log.unlink()
    writer.write("step=2 loss=1.9\n")
    writer.flush()
    snapshot = target.poll()
    writer.close()
    assert steps(snapshot) == [2]
    assert any("deleted" in n for n in snapshot.notices)
    assert target.poll().notices == ()  # said once, not every poll


def test_missing_file_is_a_clear_target_error(tmp_path: Path):
    with pytest.raises(TargetError, match="not found"):
        LocalLogTarget(tmp_path / "nope.log")


def test_directory_is_a_clear_target_error(tmp_path: Path):
    with pytest.raises(TargetError, match="directory"):
        LocalLogTarget(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file_is_a_clear_target_error(tmp_path: Path):
    log = tmp_path / "secret.log"
    log.write_text("x\n")
    log.chmod(0)
    with pytest.raises(TargetError, match="permission denied"):
        LocalLogTarget(log)


def test_long_log_first_poll_reads_tail_fully_and_history_sparsely(tmp_path: Path):
    log = tmp_path / "train.log"
    with log.open("w") as handle:
        for step in range(1, 60_001):
            loss = "nan" if step == 120 else "2.0"
            handle.write(f"step={step} loss={loss} lr=1e-4\n")
    target = LocalLogTarget(log, tail_bytes=64 * 1024)
    snapshot = target.poll()
    sparse = [r for r in snapshot.log.records if r.sparse]
    dense = [r for r in snapshot.log.records if not r.sparse]
    assert [r.step for r in sparse] == [120]
    assert dense[-1].step == 60_000
    assert len(dense) < 5_000


def test_a_short_log_of_very_many_lines_is_searched_not_parsed_line_by_line(tmp_path: Path):
    """Under 4 MiB, yet 60,000 lines: parsed one by one it took a minute and hundreds of
    MB (tens of microseconds a line); its history is searched like a long log's, its last
    lines parsed in full, and a NaN in its middle is still found."""
    from babysit.reading.follower import MAX_PARSED_LINES, TAIL_LINES

    lines = [f"iter {i}: loss {2 - i / 100_000:.5f}" for i in range(MAX_PARSED_LINES + 10_000)]
    lines[30_000] = "iter 30000: loss nan"
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    assert log.stat().st_size < 4 * 1024 * 1024
    snapshot = LocalLogTarget(log).poll()
    parsed = [r for r in snapshot.log.records if r.metrics.get("loss") is not None]
    assert TAIL_LINES <= len(parsed) < 2 * TAIL_LINES
    assert steps(snapshot)[-1] == MAX_PARSED_LINES + 9_999
    assert any(not math.isfinite(r.metrics.get("loss", 0.0)) for r in snapshot.log.records)


def test_a_symbolic_link_loop_is_named_as_such(tmp_path: Path):
    (tmp_path / "a.log").symlink_to(tmp_path / "b.log")
    (tmp_path / "b.log").symlink_to(tmp_path / "a.log")
    (tmp_path / "gone.log").symlink_to(tmp_path / "nothing.log")
    with pytest.raises(TargetError, match="leads back to itself"):
        LocalLogTarget(tmp_path / "a.log")
    with pytest.raises(TargetError, match="symbolic link to a missing file"):
        LocalLogTarget(tmp_path / "gone.log")


@pytest.mark.parametrize("codec, bom", [("utf-16-le", codecs.BOM_UTF16_LE),
                                        ("utf-16-be", codecs.BOM_UTF16_BE),
                                        ("utf-16-le", b"")])
def test_a_long_utf16_log_is_searched_like_a_long_utf8_one(tmp_path: Path, codec: str,
                                                           bom: bytes):
    """PowerShell 5 writes UTF-16: a long such log was decoded and parsed whole (88 s and
    262 MB for 33 MB). Its history is made UTF-8 into a temporary file and searched, its
    last lines parsed: the NaN in its middle is found, the tail read in its own order."""
    lines = [f"step {i}/5000 | loss={2 - i / 5000:.4f}" for i in range(1, 3001)]
    lines[1500] = "step 1501/5000 | loss=nan"
    log = tmp_path / "train.log"
    log.write_bytes(bom + ("\r\n".join(lines) + "\r\n").encode(codec))
    snapshot = LocalLogTarget(log, tail_bytes=8192).poll()
    assert steps(snapshot)[-1] == 3000
    assert len([r for r in snapshot.log.records if "loss" in r.metrics]) < 1000
    assert any(math.isnan(r.metrics.get("loss", 0.0)) for r in snapshot.log.records)

"""Several log files of one run (one per rank) judged together, each rank's failures
attributed to it: the recorded torchrun/gloo run split into its ranks' files gets the
same verdict as the interleaved log."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from babysit.targets.base import TargetError
from babysit.targets.local_log.ranks import expand, rank_of
from tests.conftest import LOGS, artifact_in
from tests.test_cli import babysit

_PREFIX = re.compile(r"^\[rank(\d)\]:? ?")


def split_by_rank(tmp_path: Path) -> list[Path]:
    """rank0.log, rank1.log from the interleaved log; launcher lines go to rank 0's."""
    files: dict[int, list[str]] = {0: [], 1: []}
    for line in (LOGS / "torchrun_gloo_timeout.log").read_text().splitlines(keepends=True):
        match = _PREFIX.match(line)
        rank = int(match.group(1)) if match else 0
        files[rank].append(line[match.end():] if match else line)
    paths = []
    for rank, lines in files.items():
        path = tmp_path / f"train_rank{rank}.log"
        path.write_text("".join(lines))
        paths.append(path)
    return paths


def test_rank_files_give_the_verdict_of_the_interleaved_log(tmp_path: Path):
    split_by_rank(tmp_path)
    whole = tmp_path / "whole"
    whole.mkdir()
    babysit(str(LOGS / "torchrun_gloo_timeout.log"), "--once", "--out-dir", str(whole),
            cwd=tmp_path)
    done = babysit("train_rank*.log", "--once", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    data, single = artifact_in(tmp_path), artifact_in(whole)
    for field in ("decision", "terminal_state", "total_steps", "target_steps"):
        assert data[field] == single[field], field
    [nccl] = [a for a in data["anomalies_detected"] if a["type"] == "nccl"]
    assert nccl["description"].startswith("rank 0: ")  # whose recv timed out
    assert "2 rank logs: rank 0 = train_rank0.log, rank 1 = train_rank1.log" in done.stdout
    assert data["target"] == "train_rank*.log"


def test_rank_numbers_come_from_the_names_else_the_order():
    assert [rank_of(p, i) for i, p in enumerate(["a/rank3.log", "out_7.log", "w-2.err",
                                                 "x.log"])] == [3, 7, 2, 3]


def test_a_glob_that_matches_nothing_is_a_clear_error(tmp_path: Path):
    with pytest.raises(TargetError, match="no log file matches"):
        expand([str(tmp_path / "nothing*.log")])
    done = babysit("nothing*.log", "--once", cwd=tmp_path)
    assert done.returncode == 4 and "no log file matches nothing*.log" in done.stderr


def test_several_targets_are_only_for_local_rank_logs(tmp_path: Path):
    done = babysit("--pid", "1", "a.log", "b.log", cwd=tmp_path)
    assert done.returncode == 2 and sys.executable


def _rank_lines(rank: int, nan_at: int | None) -> list[str]:
    return [f"step {s}/100 | loss={'nan' if nan_at and s >= nan_at else f'{3 - s * 0.01:.3f}'}"
            for s in range(1, 41 if rank else 40)]


def test_a_nan_on_rank_2_of_4_in_its_own_file_is_the_runs_naming_that_rank(tmp_path: Path):
    """Issue 24: other ranks' metrics do not make the series, but their NaN is the run's."""
    for rank in range(4):
        lines = _rank_lines(rank, 31 if rank == 2 else None)
        (tmp_path / f"rank{rank}.log").write_text("\n".join(lines) + "\n")
    done = babysit("rank0.log", "rank1.log", "rank2.log", "rank3.log", "--once", cwd=tmp_path)
    data = artifact_in(tmp_path)
    assert done.returncode == 1 and data["decision"] == "NO-GO", data["summary"]
    [nan] = [a for a in data["anomalies_detected"] if a["type"] == "nan-inf"]
    assert "rank 2" in nan["description"] and nan["step"] == 31


def test_a_nan_on_rank_2_in_interleaved_prefixed_lines_is_the_runs(tmp_path: Path):
    ranks = [_rank_lines(rank, 31 if rank == 2 else None) for rank in range(4)]
    lines = [f"[rank{rank}]: {ranks[rank][i]}" for i in range(39) for rank in range(4)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    babysit("train.log", "--once", cwd=tmp_path)
    data = artifact_in(tmp_path)
    assert data["decision"] == "NO-GO", data["summary"]
    [nan] = [a for a in data["anomalies_detected"] if a["type"] == "nan-inf"]
    assert "rank 2" in nan["description"] and nan["step"] == 31


def test_a_rank_30_percent_slower_than_the_others_is_a_straggler_named(tmp_path: Path):
    for rank in range(4):
        last = 70 if rank == 3 else 100
        lines = [f"step {s}/1000 | loss={3 - s * 0.001:.4f}" for s in range(1, last + 1)]
        (tmp_path / f"rank{rank}.log").write_text("\n".join(lines) + "\n")
    babysit("rank0.log", "rank1.log", "rank2.log", "rank3.log", "--once", cwd=tmp_path)
    data = artifact_in(tmp_path)
    [straggler] = [a for a in data["anomalies_detected"] if a["type"] == "straggler"]
    assert "rank 3" in straggler["description"] and straggler["step"] == 70


def test_ranks_in_step_raise_no_straggler(tmp_path: Path):
    for rank in range(4):
        last = 99 if rank == 2 else 100  # a line not yet flushed
        lines = [f"step {s}/1000 | loss={3 - s * 0.001:.4f}" for s in range(1, last + 1)]
        (tmp_path / f"rank{rank}.log").write_text("\n".join(lines) + "\n")
    babysit("rank0.log", "rank1.log", "rank2.log", "rank3.log", "--once", cwd=tmp_path)
    assert not [a for a in artifact_in(tmp_path)["anomalies_detected"]
                if a["type"] == "straggler"]

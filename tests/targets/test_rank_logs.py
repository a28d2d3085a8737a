"""Several log files of one run (one per rank) judged together, each rank's failures
attributed to it: the recorded torchrun/gloo run split into its ranks' files gets the
same verdict as the interleaved log."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from babysit.targets.base import TargetError
from babysit.targets.rank_logs import expand, rank_of
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

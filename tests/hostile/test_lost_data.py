"""Nothing babysit has read, or should read, is lost: a log rewritten in place, a
rotation to a file it cannot open, a verdict directory that turns unwritable."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import FakeClock, artifact_in
from tests.test_cli import babysit


def lines(start: int, stop: int) -> str:
    return "".join(f"step {s}/100 | loss={3 - s * 0.01:.3f}\n" for s in range(start, stop))


def watch(tmp_path: Path, log: Path, world, **poll: object):
    settings = Settings(poll=replace(PollSettings(), backoff=False, **poll),
                        out_dir=tmp_path / "out")
    return run_session(lambda: LocalLogTarget(log), str(log), "local-log", settings,
                       NullObserver(), clock=FakeClock(on_sleep=world))


def test_a_log_truncated_and_regrown_past_its_old_size_is_read_again(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11))
    polls = {"n": 0}

    def world(_: FakeClock) -> None:
        polls["n"] += 1
        if polls["n"] == 1:  # a restarted run reopens its log with `>` and writes fast
            log.write_text("restarted\n" + lines(1, 12) + "step 12/100 | loss=nan\n")

    result = watch(tmp_path, log, world, max_polls=5)
    data = artifact_in(tmp_path / "out")
    assert result.exit_code is ExitCode.NO_GO
    assert [(a["type"], a["step"]) for a in data["anomalies_detected"]] == [("nan-inf", 12)]


def test_what_was_read_before_a_rotation_to_an_unopenable_file_still_counts(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 11))
    polls = {"n": 0}

    def world(_: FakeClock) -> None:
        polls["n"] += 1
        if polls["n"] == 1:
            with log.open("a") as handle:  # the last words of the old file ...
                handle.write("step 11/100 | loss=nan\n")
            os.rename(log, tmp_path / "train.log.1")
            log.mkdir()  # ... and a "new log" that cannot be opened

    watch(tmp_path, log, world, max_polls=4)
    data = artifact_in(tmp_path / "out")
    assert ("nan-inf", 11) in [(a["type"], a["step"]) for a in data["anomalies_detected"]]
    assert data["decision"] == "NO-GO"


def test_an_unwritable_out_dir_is_refused_before_watching(tmp_path: Path):
    (tmp_path / "train.log").write_text(lines(1, 5))
    (tmp_path / "not-a-dir").write_text("a file")
    done = babysit("train.log", "--once", "--out-dir", "not-a-dir/out", cwd=tmp_path)
    assert done.returncode == 2
    assert "not-a-dir/out" in done.stderr and "cannot be written" in " ".join(
        done.stderr.replace("│", " ").split())


def test_a_verdict_that_cannot_be_written_has_its_own_exit_code(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text(lines(1, 5))
    out = tmp_path / "out"
    out.mkdir()
    (out / "babysit-training.json").write_text('{"decision": "NO-GO"}')  # another run's

    def world(_: FakeClock) -> None:
        shutil.rmtree(out, ignore_errors=True)
        out.write_text("the directory became a file")

    result = watch(tmp_path, log, world, max_polls=2)
    assert result.exit_code is ExitCode.ARTIFACT_FAILED
    assert result.artifact_error is not None and str(out) in result.artifact_error

"""Reading what Slurm prints, without a cluster."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.model import AnomalyType, Severity
from babysit.targets.kinds import KindUsageError
from babysit.targets.slurm import check_job_id
from babysit.targets.slurm.job import SlurmJobTarget, _local_log
from babysit.targets.slurm.runner import LocalRunner
from babysit.targets.slurm.states import (
    array_tasks,
    cancelled_by,
    gpus,
    job_failure,
    parse_records,
    parse_sacct,
    pick,
)
from babysit.targets.slurm.view import resolve_path, view_of
from tests.conftest import FakeClock, artifact_in

LINE = ("JobId=42 ArrayJobId=40 ArrayTaskId=2 JobName=my train UserId=ana(1000) "
        "JobState=OUT_OF_MEMORY Reason=OutOfMemory Requeue=1 Restarts=1 ExitCode=0:125 "
        "RunTime=00:10:00 TimeLimit=01:00:00 Partition=gpu NodeList=gn[01-02] BatchHost=gn01 "
        "TRES=cpu=8,mem=64G,node=2,billing=8,gres/gpu:a100=4 WorkDir=/home/ana/run "
        "StdErr=/home/ana/run/%x-%A_%a.err StdOut=logs/%u-%j-%N-%4a.out")


def test_a_record_is_read_with_spaces_in_values_and_patterns_resolved():
    record = parse_records(LINE)[0]
    assert record["JobName"] == "my train"
    view = view_of(record)
    assert view.restarts == 1 and view.user == "ana" and gpus(view.tres) == "4x a100"
    assert view.stderr == "/home/ana/run/my train-40_2.err"
    assert view.stdout == "/home/ana/run/logs/ana-42-gn01-0002.out"
    assert resolve_path("/already/resolved.out", record) == "/already/resolved.out"


def test_array_tasks_and_picking():
    records = parse_records(LINE + "\n" + LINE.replace("JobId=42", "JobId=40")
                            .replace("ArrayTaskId=2", "ArrayTaskId=1"))
    assert array_tasks(records, "40") == ["40_1", "40_2"]
    assert pick(records, "40_2") is records[0]
    assert pick(records, "42") is records[0]
    assert pick(records, "7") is None


@pytest.mark.parametrize("text, count", [("cpu=1,gres/gpu=2", "2"), ("gres:gpu:4", "4"),
                                         ("cpu=1,mem=1G", None)])
def test_gpus_from_tres(text, count):
    assert gpus(text) == count


def test_sacct_row_of_the_job_not_its_steps():
    text = ("77|77|CANCELLED by 1000|0:15|None|00:01:00|n1|cpu=1\n"
            "77.batch|77.batch|CANCELLED|0:15||||\n")
    row = parse_sacct(text, "77")
    assert row is not None and row.state == "CANCELLED by 1000"


def test_end_states_raise_what_they_mean():
    oom = job_failure("job 1", "OUT_OF_MEMORY", "0:125", "OutOfMemory", None, "")
    assert oom is not None and (oom.type, oom.severity) == (AnomalyType.OOM, Severity.BLOCKER)
    failed = job_failure("job 1", "NODE_FAIL", "0:0", "NodeDown", None, "")
    assert failed is not None and "a node it ran on failed" in failed.description
    cancelled = job_failure("job 1", "CANCELLED by 1000", "0:0", "None", "UID 1000", "")
    assert cancelled is not None and "cancelled by UID 1000" in cancelled.description
    assert job_failure("job 1", "COMPLETED", "0:0", "None", None, "") is None


@pytest.mark.parametrize("text", ["12", "12_3", " 12 "])
def test_job_ids(text):
    assert check_job_id(text) == text.strip()


@pytest.mark.parametrize("text", ["", "12;rm", "12_", "abc", "12_3_4", "-1"])
def test_bad_job_ids_are_usage_errors(text):
    with pytest.raises(KindUsageError):
        check_job_id(text)


# --- fields a broken or hostile controller prints -----------------------------------------

@pytest.mark.parametrize("field", ["Restarts=²", "Restarts=٣", "ArrayTaskId=²",
                                   "Restarts=" + "9" * 5000, "ArrayTaskId=" + "1" * 5000])
def test_digits_that_int_refuses_are_not_numbers(field: str):
    name = field.split("=")[0]
    line = LINE.replace(f"{name}=" + ("1" if name == "Restarts" else "2"), field)
    records = parse_records(line + "\n" + line.replace("JobId=42", "JobId=40"))
    view = view_of(records[0])  # no ValueError
    assert view.restarts == (1 if name != "Restarts" else 0)
    assert array_tasks(records, "40") == ([] if name == "ArrayTaskId" else ["40_2", "40_2"])


@pytest.mark.parametrize("pattern, resolved", [
    ("out-%999999999j.log", "out-0000000042.log"),  # sbatch pads to 10 at most
    ("out-%12j.log", "out-0000000042.log"),
    ("out-%4j.log", "out-0042.log"),
    ("out-%" + "9" * 5000 + "j.log", "out-0000000042.log"),
    ("out-%²j.log", "out-%²j.log"),  # not a pattern Slurm knows: left as written
])
def test_stdout_pad_widths_are_bounded_as_sbatch_bounds_them(pattern: str, resolved: str):
    record = parse_records(LINE.replace("StdOut=logs/%u-%j-%N-%4a.out", f"StdOut=/l/{pattern}"))[0]
    assert view_of(record).stdout == f"/l/{resolved}"


def test_a_cancelling_uid_too_large_for_the_system_is_shown_as_a_number():
    assert cancelled_by("CANCELLED by 99999999999") is None
    assert cancelled_by("CANCELLED by ²") is None
    assert cancelled_by("CANCELLED by 4294967295") == "4294967295"


@pytest.mark.parametrize("text", ["٣", "1" * 11, "12_٣", "²"])
def test_job_ids_are_ascii_digits(text: str):
    with pytest.raises(KindUsageError):
        check_job_id(text)


def test_an_scontrol_that_hangs_is_the_cluster_unreachable_not_a_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    hanging = bin_dir / "scontrol"
    hanging.write_text("#!/bin/sh\nexec sleep 600\n")
    hanging.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    result = run_session(
        lambda: SlurmJobTarget("123", LocalRunner(timeout=1), _local_log), "123", "slurm",
        Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path), NullObserver(),
        clock=FakeClock())
    assert result.exit_code is ExitCode.UNREACHABLE
    verdict = artifact_in(tmp_path)
    assert "took longer than 1s (is slurmctld reachable?)" in json.dumps(verdict)

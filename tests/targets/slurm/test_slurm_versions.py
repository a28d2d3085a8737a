"""What newer Slurm releases print (tests/fixtures/slurm, with their sources), and the
clock Slurm's times are read in."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from babysit.targets.base import Target, TargetError
from babysit.targets.slurm.job import SlurmJobTarget
from babysit.targets.slurm.runner import SshRunner
from babysit.targets.slurm.states import gpus, parse_records, parse_sacct, pick
from babysit.targets.slurm.view import view_of

FIXTURES = Path(__file__).parents[2] / "fixtures" / "slurm"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_23_02_allocation_is_read_from_alloctres_not_the_request():
    view = view_of(parse_records(fixture("scontrol-23.02.txt"))[0])
    assert gpus(view.tres) == "4x h100"  # what was allocated; the request names no type
    assert (view.state, view.name, view.time_limit) == ("RUNNING", "llama ft", "04:00:00")
    assert view.stdout == "/home/ana/run/slurm-2280887_0.out"


def test_24_05_pending_job_without_an_allocation_falls_back_to_its_request():
    view = view_of(parse_records(fixture("scontrol-24.05.txt"))[0])
    assert (view.state, view.reason) == ("PENDING", "Priority")
    assert gpus(view.tres) == "4"  # AllocTRES=(null): the request


@pytest.mark.parametrize("wanted", ["2281126", "2280887_0"])
def test_an_array_tasks_accounting_row_is_found_by_its_raw_id_or_its_task_id(wanted: str):
    row = parse_sacct(fixture("sacct-array-23.02.txt"), wanted)
    assert row is not None
    assert (row.job_id, row.state, row.elapsed) == ("2280887_0", "TIMEOUT", "04:00:12")


def test_a_raw_task_id_picks_its_scontrol_record():
    records = parse_records(fixture("scontrol-23.02.txt"))
    assert pick(records, "2281126") is records[0]
    assert pick(records, "2280887_0") is records[0]


class _Connection:
    """An SSH connection that answers like a login node and keeps the commands."""

    where = "me@login"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.commands: list[list[str]] = []

    def run(self, command: Sequence[str], timeout: float) -> tuple[int, bytes, bytes]:
        self.commands.append(list(command))
        return 0, self.answer.encode(), b""

    def close(self) -> None:
        pass


@pytest.fixture
def far_timezone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """babysit's machine 10 hours behind UTC; Slurm's times are asked for in UTC."""
    monkeypatch.setenv("TZ", "Pacific/Honolulu")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _no_log(path: str) -> Target:
    raise TargetError("not read in this test")


def test_times_are_asked_for_in_utc_and_read_as_utc(far_timezone: None):
    submitted = (datetime.now(timezone.utc) - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%S")
    record = fixture("scontrol-24.05.txt").replace("SubmitTime=2026-12-01T08:00:00",
                                                   f"SubmitTime={submitted}")
    connection = _Connection(record)
    target = SlurmJobTarget("2281126", SshRunner(connection),  # type: ignore[arg-type]
                            _no_log, max_pending=2 * 3600.0, login="me@login")
    snapshot = target.poll()
    assert all(command[:4] == ["env", "SLURM_TIME_FORMAT=standard", "LC_ALL=C", "TZ=UTC"]
               for command in connection.commands)
    pending = [a for a in snapshot.service.raised if "pending for 3h" in a.description]
    assert pending, [a.description for a in snapshot.service.raised]


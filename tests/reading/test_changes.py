"""A local log's changes wake the loop at once, however far the backoff has gone, and a
log that never stops growing wakes it no more than once per `min_gap`."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from pathlib import Path

from babysit.reading.changes import GrowthWaker
from tests.conftest import artifact_in


class FakeTime:
    def __init__(self, on_sleep=None) -> None:
        self.now = 0.0
        self.on_sleep = on_sleep

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(self.now)


def test_a_quiet_file_lets_the_wait_run_out(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step 1\n")
    clock = FakeTime()
    waker = GrowthWaker([str(log)], monotonic=clock.monotonic, sleep=clock.sleep)
    assert waker.wait(300) is False
    assert clock.now == 300


def test_a_write_ends_the_wait_within_a_check(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step 1\n")

    def write_at_ten(now: float) -> None:
        if 10 <= now < 10.3:
            with log.open("a") as handle:
                handle.write("step 2 loss=nan\n")

    clock = FakeTime(write_at_ten)
    waker = GrowthWaker([str(log)], monotonic=clock.monotonic, sleep=clock.sleep)
    assert waker.wait(300) is True
    assert 10 <= clock.now <= 10.5


def test_a_log_that_never_stops_growing_wakes_at_most_once_per_gap(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("")

    def always_write(_: float) -> None:
        with log.open("a") as handle:
            handle.write("x\n")

    clock = FakeTime(always_write)
    waker = GrowthWaker([str(log)], min_gap=1.0, monotonic=clock.monotonic, sleep=clock.sleep)
    wakes = []
    while clock.now < 60:
        if waker.wait(60 - clock.now):
            wakes.append(clock.now)
    assert 55 <= len(wakes) <= 61
    assert all(b - a >= 1.0 - 1e-9 for a, b in itertools.pairwise(wakes))


def test_a_replaced_or_deleted_log_is_a_change(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("a\n")
    clock = FakeTime(lambda now: log.unlink() if 5 <= now < 5.3 else None)
    waker = GrowthWaker([str(log)], monotonic=clock.monotonic, sleep=clock.sleep)
    assert waker.wait(30) is True


def test_a_nan_written_at_the_backoff_cap_is_reported_within_seconds(tmp_path: Path):
    """With 300 s between polls, the NaN still ends an --until-event watch at once."""
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {s}/1000 | loss={3 - s / 1000:.3f}\n" for s in range(1, 50)))
    proc = subprocess.Popen([sys.executable, "-m", "babysit", "train.log", "--until-event",
                             "--interval", "300", "--max-interval", "300"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    written: list[float] = []

    def write_nan() -> None:
        time.sleep(2.0)  # after the baseline
        with log.open("a") as handle:
            handle.write("step 50/1000 | loss=nan\n")
        written.append(time.monotonic())

    writer = threading.Thread(target=write_nan)
    writer.start()
    try:
        proc.communicate(timeout=60)
    finally:
        proc.kill()
        writer.join()
    latency = time.monotonic() - written[0]
    assert proc.returncode == 1
    assert artifact_in(tmp_path)["anomalies_detected"][0]["type"] == "nan-inf"
    assert latency < 10, latency  # not the 300 s the backoff would wait

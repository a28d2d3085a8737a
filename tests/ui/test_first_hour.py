"""What a person reads in the first hour: interval notes, summaries, a stalled run's rate,
final headings, an unreadable target, a log that does not exist yet, a process by name."""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from babysit.config import PollSettings, Settings
from babysit.core.session import run_session
from babysit.targets.common.log_file import LocalLogTarget
from babysit.ui.console import ConsoleObserver
from tests.conftest import FakeClock, append, artifact_in
from tests.forked_cli import python_m_babysit


def watch_log(tmp_path: Path, lines: list[str], *, every: int = 1, polls: int = 12,
              **poll: object) -> str:
    """Watch a log that gains one of `lines` every `every` polls; the console's text."""
    log = tmp_path / "train.log"
    log.write_text(lines[0])
    rest = list(lines[1:])

    def grow(clock: FakeClock) -> None:
        if rest and len(clock.slept) % every == 0:
            append(log, rest.pop(0))

    out = io.StringIO()
    settings = Settings(poll=replace(PollSettings(), max_polls=polls, **poll),  # type: ignore[arg-type]
                        fix=False, out_dir=tmp_path / "out")
    run_session(lambda: LocalLogTarget(log), str(log), "local-log", settings,
                ConsoleObserver(out, color=False), clock=FakeClock(grow))
    return out.getvalue()


def steps(first: int, last: int, total: int = 1000) -> list[str]:
    return [f"Step {n}/{total} | loss={3.0 - n / 1000:.4f}\n" for n in range(first, last + 1)]


def test_backoff_notes_only_when_the_interval_changes(tmp_path: Path):
    text = watch_log(tmp_path, steps(1, 12), interval=2, max_interval=4, polls=8)
    assert "backed off 2s→3s" in text and "backed off 3s→4s" in text
    assert "4s→4s" not in text and "2s→2s" not in text


def test_a_schedule_says_its_own_next_step(tmp_path: Path):
    text = watch_log(tmp_path, steps(1, 12), interval=1, max_interval=4,
                     schedule=(1.0, 2.0, 4.0), polls=6)
    assert "schedule 1s→2s" in text and "schedule 2s→4s" in text
    assert "backed off" not in text


def test_summaries_are_never_printed_back_to_back(tmp_path: Path):
    lines = steps(1, 4) + [f"Step {n}/1000 | loss=nan\n" for n in range(5, 9)]
    text = watch_log(tmp_path, lines, polls=10, summary_every=5)
    blocks = [line for line in text.splitlines() if line.startswith("── summary after")]
    assert "summary after 1 polls" not in text
    polls = [int(line.split()[3]) for line in blocks]
    assert all(b - a >= 2 for a, b in itertools.pairwise(polls)), blocks


def test_a_run_that_stopped_moving_shows_no_stale_rate_or_eta(tmp_path: Path):
    text = watch_log(tmp_path, steps(1, 4), polls=6, interval=30, backoff=False)
    quiet = [line for line in text.splitlines() if "no progress for" in line]
    assert quiet and "(rate and ETA unknown)" in quiet[-1]
    last_step_line = [line for line in text.splitlines() if "Step 4/1000" in line][-1]
    assert "steps/s" not in last_step_line
    assert "ETA: ~" not in text.split(quiet[0])[-1]


def babysit(*args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return python_m_babysit(*args, cwd=cwd, env={**os.environ, "COLUMNS": "200", **(env or {})},
                            timeout=timeout)


def test_a_failed_run_is_not_headed_training_complete(tmp_path: Path):
    (tmp_path / "train.log").write_text("Step 3/10 | loss=2.0\nTraceback (most recent call "
                                        "last):\n  File \"train.py\", line 3\nValueError: bad\n")
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert "Training Failed\n===============" in done.stdout
    assert "Training Complete" not in done.stdout


def test_a_finished_run_that_never_learned_is_not_headed_training_complete(tmp_path: Path):
    lines = [f"step {i}/20 loss 2.3026" for i in range(1, 21)] + ["Training complete"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert done.returncode == 1
    assert "Training Finished — result not usable (NO-GO)\n" in done.stdout
    assert "Training Complete" not in done.stdout


def test_an_unreadable_target_is_explained_once(tmp_path: Path):
    done = babysit("missing.log", "--once", cwd=tmp_path)
    assert done.returncode == 4
    assert done.stdout.count("log file not found: missing.log") == 1
    assert "Terminal state" not in done.stdout
    assert done.stderr.count("log file not found: missing.log") == 1  # stdout may be a file
    assert artifact_in(tmp_path)["terminal_state"] == "RUNNING"  # the spec's value, in the file


def test_a_log_that_does_not_exist_yet_is_waited_for(tmp_path: Path):
    log = tmp_path / "train.log"
    proc = subprocess.Popen([sys.executable, "-m", "babysit", "train.log", "--interval", "0.2"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "BABYSIT_WAIT_FOR_LOG": "600"})
    assert proc.stderr is not None
    # The log is created once babysit says it waits (however long it took to start):
    # a sleep here would race a slow start.
    announced = proc.stderr.readline()
    assert "waiting for train.log to appear (up to 10m 0s, until " in announced, announced
    assert proc.poll() is None  # still waiting, not exit 4
    log.write_text("Step 10/10 | loss=1.0\nTraining finished\n")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    assert artifact_in(tmp_path)["decision"] == "GO"


def test_a_log_that_never_appears_ends_with_exit_4_after_the_limit(tmp_path: Path):
    done = babysit("train.log", env={"BABYSIT_WAIT_FOR_LOG": "1"}, cwd=tmp_path)
    assert done.returncode == 4
    assert "train.log did not appear within 1s" in done.stderr


def test_a_process_is_named_by_its_command_line(tmp_path: Path):
    script = tmp_path / "named_trainer_for_label.py"
    script.write_text("import time\nfor i in range(100):\n    print(f'Step {i}/100 | loss=1.0',"
                      " flush=True)\n    time.sleep(0.2)\n")
    with (tmp_path / "train.log").open("w") as out:
        proc = subprocess.Popen([sys.executable, str(script), "--lr", "3e-4"], stdout=out,
                                cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30  # until the trainer has started: its first line
        while not (tmp_path / "train.log").stat().st_size and time.monotonic() < deadline:
            time.sleep(0.02)
        done = babysit("--pid", str(proc.pid), "--once", "--no-fix", cwd=tmp_path)
    finally:
        proc.kill()
        proc.wait()
    watching = next(line for line in done.stdout.splitlines() if "Watching" in line)
    assert f"Watching {proc.pid} — " in watching and "named_trainer_for_label.py --lr 3e-4" \
        in watching


def test_no_progress_is_counted_from_the_logs_last_write(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("".join(steps(1, 4)))
    two_hours_ago = time.time() - 2 * 3600
    os.utime(log, (two_hours_ago, two_hours_ago))
    out = io.StringIO()
    settings = Settings(poll=replace(PollSettings(), max_polls=3, interval=30, backoff=False),
                        fix=False, out_dir=tmp_path / "out")
    run_session(lambda: LocalLogTarget(log), str(log), "local-log", settings,
                ConsoleObserver(out, color=False), clock=FakeClock())
    quiet = [line for line in out.getvalue().splitlines() if "no progress for" in line]
    assert quiet and all("no progress for 2h 0m" in line for line in quiet), quiet


class _EarlyRead:
    """A waker that sees the log grow half a second before the poll is due, once."""

    def __init__(self, clock: FakeClock, log: Path) -> None:
        self.clock, self.log, self.calls = clock, log, 0

    def wait(self, seconds: float) -> bool:
        self.calls += 1
        if self.calls == 1:
            self.clock.t += seconds - 0.5
            append(self.log, "Step 5/1000 | loss=2.9950\n")
            return True
        self.clock.t += seconds
        return False


def test_progress_read_a_moment_before_a_poll_is_not_no_progress_for_0s(tmp_path: Path):
    from babysit.core.loop import WatchLoop

    log = tmp_path / "train.log"
    log.write_text("".join(steps(1, 4)))
    clock = FakeClock()
    out = io.StringIO()
    settings = Settings(poll=replace(PollSettings(), max_polls=3, interval=30, backoff=False),
                        fix=False, out_dir=tmp_path / "out")
    WatchLoop(LocalLogTarget(log), settings, ConsoleObserver(out, color=False), clock,
              waker=_EarlyRead(clock, log)).run()
    text = out.getvalue()
    assert "Step 5/1000" in text
    assert "no progress for 0s" not in text, text


def test_a_local_log_says_its_lines_are_read_as_written_not_at_the_next_poll(tmp_path: Path):
    # The backoff paces the reports; a local log's new lines are read as they come, so
    # "next poll in 45s" would tell the user a NaN may wait 45 s to be seen.
    (tmp_path / "train.log").write_text("Step 1/1000 | loss=2.0\nStep 2/1000 | loss=1.9\n")
    done = babysit("train.log", "--max-polls", "2", "--interval", "1", "--no-fix",
                   cwd=tmp_path)
    assert "next report in 1.5s, new lines read as written" in done.stdout
    assert "next poll in" not in done.stdout

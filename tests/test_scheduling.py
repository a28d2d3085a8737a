"""`babysit schedule` prints a crontab line / systemd timer that runs the command given."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from babysit.scheduling import ScheduleError, cron_fields


def schedule(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "babysit", "schedule", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("seconds, fields", [(60, "* * * * *"), (600, "*/10 * * * *"),
                                              (3600, "0 * * * *"), (6 * 3600, "0 */6 * * *"),
                                              (86400, "0 0 * * *")])
def test_cron_fields(seconds: float, fields: str):
    assert cron_fields(seconds) == fields


@pytest.mark.parametrize("seconds", [30, 90, 7 * 60, 5 * 3600])
def test_intervals_cron_cannot_express_are_refused(seconds: float):
    with pytest.raises(ScheduleError):
        cron_fields(seconds)


def test_crontab_line_parses_back_to_the_same_command(tmp_path: Path):
    command = ["babysit", "--wandb", "e/p/r", "--once", "--json", "--run-id", "50% done; x"]
    done = schedule("--every", "30m", "--", *command, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(text for text in done.stdout.splitlines() if not text.startswith("#"))
    fields, shell = line.split(" ", 5)[:5], line.split(" ", 5)[5]
    assert fields == ["*/30", "*", "*", "*", "*"]
    words = shlex.split(shell.replace("\\%", "%"))
    assert words[:3] == ["cd", str(tmp_path), "&&"]
    # The babysit running now (`python -m babysit` here), by its full path.
    assert words[3:6] == [os.path.abspath(sys.executable), "-m", "babysit"]
    assert words[6:6 + len(command) - 1] == command[1:]
    assert words[-3:] == [">>", str(tmp_path / "babysit-schedule.log"), "2>&1"]


def test_systemd_timer_and_service(tmp_path: Path):
    done = schedule("--every", "90m", "--systemd", "--name", "gpt2", "--", "babysit",
                    "my log%.txt", "--once", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "OnUnitActiveSec=5400s" in done.stdout
    exec_line = next(text for text in done.stdout.splitlines()
                     if text.startswith("ExecStart="))
    words = shlex.split(exec_line[len("ExecStart="):].replace("%%", "%"))
    assert words == [os.path.abspath(sys.executable), "-m", "babysit", "my log%.txt", "--once"]
    assert f"WorkingDirectory={tmp_path}" in done.stdout


def test_babysit_started_by_its_full_path_is_named_by_it(tmp_path: Path):
    # A console script as pip writes it, in a folder on no PATH (cron's is /usr/bin:/bin).
    program = tmp_path / "venv" / "bin" / "babysit"
    program.parent.mkdir(parents=True)
    program.write_text(f"#!{sys.executable}\nimport sys\nfrom babysit.entry import main\n"
                       "sys.exit(main())\n")
    program.chmod(0o755)
    done = subprocess.run([str(program), "schedule", "--every", "10m", "--", "babysit",
                           "train.log", "--once"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    line = next(text for text in done.stdout.splitlines() if not text.startswith("#"))
    words = shlex.split(line.split(" ", 5)[5])
    assert words[3:6] == [str(program), "train.log", "--once"]


def test_bad_interval_is_a_usage_error(tmp_path: Path):
    assert schedule("--every", "7m", "--", "babysit", "x", cwd=tmp_path).returncode == 2

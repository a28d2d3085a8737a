"""Nothing babysit prints or proposes can carry a command: the commands it proposes are
built from parts checked against their grammar and quoted; a crontab line or systemd
unit refuses control characters; a value that would reach ssh as an option is a usage
error (exit 2); `babysit` itself is named by the full path of the one running."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import babysit

PAYLOAD = "__import__('os').system('touch${IFS}PWNED')"  # no space: a space is refused anyway


def usage_error(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("value", [
    f'projects/my-proj/locations/us"+{PAYLOAD}+"/pipelineJobs/j1',
    f'projects/my-proj");{PAYLOAD};("/locations/us-central1/pipelineJobs/j1',
    f'projects/my-proj/locations/us-central1/pipelineJobs/j1");{PAYLOAD};("',
    "projects/my-proj/locations/us-central1/pipelineJobs/j1\nrm -rf x",
])
def test_a_vertex_resource_name_carrying_code_is_refused_at_start(tmp_path: Path, value: str):
    done = babysit("--vertex-pipeline", value, "--once", cwd=tmp_path)
    usage_error(done)
    assert not (tmp_path / "babysit-training.json").exists()
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("args", [
    ["--slurm", "123", "--ssh", "-oProxyCommand=touch${IFS}PWNED"],
    ["--slurm", "123", "--ssh", "-v"],
    ["--slurm", "123", "--ssh", "me@-v"],
    ["--", "-oProxyCommand:/runs/train.log"],
    ["--", "ssh://-v/runs/train.log"],
    ["--", "me@-v:/runs/train.log"],
    ["--pid", "1", "--", "-v:/runs/train.log"],
    ["--mlflow", "abc", "--fallback-log", "-v:/runs/train.log"],
    ["--slurm", "12²"],
    ["--slurm", "12\n34"],
    ["--k8s", "job/x", "--context", "prod\nkubectl delete ns default"],
    ["--k8s", "job/x", "--context", "-oops"],
])
def test_a_value_that_ssh_or_kubectl_would_take_for_more_is_a_usage_error(tmp_path: Path,
                                                                           args: list[str]):
    done = babysit("--once", *args, cwd=tmp_path)  # after `--`, every word is a TARGET
    usage_error(done)
    assert not (tmp_path / "PWNED").exists()


def schedule(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return babysit("schedule", *args, cwd=cwd)


@pytest.mark.parametrize("args", [
    ["--", "babysit", "x.log\n* * * * * touch /tmp/PWNED", "--once"],
    ["--log", "out.log\n* * * * * touch /tmp/PWNED", "--", "babysit", "x.log"],
    ["--systemd", "--", "babysit", "x.log\nExecStartPost=/bin/touch /tmp/PWNED"],
    ["--", "babysit", "x.log\r", "--once"],
    ["--", "babysit", "x\x1b]0;t\x07.log"],
])
def test_schedule_refuses_control_characters(tmp_path: Path, args: list[str]):
    done = schedule("--every", "10m", *args, cwd=tmp_path)
    usage_error(done)
    assert "PWNED" not in done.stdout


def test_schedule_refuses_a_working_directory_with_a_newline(tmp_path: Path):
    here = tmp_path / "runs\n* * * * * touch PWNED"
    here.mkdir()
    for extra in ([], ["--systemd"]):
        done = schedule("--every", "10m", *extra, "--", "babysit", "x.log", cwd=here)
        usage_error(done)
        assert "PWNED" not in done.stdout


def test_schedule_names_the_running_babysit_and_quotes_every_part(tmp_path: Path):
    # A real `python -m babysit`: the name it gives itself comes from how it was started.
    done = subprocess.run([sys.executable, "-m", "babysit", "schedule", "--every", "10m", "--",
                           "babysit", "a b.log", "--run-id", "$(id);`id`"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if not line.startswith("#")]
    assert len(lines) == 1
    words = shlex.split(lines[0].split(" ", 5)[5])
    assert words[3:] == [os.path.abspath(sys.executable), "-m", "babysit", "a b.log",
                         "--run-id", "$(id);`id`", ">>",
                         str(tmp_path / "babysit-schedule.log"), "2>&1"]


def test_the_rewatch_command_names_the_running_babysit(tmp_path: Path):
    (tmp_path / "train.log").write_text("step 1/50 | loss=2.0\nstep 2/50 | loss=1.9\n")
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert done.returncode == 3
    commands = json.loads((tmp_path / "babysit-training.json").read_text())["next_commands"]
    rewatch = [shlex.split(c) for c in commands if "--out-dir" in c]
    assert rewatch and rewatch[0][:3] == [os.path.abspath(sys.executable), "-m", "babysit"]


def test_a_log_named_like_an_option_stays_a_path_in_the_rewatch_command(tmp_path: Path):
    """A log directory may hold a file named `--judge=sh -c … #.log`: the command babysit
    proposes, run as given, must read it as a path (after `--`), never as an option that
    runs a program."""
    (tmp_path / "train.log").write_text("".join(f"step {i}/100 | loss={2 - i / 100:.3f}\n"
                                                for i in range(1, 30)))
    hostile = "--judge=sh -c 'touch PWNED' #.log"
    (tmp_path / hostile).write_text("x\n")
    done = babysit("--once", "--out-dir", "out", "--", hostile, "train.log", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    commands = json.loads((tmp_path / "out" / "babysit-training.json").read_text())[
        "next_commands"]
    [rewatch] = [shlex.split(c) for c in commands if "--out-dir" in " ".join(c.split()[:9])]
    assert rewatch[rewatch.index("--") + 1:] == [hostile, "train.log"]
    again = subprocess.run(rewatch, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert again.returncode == 3, again.stderr
    assert not (tmp_path / "PWNED").exists()


def test_no_rewatch_command_for_a_path_the_sanitiser_would_change(tmp_path: Path):
    """`exp\\e[0m.log` with its escape stripped is `exp.log`, another file: the command
    that watches again is left out rather than offered for the wrong file."""
    name = "exp\x1b[0m.log"
    (tmp_path / name).write_text("step 1/50 | loss=2.0\nstep 2/50 | loss=1.9\n")
    done = babysit(name, "--once", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    commands = json.loads((tmp_path / "babysit-training.json").read_text())["next_commands"]
    assert not any("babysit" in c for c in commands)

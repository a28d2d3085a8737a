"""`next_commands` as an agent uses them: each one is run as given (no shell), keeps the
caller's mode and ends; none repeats a watch whose verdict is already final."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import artifact_in

RUNNING = "".join(f"step {s}/500 | loss={3 - s * 0.01:.2f}\n" for s in range(1, 20))


def babysit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "babysit", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=120)


def watches(commands: list[str]) -> list[list[str]]:
    return [argv for argv in map(shlex.split, commands) if "babysit" in argv]


def options(args: list[str]) -> dict[str, str | None]:
    """`--flag value` and bare `--flag`, in any order."""
    found: dict[str, str | None] = {}
    args = [part for arg in args
            for part in (arg.split("=", 1) if arg.startswith("--") else [arg])]
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            following = args[i + 1] if i + 1 < len(args) else None
            found[arg] = None if following is None or following.startswith("--") else following
    return found


def test_after_a_nan_no_next_command_watches_again(tmp_path: Path):
    (tmp_path / "train.log").write_text(RUNNING + "step 20/500 | loss=nan\n")
    done = babysit("train.log", "--once", "--json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    commands = artifact_in(tmp_path)["next_commands"]
    assert watches(commands) == []
    assert any(c.startswith("grep -n") for c in commands) and \
        any(c.startswith("tail -n 80") for c in commands)


@pytest.mark.parametrize("mode", [
    ["--once", "--json"],
    ["--json", "--until-event", "--timeout", "1s", "--no-fix"],
    ["--max-polls", "1", "--interval", "0.5"],
])
def test_the_watch_again_command_keeps_the_callers_mode_and_ends(tmp_path: Path,
                                                                  mode: list[str]):
    (tmp_path / "train.log").write_text(RUNNING)
    first = babysit("train.log", *mode, "--gpus", "8", cwd=tmp_path)
    assert first.returncode == 3, first.stderr
    [again] = watches(artifact_in(tmp_path)["next_commands"])
    assert again[:3] == [sys.executable, "-m", "babysit"]
    assert again[-2:] == ["--", "train.log"]  # the path last, after `--`
    assert options(again[3:-2]) == options([*mode, "--gpus", "8", "--out-dir", "."])
    # An agent runs it as given: it stops by itself, the same way the first one did.
    second = subprocess.run(again, cwd=tmp_path, text=True, capture_output=True, timeout=120)
    assert second.returncode == 3, second.stderr
    if "--json" in mode:
        assert all(json.loads(line) for line in second.stdout.splitlines())
    assert watches(artifact_in(tmp_path)["next_commands"]) == [again]

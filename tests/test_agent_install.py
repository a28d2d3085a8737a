"""`babysit agent install` in a temporary project (and a temporary HOME)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from babysit.agent.install import _stamped


def agent(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "babysit", "agent", "install", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(home)})


def test_claude_project_install_writes_command_and_skill(tmp_path: Path):
    done = agent("--for", "claude", cwd=tmp_path, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    command = (tmp_path / ".claude" / "commands" / "babysit.md").read_text()
    skill = (tmp_path / ".claude" / "skills" / "babysit-training" / "SKILL.md").read_text()
    assert command.startswith("---\ndescription:") and "$ARGUMENTS" in command
    assert "--until-event" in command and "approval" in command
    assert skill.startswith("---\nname: babysit-training\n")
    assert not (tmp_path / "home").exists()


def test_reinstall_leaves_a_changed_file_alone_unless_forced(tmp_path: Path):
    home = tmp_path / "home"
    agent("--for", "claude", cwd=tmp_path, home=home)
    command = tmp_path / ".claude" / "commands" / "babysit.md"
    command.write_text(command.read_text() + "\nMy own note.\n")
    kept = agent("--for", "claude", cwd=tmp_path, home=home)
    assert kept.returncode == 1 and "kept (changed by you" in kept.stdout
    assert "My own note." in command.read_text()
    forced = agent("--for", "claude", "--force", cwd=tmp_path, home=home)
    assert forced.returncode == 0 and "My own note." not in command.read_text()


def test_an_older_untouched_babysit_file_is_updated(tmp_path: Path):
    command = tmp_path / ".claude" / "commands" / "babysit.md"
    command.parent.mkdir(parents=True)
    command.write_text(_stamped("an older version of the command"))
    done = agent("--for", "claude", cwd=tmp_path, home=tmp_path / "home")
    assert f"updated: {command}" in done.stdout
    assert "$ARGUMENTS" in command.read_text()


def test_codex_installs_into_the_user_home(tmp_path: Path):
    home = tmp_path / "home"
    done = agent("--for", "codex", "--scope", "user", cwd=tmp_path, home=home)
    assert done.returncode == 0, done.stderr
    assert (home / ".codex" / "prompts" / "babysit.md").is_file()
    # Codex only reads ~/.codex: without --scope it goes there; a project scope is refused.
    again = agent("--for", "codex", cwd=tmp_path, home=home)
    assert again.returncode == 0 and "babysit.md" in again.stdout
    assert agent("--for", "codex", "--scope", "project", cwd=tmp_path, home=home).returncode \
        == 2


def test_print_writes_nothing(tmp_path: Path):
    done = agent("--for", "claude", "--print", cwd=tmp_path, home=tmp_path / "home")
    assert "# " + str(tmp_path / ".claude" / "commands" / "babysit.md") in done.stdout
    assert not (tmp_path / ".claude").exists()

"""`babysit agent install` never writes outside the scope it was given, whatever a
cloned repository planted there."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.forked_cli import python_m_babysit
from tests.test_agent_install import agent


def said(text: str) -> str:
    """An error message as words, whatever box or wrapping the terminal output has."""
    return " ".join(text.replace("│", " ").split())


def test_a_symlink_out_of_the_project_is_refused_even_with_force(tmp_path: Path):
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".claude" / "commands").mkdir(parents=True)
    outside.mkdir()
    victim = outside / "precious.md"
    victim.write_text("keep me")
    (project / ".claude" / "commands" / "babysit.md").symlink_to(victim)
    for args in ([], ["--force"]):
        done = agent("--for", "claude", *args, cwd=project, home=tmp_path / "home")
        assert done.returncode == 2 and "symbolic link" in said(done.stderr)
        assert "Traceback" not in done.stderr
    assert victim.read_text() == "keep me"


def test_a_linked_directory_is_refused_too(tmp_path: Path):
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / ".claude").symlink_to(outside)
    done = agent("--for", "claude", "--force", cwd=project, home=tmp_path / "home")
    assert done.returncode == 2 and "symbolic link" in said(done.stderr)
    assert list(outside.iterdir()) == []


def test_a_directory_or_a_file_in_the_way_is_a_clear_error(tmp_path: Path):
    first, second = tmp_path / "a", tmp_path / "b"
    (first / ".claude" / "commands" / "babysit.md").mkdir(parents=True)
    done = agent("--for", "claude", cwd=first, home=tmp_path / "home")
    assert done.returncode == 2 and "is a directory" in said(done.stderr)
    second.mkdir()
    (second / ".claude").write_text("not a directory")
    done = agent("--for", "claude", cwd=second, home=tmp_path / "home")
    assert done.returncode == 2 and "is a file" in said(done.stderr)
    assert "Traceback" not in done.stderr


def test_a_fifo_where_the_command_goes_is_refused_at_once_even_with_force(tmp_path: Path):
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    os.mkfifo(commands / "babysit.md")
    for args in ([], ["--force"]):
        done = agent("--for", "claude", *args, cwd=tmp_path, home=tmp_path / "home")
        assert done.returncode == 2 and "is not a regular file" in said(done.stderr)
        assert "Traceback" not in done.stderr
    assert stat.S_ISFIFO(os.lstat(commands / "babysit.md").st_mode)  # left as it was


@pytest.mark.parametrize("home", ["", "relative/home", " "])
def test_an_empty_or_relative_home_is_refused_for_the_user_scope(tmp_path: Path, home: str):
    done = python_m_babysit("agent", "install", "--for", "codex", cwd=tmp_path,
                            env={**os.environ, "HOME": home})
    assert done.returncode == 2 and "HOME is" in said(done.stderr)
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written here (nor under /)

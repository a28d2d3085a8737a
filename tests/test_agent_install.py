"""`babysit agent install` in a temporary project (and a temporary HOME)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from babysit.agent.install import _stamped
from babysit.exit_codes import ExitCode
from tests.forked_cli import python_m_babysit


def agent(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return python_m_babysit("agent", "install", *args, cwd=cwd,
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


def _installed(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    assert agent("--for", "claude", cwd=tmp_path, home=home).returncode == 0
    assert agent("--for", "codex", "--scope", "user", cwd=tmp_path, home=home).returncode == 0
    return {"claude": (tmp_path / ".claude" / "commands" / "babysit.md").read_text(),
            "codex": (home / ".codex" / "prompts" / "babysit.md").read_text(),
            "skill": (home / ".codex" / "skills" / "babysit-training" / "SKILL.md").read_text()}


def test_every_babysit_call_an_agent_is_told_to_make_ends_within_its_tool_timeout(
        tmp_path: Path):
    # Claude Code's Bash tool: 2 minutes by default; Codex's shell tool: `timeout_ms`,
    # which the Codex prompt sets to 120000. babysit must answer (--timeout) before that.
    for name, text in _installed(tmp_path).items():
        calls = re.findall(r"`babysit <target>[^`]*`", text)
        assert calls, name
        for call in calls:
            in_background = call.rstrip("`").endswith("&")
            if ("--until-event" in call or "--once" in call) and not in_background:
                found = re.search(r"--timeout (\d+)s", call)
                assert found and int(found.group(1)) <= 100, (name, call)
        assert "--timeout 9m" not in text, name


def test_the_agent_files_cover_every_exit_code_and_every_kind_of_target(tmp_path: Path):
    files = _installed(tmp_path)
    for name in ("claude", "codex"):
        for code in ExitCode:
            assert f"`{int(code)}`" in files[name], (name, code)
    for name, text in files.items():
        for target in ("--slurm", "--k8s", "TensorBoard", "--pid", "--wandb", "user@host"):
            assert target in text, (name, target)


def test_claude_may_run_the_reading_commands_next_commands_propose(tmp_path: Path):
    front = _installed(tmp_path)["claude"].split("---")[1]
    tools = re.search(r"^allowed-tools: (.*)$", front, re.M)
    assert tools is not None
    for program in ("babysit", "tail", "grep"):
        assert f"Bash({program}:*)" in tools.group(1)
    assert "kill" not in tools.group(1)


def test_the_codex_prompt_is_written_for_codex(tmp_path: Path):
    files = _installed(tmp_path)
    assert files["codex"] != files["claude"]
    assert "timeout_ms" in files["codex"] and "sandbox" in files["codex"]
    assert "Claude" not in files["codex"] and "allowed-tools" not in files["codex"]
    assert "$ARGUMENTS" in files["codex"]

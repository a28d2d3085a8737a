"""`babysit agent install`: put the slash command and the skill where an agent looks.

Every file written carries a marker with the hash of its text. A file that is already
there is replaced only if it is still exactly what babysit wrote (an older version is
fine); a file the user changed, or one babysit did not write, is left alone unless the
user says --force."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

_MARKER = re.compile(r"\n<!-- babysit:agent-file sha256=([0-9a-f]{64}) -->\n?$")


class InstallError(Exception):
    pass


@dataclass(frozen=True)
class Planned:
    path: Path
    text: str


@dataclass(frozen=True)
class Outcome:
    path: Path
    status: str  # "written", "unchanged", "updated", "kept (changed by you; --force replaces it)"


def _template(name: str) -> str:
    return resources.files("babysit.agent").joinpath(name).read_text(encoding="utf-8")


def _stamped(text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"{text.rstrip()}\n\n<!-- babysit:agent-file sha256={digest} -->\n"


def plan(agent: str, scope: str, project: Path, home: Path) -> list[Planned]:
    """The files for `agent` ("claude" or "codex") at `scope` ("project" or "user")."""
    command, skill = _stamped(_template("command.md")), _stamped(_template("skill.md"))
    if agent == "claude":
        base = project / ".claude" if scope == "project" else home / ".claude"
        return [Planned(base / "commands" / "babysit.md", command),
                Planned(base / "skills" / "babysit-training" / "SKILL.md", skill)]
    if agent == "codex":
        if scope == "project":
            raise InstallError("Codex reads custom prompts from ~/.codex only: use --scope user")
        base = home / ".codex"
        return [Planned(base / "prompts" / "babysit.md", command),
                Planned(base / "skills" / "babysit-training" / "SKILL.md", skill)]
    raise InstallError(f"unknown agent {agent!r}: choose claude or codex")


def _ours_and_untouched(existing: str) -> bool:
    match = _MARKER.search(existing)
    if match is None:
        return False
    body = existing[: match.start()]
    return hashlib.sha256(body.rstrip().encode()).hexdigest() == match.group(1)


def install(files: list[Planned], force: bool = False) -> list[Outcome]:
    outcomes = []
    for item in files:
        if item.path.exists():
            existing = item.path.read_text(encoding="utf-8", errors="replace")
            if existing == item.text:
                outcomes.append(Outcome(item.path, "unchanged"))
                continue
            if not force and not _ours_and_untouched(existing):
                outcomes.append(Outcome(item.path,
                                        "kept (changed by you; --force replaces it)"))
                continue
            status = "updated"
        else:
            status = "written"
        item.path.parent.mkdir(parents=True, exist_ok=True)
        item.path.write_text(item.text, encoding="utf-8")
        outcomes.append(Outcome(item.path, status))
    return outcomes

"""`babysit agent install`: put the slash command and the skill where an agent looks.

Every file written carries a marker with the hash of its text. A file that is already
there is replaced only if it is still exactly what babysit wrote (an older version is
fine); a file the user changed, or one babysit did not write, is left alone unless the
user says --force."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from babysit import lazy_re
from babysit.safe_files import UnsafeFile, check_replaceable, read_regular

_MARKER = lazy_re.compile(r"\n<!-- babysit:agent-file sha256=([0-9a-f]{64}) -->\n?$")
MAX_EXISTING_BYTES = 1024 * 1024  # the files babysit writes are a few kB


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


def user_home(environ: Mapping[str, str] | None = None) -> Path:
    """The home directory for --scope user: $HOME when set, else the password database's.
    Raises InstallError for a HOME that is empty or relative: files meant for ~ would land
    under / or the current directory."""
    environ = os.environ if environ is None else environ
    home = environ.get("HOME")
    if home is None:
        return Path.home()
    if not home.strip():
        raise InstallError("HOME is empty: set it to your home directory to install for "
                           "--scope user")
    if not os.path.isabs(home):
        raise InstallError(f"HOME is a relative path ({home!r}): set it to your home "
                           f"directory (an absolute path) to install for --scope user")
    return Path(home)


def plan(agent: str, scope: str, project: Path, home: Path) -> list[Planned]:
    """The files for `agent` ("claude" or "codex") at `scope` ("project" or "user")."""
    skill = _stamped(_template("skill.md"))
    if agent == "claude":
        base = project / ".claude" if scope == "project" else home / ".claude"
        return [Planned(base / "commands" / "babysit.md", _stamped(_template("command.md"))),
                Planned(base / "skills" / "babysit-training" / "SKILL.md", skill)]
    if agent == "codex":
        if scope == "project":
            raise InstallError("Codex reads custom prompts from ~/.codex only: use --scope user")
        base = home / ".codex"
        # Codex's own prompt: its shell tool, time limit and sandbox are not Claude's.
        return [Planned(base / "prompts" / "babysit.md", _stamped(_template("codex_prompt.md"))),
                Planned(base / "skills" / "babysit-training" / "SKILL.md", skill)]
    raise InstallError(f"unknown agent {agent!r}: choose claude or codex")


def _ours_and_untouched(existing: str) -> bool:
    match = _MARKER.search(existing)
    if match is None:
        return False
    body = existing[: match.start()]
    return hashlib.sha256(body.rstrip().encode()).hexdigest() == match.group(1)


def install(files: list[Planned], root: Path, force: bool = False) -> list[Outcome]:
    """Write the planned files under `root` (the project, or the home directory).

    Nothing outside `root` is ever touched: a symbolic link on the way — a file or a
    directory, planted by a cloned repository, say — is refused, not followed, even with
    --force. Each file is written to a temporary file and renamed into place. Raises
    InstallError with a message for the user."""
    outcomes = []
    for item in files:
        _check_inside(item.path, root)
        if item.path.is_dir():
            raise InstallError(f"{item.path} is a directory; move it away to install here")
        if item.path.exists():
            try:
                # A FIFO or a device where the file belongs is refused before any read
                # (a FIFO would hang it), and never replaced, even with --force.
                check_replaceable(item.path)
                existing = read_regular(item.path, MAX_EXISTING_BYTES).decode(
                    "utf-8", errors="replace")
            except UnsafeFile as error:
                raise InstallError(str(error)) from error
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
        try:
            _write_atomically(item.path, item.text)
        except OSError as error:
            raise InstallError(f"cannot write {item.path}: {error.strerror or error}") from error
        outcomes.append(Outcome(item.path, status))
    return outcomes


def _check_inside(path: Path, root: Path) -> None:
    """Every component from `root` down to `path` must be a real directory (or missing)."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            raise InstallError(f"{current} is a symbolic link (to {os.readlink(current)}): "
                               f"babysit does not write through links; remove it to install")
        if current != path and current.exists() and not current.is_dir():
            raise InstallError(f"{current} is a file, where babysit needs a directory")


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temp, 0o644)
        os.replace(temp, path)  # replaces a file; never follows a link at `path`
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise

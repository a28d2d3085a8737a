"""Where running sessions publish their dashboard document, so `babysit serve` finds
every one on this machine: a per-user runtime directory (0700, ours, checked every time),
one file per session, written atomically each poll. A session file is read only when it
is a regular file of ours, not a link, under a size cap, named after a live babysit
process; the file of a session whose process is gone is removed. A session that ended
leaves its last document (`ended-PID-TIME.json`) listed for an hour."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from babysit import lazy_re
from babysit.artifact import write_text_atomically
from babysit.safe_files import UnsafeFile, ensure_private_dir, read_regular

# A long run's document is downsampled to ~2,000 points per metric: well under this.
MAX_SESSION_BYTES = 8 * 1024 * 1024
MAX_SESSIONS = 64
_SESSION_NAME = lazy_re.compile(r"session-([1-9][0-9]{0,9})\.json")


def runtime_dir() -> Path:
    """This user's runtime directory, created 0700. Raises UnsafeFile when it is not a
    directory of ours closed to others."""
    base = os.environ.get("BABYSIT_RUNTIME_DIR") or os.environ.get("XDG_RUNTIME_DIR")
    path = Path(base) / "babysit" if base else Path(tempfile.gettempdir()) / \
        f"babysit-{os.getuid()}"
    return ensure_private_dir(path)


def publish(entry: dict[str, Any], directory: Path | None = None) -> None:
    """Raises OSError or UnsafeFile."""
    directory = directory or runtime_dir()
    write_text_atomically(directory / f"session-{os.getpid()}.json",
                          json.dumps(entry, allow_nan=False), mode=0o600)


# A session that ended stays on the page this long with its last document: the run
# that failed while nobody looked is what the page is for.
ENDED_KEEP_SECONDS = 3600
_ENDED_NAME = lazy_re.compile(r"ended-([1-9][0-9]{0,9})-([0-9]{1,12})\.json")


def withdraw(directory: Path | None = None, keep: bool = True) -> None:
    """The session ends: its last document is kept as ended (for ENDED_KEEP_SECONDS)
    when it holds a verdict worth seeing later (`keep`: not after an interruption, whose
    run may well go on), no longer as a live session."""
    with contextlib.suppress(OSError, UnsafeFile):
        directory = directory or runtime_dir()
        pid = os.getpid()
        live = directory / f"session-{pid}.json"
        if keep:
            os.replace(live, directory / f"ended-{pid}-{int(time.time())}.json")
        else:
            live.unlink()


def collect(directory: Path | None = None) -> list[dict[str, Any]]:
    """The entries of live sessions, oldest first (at most MAX_SESSIONS); dead sessions'
    files are removed; a file that is not a session we can trust is skipped."""
    directory = directory or runtime_dir()
    entries = []
    for path in sorted(directory.glob("session-*.json")):
        named = _SESSION_NAME.fullmatch(path.name)
        if named is None:
            continue
        pid = int(named.group(1))
        if not _ours_and_alive(pid):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        entry = _read_session(path)
        if entry is not None and entry.get("babysit_pid") == pid:
            entries.append(entry)
            if len(entries) == MAX_SESSIONS:
                break
    entries.extend(_ended(directory, MAX_SESSIONS - len(entries)))
    entries.sort(key=lambda e: str(e.get("started_at", "")))
    return entries


def _ended(directory: Path, room: int) -> list[dict[str, Any]]:
    """The last documents of sessions that ended within ENDED_KEEP_SECONDS, newest
    first; older ones are removed."""
    found: list[tuple[int, Path, int]] = []
    now = time.time()
    for path in directory.glob("ended-*.json"):
        named = _ENDED_NAME.fullmatch(path.name)
        if named is None:
            continue
        ended_at = int(named.group(2))
        if now - ended_at > ENDED_KEEP_SECONDS:
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        found.append((ended_at, path, int(named.group(1))))
    entries = []
    for _, path, pid in sorted(found, reverse=True)[:max(room, 0)]:
        entry = _read_session(path)
        if entry is not None and entry.get("babysit_pid") == pid:
            entries.append(entry)
    return entries


def _read_session(path: Path) -> dict[str, Any] | None:
    try:
        # NaN/Infinity are refused: babysit never writes them (allow_nan=False), and the
        # document built from the entries must be strict JSON for the page and agents.
        entry = json.loads(read_regular(path, MAX_SESSION_BYTES, private=True),
                           parse_constant=_not_json)
    except (UnsafeFile, ValueError, RecursionError):
        return None  # being replaced, damaged, forged or nested too deep: not shown
    return entry if isinstance(entry, dict) else None


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _ours_and_alive(pid: int) -> bool:
    """A process of this user is running as `pid` (another user's process cannot be one
    of our sessions)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError, OverflowError):
        return False
    return True

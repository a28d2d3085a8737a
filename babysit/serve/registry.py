"""Where running sessions publish their dashboard document, so `babysit serve` finds
every one on this machine: a per-user runtime directory, one file per session, written
atomically each poll; the file of a session whose process is gone is removed."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from babysit.artifact import write_text_atomically


def runtime_dir() -> Path:
    base = os.environ.get("BABYSIT_RUNTIME_DIR") or os.environ.get("XDG_RUNTIME_DIR")
    path = Path(base) / "babysit" if base else Path(tempfile.gettempdir()) / \
        f"babysit-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def publish(entry: dict[str, Any], directory: Path | None = None) -> None:
    directory = directory or runtime_dir()
    write_text_atomically(directory / f"session-{os.getpid()}.json",
                          json.dumps(entry, allow_nan=False), mode=0o600)


def withdraw(directory: Path | None = None) -> None:
    with contextlib.suppress(OSError):
        ((directory or runtime_dir()) / f"session-{os.getpid()}.json").unlink()


def collect(directory: Path | None = None) -> list[dict[str, Any]]:
    """The entries of live sessions, oldest first; dead sessions' files are removed."""
    directory = directory or runtime_dir()
    entries = []
    for path in sorted(directory.glob("session-*.json")):
        try:
            pid = int(path.stem.removeprefix("session-"))
        except ValueError:
            continue
        if not _alive(pid):
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # being replaced, or damaged: next time
        if isinstance(entry, dict):
            entries.append(entry)
    entries.sort(key=lambda e: str(e.get("started_at", "")))
    return entries


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

"""Who writes a file on this machine, read from /proc alone (no psutil: a `--once` on an
old log asks this, and start-up stays short)."""

from __future__ import annotations

import contextlib
import os
import time

# A machine with thousands of processes and open files is read for this long at most;
# past it, babysit cannot tell.
_SCAN_SECONDS = 1.0


def has_writer(path: str) -> bool | None:
    """Whether any process on this machine holds `path` open for writing; None when that
    cannot be told: a process of the file's owner whose open files babysit may not read
    (without root, another user's processes are hidden, but they are not the ones that
    write a user's own log), a file that cannot be looked at, or a machine too busy to
    read within a second."""
    try:
        wanted = os.stat(path)
        entries = list(os.scandir("/proc"))
    except OSError:
        return None
    own = os.getpid()
    unknown = False
    deadline = time.monotonic() + _SCAN_SECONDS
    for entry in entries:
        if time.monotonic() > deadline:
            return None
        if not entry.name.isdecimal() or int(entry.name) == own:
            continue
        pid = int(entry.name)
        try:
            os.listdir(f"/proc/{pid}/fd")
        except FileNotFoundError:
            continue  # gone meanwhile
        except OSError:
            with contextlib.suppress(OSError):
                unknown = unknown or entry.stat().st_uid == wanted.st_uid
            continue
        if writes(pid, wanted):
            return True
    return None if unknown else False


def writes(pid: int, wanted: os.stat_result) -> bool:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            info = os.stat(f"/proc/{pid}/fd/{fd}")
            if (info.st_dev, info.st_ino) != (wanted.st_dev, wanted.st_ino):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as handle:
                flags = next((line.split()[1] for line in handle if line.startswith("flags:")),
                             "0")
        except (OSError, IndexError):
            continue
        if int(flags, 8) & (os.O_WRONLY | os.O_RDWR):
            return True
    return False

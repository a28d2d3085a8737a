"""Files the dashboard trusts on a shared machine: its runtime directory, the session
files in it, a token file. Each is checked before it is read: a directory of ours and no
one else's (0700), regular files opened without following links, never more bytes than
a cap. Anything else is refused with one line that says why and what to do."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnsafeFile(Exception):
    """A file or directory the dashboard will not use; the message says why."""


def ensure_private_dir(path: Path) -> Path:
    """`path`, created 0700 when missing. Raises UnsafeFile when it is not a directory
    (a link, a file), is not ours, or others may use it (any group/other bit): another
    user who can write there could forge sessions or read the token."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise UnsafeFile(f"cannot create the runtime directory {path}: "
                         f"{error.strerror or error}") from error
    try:
        info = os.lstat(path)
    except OSError as error:
        raise UnsafeFile(f"cannot use the runtime directory {path}: "
                         f"{error.strerror or error}") from error
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFile(f"the runtime directory {path} is not a directory (a link or a "
                         f"file): remove it or set BABYSIT_RUNTIME_DIR")
    if info.st_uid != os.getuid():
        raise UnsafeFile(f"the runtime directory {path} belongs to another user (uid "
                         f"{info.st_uid}): set BABYSIT_RUNTIME_DIR to a directory of yours")
    if info.st_mode & 0o077:
        raise UnsafeFile(f"the runtime directory {path} is open to other users (mode "
                         f"{stat.S_IMODE(info.st_mode):o}): chmod 700 it, or set "
                         f"BABYSIT_RUNTIME_DIR")
    return path


def read_regular(path: Path, limit: int, *, follow: bool = False,
                 private: bool = False) -> bytes:
    """At most `limit` bytes of a regular file. Raises UnsafeFile for a link (unless
    `follow`), a FIFO, a device or a directory (refused before any read: nothing blocks),
    a file over `limit`, or, with `private`, one that others can read or that is not
    ours. OSError (missing, unreadable) is raised as UnsafeFile too."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        reason = "a symbolic link" if not follow and _is_link(path) else \
            (error.strerror or str(error))
        raise UnsafeFile(f"cannot read {path}: {reason}") from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{path} is not a regular file")
        if private and info.st_uid != os.getuid():
            raise UnsafeFile(f"{path} belongs to another user (uid {info.st_uid})")
        if private and info.st_mode & 0o077:
            raise UnsafeFile(f"{path} is readable or writable by other users (mode "
                             f"{stat.S_IMODE(info.st_mode):o}): chmod 600 it")
        if info.st_size > limit:
            raise UnsafeFile(f"{path} is larger than {limit:,} bytes")
        data = _read_upto(fd, limit + 1)  # it may have grown since fstat
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UnsafeFile(f"{path} is larger than {limit:,} bytes")
    return data


def _read_upto(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    left = count
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _is_link(path: Path) -> bool:
    try:
        return path.is_symlink()
    except OSError:
        return False

"""Files babysit reads or replaces on a machine others may share: a trace, a token file,
the dashboard's runtime directory and its session files, an output path. Each is checked
before use: a regular file (a FIFO, a device or a directory refused at once, before any
read that could block or never end), never more bytes than a cap, without following a
link where a link would let someone else choose the file, a directory of ours and no one
else's (0700). Anything else is refused with one line that says why."""

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
    except FileExistsError as error:  # a file (or a link to one) where it belongs
        raise UnsafeFile(f"the runtime directory {path} is not a directory (a file or a "
                         f"link): remove it or set BABYSIT_RUNTIME_DIR") from error
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


def open_regular(path: Path, *, follow: bool = True) -> tuple[int, os.stat_result]:
    """A descriptor open for reading on the regular file `path`, and its stat. Raises
    UnsafeFile for a link (unless `follow`), a FIFO, a device, a socket or a directory,
    refused before any read (opened non-blocking: a FIFO without a writer does not
    hang), and for OSError (missing, unreadable)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        reason = "a symbolic link" if not follow and _is_link(path) else \
            (error.strerror or str(error))
        raise UnsafeFile(f"cannot read {path}: {reason}") from error
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UnsafeFile(f"{path} is not a regular file (a FIFO, a device, a socket or a "
                         f"directory)")
    os.set_blocking(fd, True)
    return fd, info


def read_regular(path: Path, limit: int, *, follow: bool = False,
                 private: bool = False) -> bytes:
    """At most `limit` bytes of a regular file (see `open_regular`). Raises UnsafeFile
    as it does, and for a file over `limit` or, with `private`, one that others can use
    or that is not ours."""
    fd, info = open_regular(path, follow=follow)
    try:
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


def check_replaceable(path: Path) -> None:
    """Raises UnsafeFile unless `path` is missing or a regular file: a device node
    (`/dev/full`, `/dev/null`), a FIFO, a socket or a directory is never replaced by a
    file babysit writes (as root, a rename over `/dev/null` would replace the device)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise UnsafeFile(f"cannot write {path}: {error.strerror or error}") from error
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile(f"{path} is not a regular file (a device, a FIFO or a directory): "
                         f"babysit writes only to a regular file or a new path")

"""A training log on this machine, followed incrementally (see `reading.follower`).

Shared: the local-log kind, the process kinds, Slurm and --fallback-log all read
logs with it; each imports it only when a log is opened."""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Hashable
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from babysit.clock import Waker
from babysit.config import ABANDONED_LOG_FLOOR
from babysit.reading.changes import GrowthWaker
from babysit.reading.encoding import SNIFF_BYTES, binary_kind
from babysit.reading.finders import OffsetFinder, local_finder
from babysit.reading.follower import TAIL_BYTES, LogFollower
from babysit.snapshot import Snapshot
from babysit.targets.base import TargetError, TargetUnavailable, cannot_open
from babysit.targets.common.log_paths import did_you_mean, logs_inside, not_found
from babysit.telemetry.writers import has_writer


class _LocalFile:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def mtime(self) -> float:
        return os.fstat(self.fd).st_mtime

    def read_at(self, offset: int, size: int) -> bytes:
        return os.pread(self.fd, size, offset)

    def close(self) -> None:
        os.close(self.fd)


class LocalFileAccess:
    def __init__(self, path: str, use_grep: bool = True,
                 wall_time: Callable[[], float] = time.time) -> None:
        self.path = path
        self._use_grep = use_grep
        self._wall_time = wall_time

    def identity(self) -> Hashable | None:
        info = os.stat(self.path)
        return (info.st_dev, info.st_ino)

    def open(self) -> tuple[_LocalFile, Hashable | None]:
        # Non-blocking: the path may have been replaced by a FIFO since it was checked.
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, "not a regular file")
        return _LocalFile(fd), (info.st_dev, info.st_ino)

    def offsets(self) -> OffsetFinder | None:
        return local_finder(self.path) if self._use_grep else None

    def now(self) -> float:
        return self._wall_time()


def _binary_kind(path: Path) -> str | None:
    """What the file at `path` is when it is no text log (reading.encoding), from its
    first bytes; None for text, or when it cannot be read (opening says why)."""
    try:
        with path.open("rb") as file:
            head = file.read(SNIFF_BYTES)
    except OSError:
        return None
    return binary_kind(head)


class LocalLogTarget:
    target_type: ClassVar[str] = "local-log"

    def __init__(self, path: str | os.PathLike[str], *, tail_bytes: int = TAIL_BYTES,
                 use_grep: bool = True, wall_time: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self._label = os.fspath(path)  # as the user wrote it: `./demo` stays `./demo`
        self._writer_seen: tuple[float, bool | None] | None = None  # (when, has_writer)
        self._follower = LogFollower(LocalFileAccess(str(self.path), use_grep, wall_time),
                                     tail_bytes)
        if not self.path.exists():
            raise TargetError(not_found(self._label))
        if self.path.is_dir():
            raise TargetError(f"{self._label} is a directory; give the path of the log file"
                              f"{did_you_mean(logs_inside(self._label))}")
        if not self.path.is_file():
            # Opening a FIFO blocks until a writer appears; a device never ends.
            kind = "a named pipe (FIFO)" if self.path.is_fifo() else "not a regular file"
            raise TargetError(f"{self.path} is {kind}: babysit follows log files (write the "
                              f"run's output to a file, e.g. `python train.py > train.log`)")
        binary = _binary_kind(self.path)
        if binary is not None:
            # Read as text it would be "0 % understood" and a verdict on nothing.
            hint = (" (decompress it first, e.g. `zcat train.log.gz > train.log`)"
                    if binary.endswith(("gzip archive", "bzip2 archive", "xz archive",
                                        "zstd archive")) else "")
            raise TargetError(f"{self._label} is not a text log: it looks like {binary}{hint}. "
                              f"Give the file the run writes its output to")
        try:
            self._follower.open()
        except OSError as error:
            raise cannot_open(str(self.path), error) from error

    @property
    def label(self) -> str:
        return self._label

    @property
    def log_path(self) -> str | None:
        return self._label

    def poll(self, final: bool = False) -> Snapshot:
        try:
            snapshot = self._follower.poll(final)
        except OSError as error:
            reason = error.strerror or str(error)
            raise TargetUnavailable(f"cannot read {self.path}: {reason}") from error
        quiet = snapshot.log.quiet_for
        if quiet is None or quiet < ABANDONED_LOG_FLOOR:
            return snapshot
        return replace(snapshot, log=replace(snapshot.log, writer_on_host=self._writer()))

    def _writer(self) -> bool | None:
        """Whether a process here writes the log: looked for at most once a minute, and
        only for a log quiet for an hour (the scan reads every process's open files)."""
        now = time.monotonic()
        if self._writer_seen is None or now - self._writer_seen[0] >= 60.0:
            self._writer_seen = (now, has_writer(str(self.path)))
        return self._writer_seen[1]

    def change_waker(self) -> Waker:
        return GrowthWaker([str(self.path)])

    def close(self) -> None:
        self._follower.close()

"""A training log on another host, followed over one SSH connection.

Bytes come over SFTP (stat, then read from the saved offset); the file's identity
(device and inode, for rotation) and the fast history scan (grep) use commands on the
same connection, every argument quoted. When the link drops the target says so
(`TargetUnavailable`: a connectivity problem, not a stalled run) and, on the next poll,
reconnects and continues at the saved offset, so no line is lost or read twice.
"""

from __future__ import annotations

import errno
import shlex
from collections.abc import Hashable, Iterator
from dataclasses import replace
from typing import ClassVar

import paramiko

from babysit.reading.finders import GREP_ARGS, OffsetFinder, offsets_from_grep
from babysit.reading.follower import TAIL_BYTES, LogFollower
from babysit.remote.address import RemoteAddress, sftp_path
from babysit.remote.connection import SshConnection, SshError, SshFatal, SshSettings
from babysit.snapshot import Snapshot
from babysit.targets.base import TargetError, TargetUnavailable, cannot_open


class _RemoteFile:
    def __init__(self, handle: paramiko.SFTPFile) -> None:
        self.handle = handle

    def size(self) -> int:
        return int(self.handle.stat().st_size or 0)

    def mtime(self) -> float:
        return float(self.handle.stat().st_mtime or 0)

    def read_at(self, offset: int, size: int) -> bytes:
        self.handle.seek(offset)
        return bytes(self.handle.read(size))

    def close(self) -> None:
        self.handle.close()


class SftpFileAccess:
    """SFTP for bytes and sizes; a `stat` command for the inode, only when the sizes
    suggest the path may name a different file (a remote command costs a server-side
    process start, tens of milliseconds; an SFTP stat costs one round trip)."""

    def __init__(self, connection: SshConnection, path: str) -> None:
        self.connection = connection
        self.path = path
        self._sftp_path = sftp_path(path)
        self._shell = True  # the account can run commands (not an SFTP-only jail)
        self._open: _RemoteFile | None = None
        self._identity: Hashable | None = None
        self._last_open_size = -1

    def identity(self) -> Hashable | None:
        if self._open is None:
            return self._inode()
        try:
            open_size = self._open.size()  # before the path's: an append in between
        except (OSError, EOFError) as error:  # only makes the path look bigger
            raise OSError(f"the connection dropped (lost the open remote file: {error})") \
                from error
        attrs = self.connection.sftp().stat(self._sftp_path)
        path_size = int(attrs.st_size or 0)
        stuck = path_size > open_size and open_size == self._last_open_size
        self._last_open_size = open_size
        other_mtime = path_size == open_size and attrs.st_mtime != self._open.mtime()
        if path_size < open_size or stuck or other_mtime:
            return self._inode()  # smaller, growing while ours is not, or other: check
        return self._identity

    def _inode(self) -> Hashable | None:
        if self._shell:
            status, out, err = self.connection.run(
                ["stat", "-L", "-c", "%d:%i", "--", self._sftp_path], timeout=10)
            if status == 0:
                return out.strip().decode(errors="replace")
            if b"No such file" in err:
                raise FileNotFoundError(errno.ENOENT, f"no such file: {self.path}")
            self._shell = False  # no GNU stat (or no shell): fall back to SFTP alone
        self.connection.sftp().stat(self._sftp_path)  # raises FileNotFoundError if gone
        return None

    def open(self) -> tuple[_RemoteFile, Hashable | None]:
        identity = self._inode()
        handle = _RemoteFile(self.connection.sftp().open(self._sftp_path, "rb"))
        self._open, self._identity, self._last_open_size = handle, identity, -1
        return handle, identity

    def offsets(self) -> OffsetFinder | None:
        if not self._shell:
            return None
        path = self._sftp_path

        def find(pattern: str, offset: int, end: int) -> Iterator[int]:
            script = (f"tail -c +{offset + 1} -- {shlex.quote(path)} | LC_ALL=C grep "
                      f"{' '.join(GREP_ARGS)} {shlex.quote(pattern)}")
            yield from offsets_from_grep(self.connection.stream(["sh", "-c", script]),
                                         offset, end)

        return find

    def now(self) -> float:
        return self.connection.now()


def _link_problem(error: BaseException) -> bool:
    """Errors that mean the connection, not the file, failed."""
    if isinstance(error, (SshError, EOFError, paramiko.SSHException)):
        return True
    return isinstance(error, OSError) and error.errno in (
        None, errno.EPIPE, errno.ECONNRESET, errno.ECONNABORTED, errno.ETIMEDOUT,
        errno.EHOSTUNREACH, errno.ENETUNREACH)


class RemoteLogTarget:
    target_type: ClassVar[str] = "remote-log"

    def __init__(self, text: str, address: RemoteAddress, *,
                 settings: SshSettings | None = None, tail_bytes: int = TAIL_BYTES,
                 connection: SshConnection | None = None) -> None:
        self._label = text
        self.address = address
        try:
            self.connection = connection or SshConnection(address, settings)
            self.connection.ensure()
        except SshError as error:
            raise TargetError(f"cannot connect to {address.display()}: {error}") from error
        self._follower = LogFollower(SftpFileAccess(self.connection, address.path), tail_bytes)
        try:
            self._follower.open()
        except FileNotFoundError as error:
            raise TargetError(f"remote log not found: {text}") from error
        except (OSError, SshError, EOFError, paramiko.SSHException) as error:
            raise cannot_open(text, error) from error
        self._notices = [f"connected to {self.connection.where} (SSH connection "
                         f"{self.connection.connects} of this session)"]
        self._notices += [f"trusted a new host key on first use: {k}"
                          for k in self.connection.trusted_new]
        self._seen_connects = self.connection.connects

    @property
    def label(self) -> str:
        return self._label

    def poll(self, final: bool = False) -> Snapshot:
        try:
            snapshot = self._follower.poll(final)
        except FileNotFoundError as error:
            self._follower.detach()
            raise TargetUnavailable(f"the remote log {self.address.path} cannot be opened: "
                                    f"it no longer exists") from error
        except Exception as error:
            if not _link_problem(error) and not isinstance(error, OSError):
                raise
            self.link_lost()
            kind = "authentication failed" if isinstance(error, SshFatal) else "unreachable"
            raise TargetUnavailable(f"{self.address.display()} {kind}: {error}") from error
        notices = list(self._notices)
        self._notices = []
        if self.connection.connects != self._seen_connects:
            self._seen_connects = self.connection.connects
            notices.append(f"reconnected to {self.connection.where} (SSH connection "
                           f"{self.connection.connects} of this session); continuing at byte "
                           f"{self._follower.offset}")
        if notices:
            snapshot = replace(snapshot, notices=tuple(notices) + snapshot.notices)
        return snapshot

    def link_lost(self) -> None:
        """The connection failed: let go of it; the next poll reconnects and goes on at
        the saved offset."""
        self._follower.detach()
        self.connection.drop()

    def close(self) -> None:
        self._follower.close()
        self.connection.close()

"""Logs on another host, told apart from paths on this one: `user@host:/path`,
`host:path` or `ssh://…`, checked before any of it reaches ssh.

Cheap to import (paramiko is an extra): the remote-log kind, the process kinds (a
remote log beside --pid), Slurm (--ssh) and the trackers' --fallback-log all read these."""

from __future__ import annotations

from pathlib import Path

from babysit import lazy_re
from babysit.remote.address import AddressError, RemoteAddress, parse_remote
from babysit.targets.base import TargetError
from babysit.targets.kinds import KindOption, KindUsageError

# The extra that brings paramiko: every kind that may read over SSH needs it.
SSH_EXTRA = "ssh"

_REMOTE = lazy_re.compile(r"^(?:ssh://|[\w.\-]+@[\w.\-\[\]:]+:|[\w.\-]+:(?!\\))")

SSH_ACCEPT_NEW = KindOption("--ssh-accept-new", "Trust an unknown SSH host key on first use "
                            "and record it (a changed key is still refused).", type=bool)


def looks_remote(spec: str) -> bool:
    """`user@host:/path`, `host:path` or `ssh://…`, unless a local file has that name."""
    return bool(_REMOTE.match(spec)) and not Path(spec).exists()


def remote_address(text: str) -> RemoteAddress:
    try:
        return parse_remote(text)
    except AddressError as error:
        raise TargetError(str(error)) from error


def remote_prefix(text: str) -> str:
    """`[user@host]`, as every line about a remote run starts."""
    try:
        return f"[{parse_remote(text).display()}]" if looks_remote(text) else ""
    except AddressError:
        return ""


def check_remote(text: str) -> None:
    """A remote address babysit would hand to ssh is usable: a host that is an ssh
    option (`-oProxyCommand=…:/x.log`) is refused. Raises KindUsageError."""
    if looks_remote(text):
        try:
            parse_remote(text)
        except AddressError as error:
            raise KindUsageError(str(error)) from error

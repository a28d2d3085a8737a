"""Remote logs over SSH: the kind's declaration.

Cheap to import (paramiko is an extra): the SSH target itself is in `targets.ssh_log`,
imported only when a remote log is opened."""

from __future__ import annotations

import re
from pathlib import Path

from babysit.remote.address import AddressError, RemoteAddress, parse_remote
from babysit.targets.base import Target, TargetError
from babysit.targets.kinds import KindOption, KindUsageError, Request, TargetKind

_REMOTE = re.compile(r"^(?:ssh://|[\w.\-]+@[\w.\-\[\]:]+:|[\w.\-]+:(?!\\))")

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


def open_remote_log(text: str, accept_new: bool) -> Target:
    try:
        from babysit.remote.connection import SshSettings
        from babysit.targets.ssh_log import RemoteLogTarget
    except ImportError as error:
        raise TargetError(f"{text!r} is a remote log; reading it needs the [ssh] extra: "
                          f"pip install 'babysit[ssh]'") from error
    return RemoteLogTarget(text, remote_address(text), settings=SshSettings(accept_new=accept_new))


def open_remote_process(text: str, *, pid: int | None, proc: str | None,
                        accept_new: bool) -> Target:
    try:
        from babysit.targets.ssh_log import remote_process_target
    except ImportError as error:
        raise TargetError(f"{text!r} is a remote log; reading it needs the [ssh] extra: "
                          f"pip install 'babysit[ssh]'") from error
    return remote_process_target(text, pid=pid, proc=proc, accept_new=accept_new)


def _open(request: Request) -> Target:
    return open_remote_log(request.value, bool(request.option("ssh_accept_new")))


def check_remote(text: str) -> None:
    """A remote address babysit would hand to ssh is usable: a host that is an ssh
    option (`-oProxyCommand=…:/x.log`) is refused. Raises KindUsageError."""
    if looks_remote(text):
        try:
            parse_remote(text)
        except AddressError as error:
            raise KindUsageError(str(error)) from error


KIND = TargetKind(
    name="remote-log", title="remote log", flag=None, metavar="user@host:/path",
    help="A training log on another host, read over one SSH connection (host aliases from "
         "~/.ssh/config work: host:path).",
    open=_open,
    example="babysit user@gpu-box:/runs/gpt2/train.log --interval 30",
    extra="ssh", options=(SSH_ACCEPT_NEW,), claims=looks_remote,
    prefix=lambda request: remote_prefix(request.value))

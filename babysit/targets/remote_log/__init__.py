"""The remote-log kind: a training log on another host, read over SSH.

Cheap to import (paramiko is an extra): the SSH target (`common.ssh_log`) is imported
only when a remote log is opened; how an address is told from a path is in
`common.addresses`, shared with every kind that may read over SSH."""

from __future__ import annotations

from babysit.targets.base import Target
from babysit.targets.common.addresses import SSH_ACCEPT_NEW, SSH_EXTRA, looks_remote, remote_prefix
from babysit.targets.common.open_log import open_remote_log
from babysit.targets.kinds import Request, TargetKind


def _open(request: Request) -> Target:
    return open_remote_log(request.value, bool(request.option("ssh_accept_new")))


KIND = TargetKind(
    name="remote-log", title="remote log", flag=None, metavar="user@host:/path",
    help="A training log on another host, read over one SSH connection (host aliases from "
         "~/.ssh/config work: host:path).",
    open=_open,
    example="babysit user@gpu-box:/runs/gpt2/train.log --interval 30",
    extra=SSH_EXTRA, options=(SSH_ACCEPT_NEW,), claims=looks_remote,
    prefix=lambda request: remote_prefix(request.value))

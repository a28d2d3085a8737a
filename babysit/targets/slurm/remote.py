"""`--slurm ID --ssh USER@HOST`: the Slurm commands and the job's files on a login node,
over one SSH connection (paramiko, the [ssh] extra)."""

from __future__ import annotations

from collections.abc import Callable

from babysit.targets.base import Target, TargetError
from babysit.targets.common.addresses import SSH_EXTRA
from babysit.targets.kinds import missing_extra
from babysit.targets.slurm.runner import Runner, SshRunner


def connect(login: str, accept_new: bool) -> tuple[Runner, Callable[[str], Target]]:
    """The login node's command runner and how to open a log there, sharing one
    connection (closing the runner closes it). Raises TargetError."""
    try:
        from babysit.remote.address import RemoteAddress
        from babysit.remote.connection import SshConnection, SshError, SshSettings
        from babysit.targets.common.ssh_log import RemoteLogTarget
    except ImportError as error:
        raise missing_extra(SSH_EXTRA, "--ssh") from error

    user, _, host = login.rpartition("@")
    address = RemoteAddress(host=host, path="", user=user or None)
    connection = SshConnection(address, SshSettings(accept_new=accept_new))
    try:
        connection.ensure()
    except SshError as error:
        raise TargetError(f"cannot connect to {address.display()}: {error}") from error

    def open_log(path: str) -> Target:
        # The log shares the connection; closing the job target closes it once.
        return RemoteLogTarget(f"{login}:{path}", RemoteAddress(host, path, user or None),
                               connection=connection)

    return SshRunner(connection), open_log

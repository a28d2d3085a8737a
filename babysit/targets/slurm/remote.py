"""`--slurm ID --ssh USER@HOST`: the Slurm commands and the job's files on a login node,
over one SSH connection (paramiko, the [ssh] extra)."""

from __future__ import annotations

from babysit.targets.base import Target, TargetError


def open_remote(job_id: str, login: str, accept_new: bool, *, max_pending: float) -> Target:
    try:
        from babysit.remote.address import RemoteAddress
        from babysit.remote.connection import SshConnection, SshError, SshSettings
        from babysit.targets.ssh_log import RemoteLogTarget
    except ImportError as error:
        raise TargetError("--ssh needs the [ssh] extra: pip install 'babysit[ssh]'") \
            from error
    from babysit.targets.slurm.job import SlurmJobTarget
    from babysit.targets.slurm.runner import SshRunner

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

    try:
        return SlurmJobTarget(job_id, SshRunner(connection), open_log,
                              max_pending=max_pending, login=login)
    except BaseException:
        connection.close()
        raise

"""A log given as text, opened with the target that reads it: over SSH or on this machine."""

from __future__ import annotations

from babysit.targets.base import Target
from babysit.targets.common.addresses import SSH_EXTRA, looks_remote, remote_address
from babysit.targets.kinds import missing_extra


def open_remote_log(text: str, accept_new: bool) -> Target:
    try:
        from babysit.remote.connection import SshSettings
        from babysit.targets.common.ssh_log import RemoteLogTarget
    except ImportError as error:
        raise missing_extra(SSH_EXTRA, f"{text!r} is a remote log; reading it") from error
    return RemoteLogTarget(text, remote_address(text), settings=SshSettings(accept_new=accept_new))


def open_log(text: str, accept_new: bool = False) -> Target:
    """A log given as text: remote (`user@host:/path`) or on this machine."""
    if looks_remote(text):
        return open_remote_log(text, accept_new)
    from babysit.targets.common.log_file import LocalLogTarget

    return LocalLogTarget(text)

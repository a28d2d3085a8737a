"""Where Slurm's commands run: on this machine (subprocess) or on a login node over the
session's one SSH connection. Always an argument list, never a shell string built from
job data, and always with a timeout."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from babysit.targets.base import TargetError, TargetUnavailable

if TYPE_CHECKING:
    from babysit.remote.connection import SshConnection

TIMEOUT = 20.0  # seconds: a controller this slow is a connectivity problem, not the job's
# Slurm prints clock times (SubmitTime, …) in the local time of wherever its command
# runs, with no zone: a login node in another time zone than babysit would shift them
# by hours. Asked for in UTC, they mean the same everywhere (see view.slurm_time).
ENV = {"SLURM_TIME_FORMAT": "standard", "LC_ALL": "C", "TZ": "UTC"}


class Result:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status = status
        self.out = out
        self.err = err.strip()

    @property
    def ok(self) -> bool:
        return self.status == 0


class Runner(Protocol):
    where: str  # for messages: "this machine", "me@login-node"

    def run(self, argv: Sequence[str], timeout: float | None = None) -> Result:
        """Run one command within `timeout` (default: the runner's). Raises TargetError
        when the command does not exist here, TargetUnavailable when it (or the link)
        timed out or dropped: a controller that hangs is unreachable, not a crash."""
        ...

    def close(self) -> None: ...


class LocalRunner:
    where = "this machine"

    def __init__(self, timeout: float = TIMEOUT) -> None:
        self.timeout = timeout

    def run(self, argv: Sequence[str], timeout: float | None = None) -> Result:
        timeout = timeout or self.timeout
        env = {**os.environ, **ENV}
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, errors="replace",
                                  timeout=timeout, check=False, env=env,
                                  stdin=subprocess.DEVNULL)
        except FileNotFoundError as error:
            raise TargetError(f"`{argv[0]}` is not installed on this machine: run babysit on "
                              f"a Slurm login node, or add --ssh USER@LOGIN-NODE") from error
        except subprocess.TimeoutExpired as error:
            raise TargetUnavailable(f"`{' '.join(argv)}` took longer than {timeout:.0f}s (is "
                                    f"slurmctld reachable?)") from error
        return Result(done.returncode, done.stdout, done.stderr)

    def close(self) -> None:
        pass


class SshRunner:
    """Commands on a login node, over a connection the job's log reading shares."""

    def __init__(self, connection: SshConnection) -> None:
        self.connection = connection
        self.where = connection.where

    def run(self, argv: Sequence[str], timeout: float | None = None) -> Result:
        from babysit.remote.connection import SshError, SshFatal

        timeout = timeout or TIMEOUT
        # `env` sets the variables without a shell; every argument is quoted remotely.
        command = ["env", *(f"{key}={value}" for key, value in ENV.items()), *argv]
        try:
            status, out, err = self.connection.run(command, timeout=timeout)
        except SshFatal as error:
            raise TargetError(f"cannot run Slurm commands on {self.where}: {error}") from error
        except SshError as error:
            raise TargetUnavailable(f"lost the SSH connection to {self.where}: {error}") \
                from error
        if status == 127:
            raise TargetError(f"`{argv[0]}` is not found on {self.where} (is it a Slurm login "
                              f"node? is Slurm on the PATH of a non-interactive shell?)")
        return Result(status, out.decode(errors="replace"), err.decode(errors="replace"))

    def close(self) -> None:
        self.connection.close()

"""From what the user typed to a Target: the one place that knows every kind."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from babysit.targets.base import Target, TargetError
from babysit.targets.local_log import LocalLogTarget

if TYPE_CHECKING:
    from babysit.remote.connection import SshSettings

_REMOTE = re.compile(r"^(?:ssh://|[\w.\-]+@[\w.\-\[\]:]+:|[\w.\-]+:(?!\\))")


def looks_remote(spec: str) -> bool:
    """`user@host:/path`, `host:path` or `ssh://…`, unless a local file has that name."""
    return bool(_REMOTE.match(spec)) and not Path(spec).exists()


def resolve_target(spec: str, ssh: SshSettings | None = None, pid: int | None = None,
                   proc: str | None = None) -> Target:
    """Raises TargetError when the spec names nothing babysit can watch."""
    if looks_remote(spec):
        try:
            # Imported here: paramiko is an extra, and only remote targets need it.
            from babysit.remote.address import AddressError, parse_remote
            from babysit.targets.remote_log import RemoteLogTarget
        except ImportError as error:
            raise TargetError(f"{spec!r} is a remote log; reading it needs the [ssh] extra: "
                              f"pip install 'babysit[ssh]'") from error
        try:
            address = parse_remote(spec)
        except AddressError as error:
            raise TargetError(str(error)) from error
        return RemoteLogTarget(spec, address, settings=ssh, pid=pid, proc=proc)
    return LocalLogTarget(spec)


def resolve_tracker(*, mlflow: str | None = None, tracking_uri: str | None = None,
                    wandb: str | None = None, fallback_log: str | None = None,
                    ssh: SshSettings | None = None) -> Target:
    """An MLflow or W&B run, optionally with a log to read when the tracker is down."""
    primary: Target
    if mlflow is not None:
        from babysit.targets.mlflow_run import MlflowTarget

        primary, source = MlflowTarget(mlflow, tracking_uri), "MLflow"
    elif wandb is not None:
        from babysit.targets.wandb_run import wandb_target

        primary, source = wandb_target(wandb), "W&B"
    else:
        raise TargetError("no tracker run given")
    if fallback_log is None:
        return primary
    from babysit.targets.fallback import FallbackTarget

    log = fallback_log
    return FallbackTarget(primary, lambda: resolve_target(log, ssh), log, source)

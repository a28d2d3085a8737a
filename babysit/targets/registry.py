"""From what the user typed to a Target: the one place that knows every kind."""

from __future__ import annotations

import re
from pathlib import Path

from babysit.targets.base import Target, TargetError
from babysit.targets.local_log import LocalLogTarget

_REMOTE = re.compile(r"^(?:ssh://|[\w.\-]+@[\w.\-]+:|[\w.\-]+:(?!\\))")


def looks_remote(spec: str) -> bool:
    """`user@host:/path`, `host:path` or `ssh://…`, unless a local file has that name."""
    return bool(_REMOTE.match(spec)) and not Path(spec).exists()


def resolve_target(spec: str) -> Target:
    """Raises TargetError when the spec names nothing babysit can watch."""
    if looks_remote(spec):
        raise TargetError(
            f"{spec!r} looks like a remote log (user@host:/path); remote logs over SSH are "
            f"not supported in this version yet. Copy the log locally, or run babysit on "
            f"the training host. If it is a local file, write it as ./{spec}")
    return LocalLogTarget(spec)

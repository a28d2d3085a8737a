"""The local-log kind: a training log (or the rank logs of one run) on this machine.

Only the kind lives here, so building the command line costs nothing; the reading
(`common.log_file`, and `ranks` for several files) is imported when a log is opened."""

from __future__ import annotations

from babysit.targets.base import Target
from babysit.targets.kinds import Request, TargetKind


def _open(request: Request) -> Target:
    from babysit.targets.common.log_file import LocalLogTarget
    from babysit.targets.local_log.ranks import RankLogsTarget, expand

    paths = expand([request.value, *request.more])
    if len(paths) == 1:
        return LocalLogTarget(paths[0])
    shown = request.value if not request.more else \
        f"{request.value} (+{len(request.more)} more)"
    return RankLogsTarget(paths, shown)


def _awaits(request: Request) -> str | None:
    """One log path that does not exist yet (not a glob, not several ranks) and that the
    run may still create: its folder is there and nothing in it has a close name (that
    is a typo, reported at once with the name it resembles)."""
    import os

    from babysit.targets.common.log_paths import worth_waiting_for

    if request.more or any(c in request.value for c in "*?["):
        return None
    if os.path.lexists(request.value) or not worth_waiting_for(request.value):
        return None
    return request.value


KIND = TargetKind(
    name="local-log", title="log file", flag=None, metavar="PATH",
    help="A training log on this machine, followed as it grows; several files (or a quoted "
         "glob, 'logs/rank*.log') are the ranks of one run.",
    open=_open, example="babysit ./logs/train.log --once",
    claims=lambda text: True, takes_many=True, awaits=_awaits)

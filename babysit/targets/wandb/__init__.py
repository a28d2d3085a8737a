"""W&B runs: the kind's declaration (cheap to import; wandb is imported only when a run
is opened)."""

from __future__ import annotations

from babysit.targets.base import Target
from babysit.targets.common.fallback import FALLBACK_LOG, with_fallback
from babysit.targets.kinds import Chooser, KindUsageError, Request, TargetKind


def _prepare(request: Request, choose: Chooser) -> Request:
    """A value that names no run is a usage error (exit 2), found before anything opens."""
    from babysit.targets.wandb.spec import run_path

    try:
        run_path(request.value)
    except ValueError as error:
        raise KindUsageError(str(error)) from error
    return request


def _open(request: Request) -> Target:
    from babysit.targets.wandb.run import wandb_target

    return with_fallback(lambda: wandb_target(request.value), request, "W&B")


KIND = TargetKind(
    name="wandb", title="W&B run", flag="--wandb", metavar="RUN",
    help="Watch this W&B run: entity/project/run_id, its URL, or a local run directory "
         "(./wandb/latest-run, no API key needed).",
    open=_open, prepare=_prepare, example="babysit --wandb ./wandb/latest-run --once",
    extra="wandb", options=(FALLBACK_LOG,))

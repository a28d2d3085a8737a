"""W&B runs: the kind's declaration (cheap to import; wandb is imported only when a run
is opened)."""

from __future__ import annotations

from babysit.targets.base import Target
from babysit.targets.fallback import FALLBACK_LOG, with_fallback
from babysit.targets.kinds import Request, TargetKind


def _open(request: Request) -> Target:
    from babysit.targets.wandb.run import wandb_target

    return with_fallback(lambda: wandb_target(request.value), request, "W&B")


KIND = TargetKind(
    name="wandb", title="W&B run", flag="--wandb", metavar="RUN",
    help="Watch this W&B run: entity/project/run_id, its URL, or a local run directory "
         "(./wandb/latest-run, no API key needed).",
    open=_open, example="babysit --wandb ./wandb/latest-run --once",
    extra="wandb", options=(FALLBACK_LOG,))

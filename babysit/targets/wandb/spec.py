"""What `--wandb X` names, decided from its text alone (cheap: no wandb import), so a
malformed value is a usage error (exit 2) before anything is opened."""

from __future__ import annotations

import os

from babysit import lazy_re

_URL = lazy_re.compile(r"^https?://[^/]+/(?P<entity>[^/]+)/(?P<project>[^/]+)/runs/(?P<run>[^/?#]+)")


def run_path(spec: str) -> str | None:
    """None for a local run directory; else the run's `entity/project/run_id`, from
    that path or from the run's URL. Raises ValueError for anything else."""
    if os.path.exists(spec):
        return None
    match = _URL.match(spec)
    if match is not None:
        return f"{match['entity']}/{match['project']}/{match['run']}"
    parts = [p for p in spec.strip("/").split("/") if p and p != "runs"]
    if len(parts) != 3:
        raise ValueError(f"--wandb {spec!r}: expected entity/project/run_id, a run URL, or a "
                         f"local run directory (e.g. ./wandb/latest-run)")
    return "/".join(parts)

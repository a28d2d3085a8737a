"""Slurm's cancellation banner, said more than once for one job.

slurmstepd prints one banner per step it signals (`src/slurmd/slurmstepd/req.c`,
`_handle_signal_container`): `*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***` (or
`DUE TO PREEMPTION`, `DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS`, `DUE TO JOB
REQUEUE`) for the signal that carries the reason, and the plain `*** %s ON %s CANCELLED AT
%s ***` for a SIGTERM / SIGKILL sent to the same job's other steps. A job's stderr therefore
often holds both, the reason first (the gymnasium PPO job in sealed-9):

    slurmstepd: error: *** JOB 41853 ON desktop12 CANCELLED AT 2025-12-10T18:35:21 DUE TO
    TIME LIMIT ***
    slurmstepd: error: *** JOB 41853 ON desktop12 CANCELLED AT 2025-12-10T18:35:21 ***

The second line says nothing new: the job was cancelled because of the time limit, and
its TIMEOUT must not be read down to a plain CANCELLED.
"""

from __future__ import annotations

from babysit import lazy_re

_BANNER = lazy_re.compile(r"\*\*\* (?:JOB|STEP) (\d+)(?:\.\w+)? (?:ON \S+ )?CANCELLED AT \S+"
                          r"(?: DUE TO ([A-Z ]+?))?,?(?: SEE [A-Z ]+)?\s*\*\*\*")


def cancelled_job(line: str) -> tuple[str, str] | None:
    """`(job id, reason)` of a Slurm cancellation banner (`reason` '' when the banner gives
    none: `TIME LIMIT`, `PREEMPTION`, `NODE FAILURE` otherwise), None for any other line."""
    match = _BANNER.search(line)
    if match is None:
        return None
    return match.group(1), match.group(2) or ""


def restates_cancel(earlier: str, line: str) -> bool:
    """Whether `line`, a plain Slurm cancellation banner, only repeats the cancellation of
    the job whose banner `earlier` already gave with its reason (see the module's doc)."""
    first, later = cancelled_job(earlier), cancelled_job(line)
    if first is None or later is None:
        return False
    return first[0] == later[0] and bool(first[1]) and not later[1]

"""What `--slurm` accepts: a job ID or an array task, checked before anything runs."""

from __future__ import annotations

from babysit import lazy_re
from babysit.targets.kinds import KindUsageError

# ASCII digits only (`\d` takes `٣` too), and fullmatch: `$` would let a newline through.
_JOB_ID = lazy_re.compile(r"[0-9]{1,10}(?:_[0-9]{1,10})?")


def check_job_id(text: str) -> str:
    """`123456` or an array task `123456_7`; anything else is a usage error."""
    value = text.strip()
    if not _JOB_ID.fullmatch(value):
        raise KindUsageError(f"--slurm takes a job ID (123456) or an array task (123456_7), "
                             f"not {text!r}")
    return value

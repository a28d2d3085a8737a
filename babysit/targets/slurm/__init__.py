"""Slurm batch jobs: the kind's declaration (cheap to import; the job target and its
command runner are imported only when a job is opened)."""

from __future__ import annotations

import re
from typing import Any

from babysit import lazy_re
from babysit.targets.base import Target
from babysit.targets.common.addresses import SSH_ACCEPT_NEW
from babysit.targets.kinds import Chooser, KindOption, Request, TargetKind
from babysit.targets.slurm.job_ids import check_job_id

_LOGIN = lazy_re.compile(r"(?:[\w.\-]+@)?[\w.\-]+", re.ASCII)


def _check_login(text: str) -> str:
    """USER@HOST or an alias; neither part may begin with `-` (ssh would read an option
    there: `--ssh -oProxyCommand=…`). Raises ValueError (a usage error)."""
    user, _, host = text.rpartition("@")
    if not _LOGIN.fullmatch(text) or host.startswith("-") or user.startswith("-"):
        raise ValueError(f"{text!r} is not USER@HOST or a host alias from ~/.ssh/config")
    return text


def _check_pending(text: Any) -> float:
    from babysit.durations import parse_duration

    return parse_duration(str(text))


SSH = KindOption("--ssh", "Run the Slurm commands on this login node (USER@HOST or an "
                 "~/.ssh/config alias) and read the job's log there, over one SSH connection.",
                 metavar="USER@HOST", parse=lambda text: _check_login(str(text)))
MAX_PENDING = KindOption("--max-pending", "How long the job may wait in the queue before "
                         "babysit flags it (default: 2h).", metavar="DURATION",
                         parse=_check_pending)
# A controller answers every user's squeue/scontrol: every 30 s is polite, and still sees
# a state change well within a minute. Four quiet polls of a running job are 2 minutes.
_DEFAULTS: dict[str, dict[str, Any]] = {"poll": {"interval": 30.0},
                                        "rules": {"stall_polls": 4}}


def _prepare(request: Request, choose: Chooser) -> Request:
    return Request(request.kind, check_job_id(request.value), request.log, request.options)


def _open(request: Request) -> Target:
    from babysit.targets.slurm.job import open_job

    return open_job(request)


def _prefix(request: Request) -> str:
    login = request.option("ssh")
    return f"[{login}]" if login else ""


KIND = TargetKind(
    name="slurm", title="Slurm job", flag="--slurm", metavar="JOBID",
    help="Watch a Slurm batch job (123456) or array task (123456_7): its state and pending "
         "reason from scontrol (sacct once it has left the queue), requeues, and its "
         "StdOut/StdErr files parsed like a local log.",
    open=_open, prepare=_prepare, prefix=_prefix,
    example="babysit --slurm 123456_7 --ssh me@login-node --interval 60",
    extra=None, options=(SSH, SSH_ACCEPT_NEW, MAX_PENDING), defaults=_DEFAULTS,
    group="Slurm")

"""The process kinds: `--pid N` and `--proc NAME`, a training process with its log.

Only the kinds live here, so building the command line costs nothing; the process
target (`process.target`: psutil, the GPU probe) is imported when one is watched, and
`process.remote` (over SSH) when the log is on another host.
"""

from __future__ import annotations

import shlex

from babysit.targets.base import Target, TargetError
from babysit.targets.common.addresses import (
    SSH_ACCEPT_NEW,
    SSH_EXTRA,
    looks_remote,
    remote_prefix,
)
from babysit.targets.kinds import (
    Chooser,
    KindOption,
    KindUsageError,
    Request,
    TargetKind,
    missing_extra,
)

# --- the kinds: --pid and --proc ---------------------------------------------------------

def _restart_argv(text: object) -> list[str]:
    try:
        argv = shlex.split(str(text))
    except ValueError as error:
        raise ValueError(str(error)) from error
    if not argv:
        raise ValueError("is empty")
    return argv


RESTART_CMD = KindOption("--restart-cmd", "Exact command to restart a crashed run (split like "
                         "a shell would, run without a shell).", metavar="CMD", rewatch=False,
                         parse=_restart_argv)


def _open_remote_process(text: str, *, pid: int | None, proc: str | None,
                         accept_new: bool) -> Target:
    try:
        from babysit.targets.process.remote import remote_process_target
    except ImportError as error:
        raise missing_extra(SSH_EXTRA, f"{text!r} is a remote log; reading it") from error
    return remote_process_target(text, pid=pid, proc=proc, accept_new=accept_new)


def _open(request: Request, pid: int, name: str | None, target_type: str) -> Target:
    from babysit.targets.process.target import ProcessTarget

    log = request.log
    if log is not None and looks_remote(log):
        return _open_remote_process(log, pid=pid if name is None else None, proc=name,
                                   accept_new=bool(request.option("ssh_accept_new")))
    return ProcessTarget(pid, name=name, log=log, restart_cmd=request.option("restart_cmd"),
                         target_type=target_type)


def _open_pid(request: Request) -> Target:
    return _open(request, int(request.value), None, "pid")


def _open_proc(request: Request) -> Target:
    if request.log is not None and looks_remote(request.log):
        return _open(request, 0, request.value, "process")
    pid = request.option("_pid")
    if pid is None:
        from babysit.telemetry.processes import find_processes, topmost

        roots = topmost(find_processes(request.value))
        if not roots:
            raise TargetError(f"no running process matches {request.value!r}")
        pid = roots[0].pid
    return _open(request, int(pid), request.value, "process")


def _prepare_proc(request: Request, choose: Chooser) -> Request:
    """Pin `--proc NAME` to one process: unrelated matches are put to the user, or are
    a usage error listing them."""
    if not request.value.strip():
        raise KindUsageError("--proc needs a name to look for (an empty one matches every "
                             "process on the machine)")
    if request.log is not None and looks_remote(request.log) \
            and request.option("restart_cmd") is not None:
        raise KindUsageError("babysit does not act on remote runs (the fix policy is for "
                             "processes on this machine): drop --restart-cmd")
    if request.log is not None and looks_remote(request.log):
        return request  # matched on the remote host
    from babysit.telemetry.processes import describe_process, find_processes, topmost

    roots = topmost(find_processes(request.value))
    if not roots:
        return request  # opening it says so (exit code 4)
    if len(roots) > 1:
        rows = [describe_process(p) for p in roots]
        index = choose(rows)
        if index is None:  # no one to ask (no terminal, --json), or no answer (end of input)
            # One line: the message takes the outbound pass whole, which shows a newline
            # as `\n` (a command line could carry one to forge a line).
            listing = "; ".join(f"{n}. {row}" for n, row in enumerate(rows, start=1))
            raise KindUsageError(f"{len(roots)} unrelated processes match {request.value!r}: "
                                 f"{listing}; pick one with --pid")
        roots = [roots[index]]
    return Request(request.kind, request.value, request.log,
                   {**request.options, "_pid": roots[0].pid})


def _prepare_pid(request: Request, choose: Chooser) -> Request:
    if not request.value.strip():
        raise KindUsageError("--proc needs a name to look for (an empty one matches every "
                             "process on the machine)")
    if request.log is not None and looks_remote(request.log) \
            and request.option("restart_cmd") is not None:
        raise KindUsageError("babysit does not act on remote runs (the fix policy is for "
                             "processes on this machine): drop --restart-cmd")
    return request


def _prefix(request: Request) -> str:
    return remote_prefix(request.log) if request.log else ""


PID_KIND = TargetKind(
    name="pid", title="process", flag="--pid", value_type=int, metavar="PID",
    help="Watch this training process and find its log (or give the log as TARGET, on this "
         "machine or user@host:/path).",
    open=_open_pid, example="babysit --pid 48291 --restart-cmd 'torchrun train.py --resume'",
    options=(RESTART_CMD, SSH_ACCEPT_NEW), takes_log=True, prepare=_prepare_pid,
    prefix=_prefix)

PROC_KIND = TargetKind(
    name="process", title="process", flag="--proc", metavar="NAME",
    help="Watch the process whose name or command line contains NAME (a launcher and its "
         "workers are one run).",
    open=_open_proc, example="babysit --proc train.py ./logs/train.log",
    options=(RESTART_CMD, SSH_ACCEPT_NEW), takes_log=True, prepare=_prepare_proc,
    prefix=_prefix)

"""The kinds of target babysit can watch: a table, one line per kind.

Each kind declares itself in its own package (`KIND`, in its `__init__`); the command
line is built from this table, and a request is matched to its kind here. Adding a kind
is one package, one line in `KINDS` (and, for a positional kind, one in `CLAIM_ORDER`),
and its name in the artifact schema's `target_type` (a test compares the two).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from babysit.targets import (
    k8s,
    local_log,
    mlflow,
    process,
    remote_log,
    slurm,
    tensorboard,
    vertex,
    wandb,
)
from babysit.targets.common.addresses import check_remote
from babysit.targets.kinds import KindOption, KindUsageError, Request, TargetKind, option_dest

# In the order the help lists them.
KINDS: tuple[TargetKind, ...] = (
    remote_log.KIND,
    tensorboard.KIND,
    local_log.KIND,
    process.PID_KIND,
    process.PROC_KIND,
    mlflow.KIND,
    wandb.KIND,
    *vertex.KINDS,
    k8s.KIND,
    slurm.KIND,
)

# Who takes a positional TARGET (the kinds without a flag), asked in this order; the
# first that claims it wins. An address is remote even where it could be a file name; a
# folder of event files is TensorBoard's; the local log takes any path left, so it is last.
CLAIM_ORDER: tuple[TargetKind, ...] = (remote_log.KIND, tensorboard.KIND, local_log.KIND)


def kind_named(name: str) -> TargetKind:
    return next(kind for kind in KINDS if kind.name == name)


def all_options() -> dict[str, KindOption]:
    """Every kind option, once (several kinds may share one, like --fallback-log)."""
    found: dict[str, KindOption] = {}
    for kind in KINDS:
        for option in kind.options:
            found.setdefault(option.flag, option)
    return found


def select(values: Mapping[str, Any], targets: str | Sequence[str] | None) -> Request:
    """Match what the user typed to one kind. `values` holds every kind flag and kind
    option by its dest name (None when not given); `targets` the positional TARGETs.
    Raises KindUsageError."""
    named = [targets] if isinstance(targets, str) else list(targets or [])
    if any(not name.strip() for name in named):
        raise KindUsageError("TARGET is empty: give a log file, user@host:/path, or a flag "
                             "such as --pid")
    positional = named[0] if named else None
    more = tuple(named[1:])
    flagged = [k for k in KINDS if k.flag and values.get(option_dest(k.flag)) is not None]
    if len(flagged) > 1:
        names = " and ".join(k.flag or "" for k in flagged)
        raise KindUsageError(f"watch one thing at a time: {names} were both given")
    if flagged:
        kind = flagged[0]
        if positional is not None and not kind.takes_log:
            raise KindUsageError(f"{kind.flag} watches a {kind.title}; a TARGET "
                                 f"({positional!r}) cannot be given with it")
        given = values[option_dest(kind.flag or "")]
        if kind.value_type is int and not (isinstance(given, int) and given >= 1):
            raise KindUsageError(f"{kind.flag} takes a positive number, not {given!r}")
        value = str(given)
    elif positional is None:
        flags = ", ".join(f"{k.flag} {k.metavar or 'X'}" for k in KINDS if k.flag)
        raise KindUsageError(f"nothing to watch: give a log file (or user@host:/path), {flags}")
    else:
        kind = next(k for k in CLAIM_ORDER if k.claims is not None and k.claims(positional))
        value, positional = positional, None
    if more and not kind.takes_many:
        raise KindUsageError(f"one TARGET at a time for a {kind.title} (several are for the "
                             f"rank logs of one run on this machine)")
    options: dict[str, Any] = {}
    own = {o.flag for o in kind.options}
    for flag, option in all_options().items():
        given = values.get(option.dest)
        if given is None or given is False:
            continue
        if flag not in own:
            users = " or ".join(k.flag or f"a {k.title}" for k in KINDS
                                if any(o.flag == flag for o in k.options))
            raise KindUsageError(f"{flag} only makes sense with {users}")
        if option.parse is not None:
            try:
                given = option.parse(given)
            except ValueError as error:
                raise KindUsageError(f"{flag}: {error}") from error
        options[option.dest] = given
    # Every address that may reach ssh, checked before anything is opened.
    for text in (value if kind.name == "remote-log" else None, positional,
                 options.get("fallback_log")):
        if isinstance(text, str):
            check_remote(text)
    return Request(kind.name, value, positional, options, more if kind.takes_many else ())


def rewatch_args(request: Request, mode: Sequence[str] = ()) -> list[str]:
    """The arguments that watch the same target again (secrets and fixes left out), the
    caller's `mode` options among them: every option first, then `--`, then the paths. A
    path is outside text: `--judge=sh -c … #.log` is a file name a log directory may hold,
    and before `--` babysit would read it as an option."""
    kind = kind_named(request.kind)
    args: list[str] = []
    paths: list[str] = []
    if kind.flag is None:
        paths += [request.value, *request.more]
    else:
        args += [f"{kind.flag}={request.value}"]
        if request.log is not None:
            paths.append(request.log)
    for option in kind.options:
        value = request.options.get(option.dest)
        if value is None or not option.rewatch:
            continue
        args += [option.flag] if option.type is bool else [f"{option.flag}={value}"]
    return [*args, *mode, "--", *paths] if paths else [*args, *mode]


"""How a kind of target declares itself, once, for the registry and the command line.

A kind module (local log, remote log, process, MLflow, W&B, …) exports one
`TargetKind`: its name in the artifact, the flag that selects it (or none: a
positional TARGET), its own options, the extra to install, and how to open a target
from what the user typed. The CLI builds its flags, help panels, mutual-exclusion
checks and re-watch commands from these declarations alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from babysit.targets.base import Target, TargetError


class KindUsageError(Exception):
    """What the user typed cannot work (exit code 2); the message says what to change."""


@dataclass(frozen=True)
class KindOption:
    flag: str  # "--tracking-uri"
    help: str
    type: type = str  # str, int, float or bool (a switch)
    metavar: str | None = None
    rewatch: bool = True  # repeated in the "watch it again" command
    # Checks and converts the value; raises ValueError with a message for the user.
    parse: Callable[[Any], Any] | None = None
    short: str | None = None  # a one-letter form people type (`-n` for --namespace)

    @property
    def dest(self) -> str:
        return option_dest(self.flag)


def option_dest(flag: str) -> str:
    """`--tracking-uri` -> `tracking_uri`: the keyword the CLI passes it under."""
    return flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Request:
    """What the user asked to watch: the kind's value (the flag's argument or the
    positional TARGET), a log given beside it, and the kind's options that were set."""

    kind: str
    value: str
    log: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    more: tuple[str, ...] = ()  # further positional TARGETs (several rank logs)

    def option(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value


# Asked when a request matches several things: (descriptions) -> the index chosen, or
# None when nobody can be asked (no terminal, --json).
Chooser = Callable[[Sequence[str]], "int | None"]


@dataclass(frozen=True)
class TargetKind:
    name: str  # the artifact's target_type
    title: str  # for people: "MLflow run"
    flag: str | None  # the flag that selects it; None: a positional TARGET
    help: str
    open: Callable[[Request], Target]
    example: str  # one command line, shown in the help
    value_type: type = str
    metavar: str | None = None
    extra: str | None = None  # `pip install 'babysit[extra]'` when it needs one
    options: tuple[KindOption, ...] = ()
    takes_log: bool = False  # a positional TARGET beside the flag is the run's log
    claims: Callable[[str], bool] | None = None  # positional kinds: is this text ours?
    prepare: Callable[[Request, Chooser], Request] | None = None  # pin an ambiguous request
    prefix: Callable[[Request], str] | None = None  # `[user@host]` before every line
    takes_many: bool = False  # several positional TARGETs are one run (rank logs)
    # Settings of its own, below the config file, BABYSIT_* and flags:
    # {"poll": {"interval": 60.0}, "rules": {"stall_polls": 3}}.
    defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    group: str | None = None  # kinds that share a help panel (and its options)
    # What the target waits for before it can be opened (a log the run has not created
    # yet), or None when it can be opened now.
    awaits: Callable[[Request], str | None] | None = None

    @property
    def panel(self) -> str:
        return f"Target: {self.group or self.title}"


def missing_extra(extra: str, doing: str) -> TargetError:
    """The fatal error for an optional package that is not installed: what needed it
    (`doing`: "watching MLflow runs") and the command that installs babysit's `extra`."""
    return TargetError(f"{doing} needs the [{extra}] extra: pip install 'babysit[{extra}]'")


def require_extra(kind: TargetKind, doing: str) -> TargetError:
    """`missing_extra` for the extra the kind declares, so the install command is written
    once, on the kind. Raises ValueError for a kind that declares none (a bug)."""
    if kind.extra is None:
        raise ValueError(f"the {kind.name} kind declares no extra")
    return missing_extra(kind.extra, doing)

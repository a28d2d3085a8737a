"""What a `babysit watch` command line asked for, as one typed value.

The CLI parses flags into this and nothing else crosses into the rest of babysit as a
loose dict: the options every watch shares are fields, checked and converted once here,
and the target kinds' own flags travel in `kind_values`, keyed by the names the kinds
declared (targets/kinds.py), for the registry to match."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from babysit.durations import parse_duration, parse_schedule
from babysit.efficiency.peaks import PRECISIONS

EFFICIENCY_FIELDS = ("gpu", "gpus", "precision", "peak_tflops", "flops_per_token",
                     "model_params", "layers", "width", "seq_len", "tokens_per_step")


class RequestError(ValueError):
    """A value the user typed cannot work; `flag` names the option to change."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


@dataclass(frozen=True)
class WatchRequest:
    target: tuple[str, ...] = ()
    # polling
    interval: float | None = None
    max_interval: float | None = None
    no_backoff: bool = False
    once: bool = False
    max_polls: int | None = None
    timeout: str | None = None
    schedule: str | None = None
    # fixes and judgement
    no_fix: bool = False
    judge: str | None = None
    judge_timeout: float = 60.0
    total_steps: int | None = None
    # efficiency (MFU)
    gpu: str | None = None
    gpus: int | None = None
    precision: str | None = None
    peak_tflops: float | None = None
    flops_per_token: float | None = None
    model_params: float | None = None
    layers: int | None = None
    width: int | None = None
    seq_len: int | None = None
    tokens_per_step: float | None = None
    # output
    out_dir: Path = Path(".")
    run_id: str | None = None
    json_output: bool = False
    serve: bool = False
    serve_port: int = 8765
    serve_linger: float | None = None
    until_event: bool = False
    notify: tuple[str, ...] = ()
    notify_severity: str | None = None
    # The kinds' own flags and options, by dest name (None or False: not given).
    kind_values: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_flags(cls, values: Mapping[str, Any]) -> WatchRequest:
        """Split the CLI's parsed flags into the shared fields and the kinds' values,
        and check what can be checked without opening anything (raises RequestError)."""
        shared = {f.name for f in fields(cls)} - {"kind_values"}
        given = {name: value for name, value in values.items() if name in shared}
        target = given.pop("target", None)
        given["target"] = (target,) if isinstance(target, str) else tuple(target or ())
        given["notify"] = tuple(given.get("notify") or ())
        request = cls(**given, kind_values={name: value for name, value in values.items()
                                            if name not in shared})
        request.check()
        return request

    def check(self) -> None:
        for flag, value in (("--judge-timeout", self.judge_timeout),
                            ("--total-steps", self.total_steps)):
            if value is not None and not value >= 1:
                raise RequestError(flag, f"must be at least 1 (got {value:g})")
        if self.precision is not None and self.precision not in PRECISIONS:
            raise RequestError("--precision", "one of " + ", ".join(PRECISIONS))
        self.deadline()
        self.cadence()

    def deadline(self) -> float | None:
        if self.timeout is None:
            return None
        try:
            return parse_duration(self.timeout)
        except ValueError as error:
            raise RequestError("--timeout", str(error)) from error

    def cadence(self) -> tuple[float, ...] | None:
        if self.schedule is None:
            return None
        try:
            return parse_schedule(self.schedule)
        except ValueError as error:
            raise RequestError("--schedule", str(error)) from error

    def poll_overrides(self) -> dict[str, Any]:
        """The [poll] settings the flags set (None: not given, the config decides)."""
        cadence = self.cadence()
        return {"interval": cadence[0] if cadence else self.interval,
                "max_interval": max(cadence[-1], cadence[0]) if cadence else self.max_interval,
                "once": self.once or None, "max_polls": self.max_polls,
                "timeout": self.deadline(),
                "backoff": False if self.no_backoff else None, "schedule": cadence,
                "until_event": self.until_event or None}

    def notify_overrides(self) -> dict[str, Any]:
        return {"urls": self.notify or None, "severity": self.notify_severity}

    def efficiency_overrides(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in EFFICIENCY_FIELDS}

    def mode_args(self) -> list[str]:
        """The caller's own way of watching, for the command that watches again: an agent
        that ran `--json --until-event --timeout 100s` gets a next command that stops the
        same way, not one that blocks until the run ends. Notify URLs (secrets), the
        dashboard (a port), the reviewer (a program) and the run id are left out."""
        args: list[str] = []
        for flag, value in (("--once", self.once), ("--no-backoff", self.no_backoff),
                            ("--no-fix", self.no_fix), ("--until-event", self.until_event),
                            ("--json", self.json_output)):
            if value:
                args.append(flag)
        valued = {"--timeout": self.timeout, "--max-polls": self.max_polls,
                  "--interval": self.interval, "--max-interval": self.max_interval,
                  "--schedule": self.schedule, "--total-steps": self.total_steps,
                  **{"--" + name.replace("_", "-"): value
                     for name, value in self.efficiency_overrides().items()}}
        for flag, value in valued.items():
            if value is not None:
                args += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
        return args

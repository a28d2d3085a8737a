"""Settings: frozen dataclasses, filled with precedence flag > BABYSIT_* env > file > default.

The file is `babysit.toml` in the working directory, or the `[tool.babysit]` table of
`pyproject.toml`. Both take the same two tables:

    [poll]                      [rules]
    interval = 30               divergence_steps = 5
    max_interval = 300          spike_k = 6.0
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


class ConfigError(Exception):
    """A setting has an unknown name or a value of the wrong type."""


@dataclass(frozen=True)
class PollSettings:
    interval: float = 30.0
    max_interval: float = 300.0
    backoff: bool = True
    backoff_factor: float = 1.5
    # A relative change of the loss between polls above this resets the interval.
    loss_change_reset: float = 0.05
    summary_every: int = 5
    once: bool = False
    max_polls: int | None = None
    schedule: tuple[float, ...] | None = None  # fixed cadence while healthy, in seconds
    until_event: bool = False  # stop at the first thing that needs attention


@dataclass(frozen=True)
class RuleSettings:
    """Thresholds for the rules; see references/common-issues.md for each one."""

    divergence_steps: int = 5
    divergence_min_rise: float = 0.05
    # A loss this far above its best (1.0: twice the best) for this many points diverged.
    divergence_level: float = 1.0
    divergence_level_points: int = 3
    divergence_giveback: float = 0.5  # ... and giving back this share of its improvement
    loss_blowup: float = 1e8  # a training loss above this has blown up numerically
    spike_window: int = 50
    spike_k: float = 6.0
    spike_min_points: int = 10
    spike_min_rise: float = 0.2
    stall_polls: int = 2
    stall_seconds: float = 0.0
    stall_cadence_factor: float = 5.0  # times the run's usual gap between progress lines
    stall_unknown_seconds: float = 60.0  # the least wait while that gap is not known
    stall_setup_seconds: float = 600.0  # before the first step (loading, compiling)
    stall_save_seconds: float = 900.0  # while a checkpoint is being written
    stall_eval_seconds: float = 900.0  # while an evaluation runs
    grad_norm_max: float = 1000.0
    grad_norm_ratio: float = 100.0
    grad_norm_window: int = 20
    slow_drop: float = 0.5
    slow_baseline_samples: int = 5
    slow_recent_samples: int = 5
    eval_degradation_evals: int = 3
    eval_min_worsening: float = 0.01
    eval_recovery_tolerance: float = 0.05  # back within this of the best eval: recovered
    crash_grace_seconds: float = 10.0
    lr_zero_points: int = 5
    lr_warmup_fraction: float = 0.5
    lr_rise_tolerance: float = 0.1
    grad_vanish_points: int = 5
    grad_vanish_ratio: float = 1e-4
    gpu_idle_percent: float = 5.0
    gpu_idle_polls: int = 2
    loss_scale_floor: float = 1e-4  # fairseq's default minimum; DeepSpeed's is 1
    loss_scale_halvings: int = 4  # cuts in a row (below 1024) that are worth a warning
    loss_scale_skip_window: int = 20  # logged steps over which every one being skipped counts


@dataclass(frozen=True)
class NotifySettings:
    """Where and when to send notifications (apprise URLs)."""

    urls: tuple[str, ...] = ()
    severity: str = "high"  # the least severe anomaly worth a message
    repeat_seconds: float = 3600.0  # the same anomaly type at most once per this


@dataclass(frozen=True)
class Settings:
    poll: PollSettings = field(default_factory=PollSettings)
    rules: RuleSettings = field(default_factory=RuleSettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    fix: bool = True
    out_dir: Path = Path(".")
    run_id: str | None = None
    target_steps: int | None = None
    json: bool = False


_SECTIONS = {"poll": PollSettings, "rules": RuleSettings, "notify": NotifySettings}


def load_settings(cwd: Path, env: Mapping[str, str] | None = None,
                  poll: Mapping[str, Any] | None = None,
                  rules: Mapping[str, Any] | None = None,
                  notify: Mapping[str, Any] | None = None,
                  **top: Any) -> Settings:
    """Build Settings from the config file in `cwd`, BABYSIT_* variables and the
    explicit overrides (flags). Overrides whose value is None are ignored.

    Raises ConfigError naming the offending key."""
    env = os.environ if env is None else env
    from_file = _read_file(cwd)
    sections: dict[str, Any] = {}
    for name, cls in _SECTIONS.items():
        values = _coerce_all(cls, from_file.get(name, {}), f"[{name}]")
        values.update(_from_env(cls, env, prefix="BABYSIT_"))
        explicit = {"poll": poll, "rules": rules, "notify": notify}[name]
        values.update({k: v for k, v in (explicit or {}).items() if v is not None})
        sections[name] = cls(**values)
    unknown = set(from_file) - set(_SECTIONS)
    if unknown:
        raise ConfigError(f"unknown table(s) in babysit config: {', '.join(sorted(unknown))}; "
                          f"expected [poll], [rules] and [notify]")
    return Settings(**sections, **{k: v for k, v in top.items() if v is not None})


def _read_file(cwd: Path) -> Mapping[str, Any]:
    own = cwd / "babysit.toml"
    try:
        if own.is_file():
            mine: dict[str, Any] = tomllib.loads(own.read_text(encoding="utf-8"))
            return mine
        project = cwd / "pyproject.toml"
        if project.is_file():
            data: dict[str, Any] = tomllib.loads(project.read_text(encoding="utf-8"))
            section: Any = data.get("tool", {}).get("babysit", {})
            return section if isinstance(section, dict) else {}
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read babysit config in {cwd}: {error}") from error
    return {}


def _coerce_all(cls: type, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    known = {f.name: f for f in fields(cls)}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"unknown setting {key!r} in {where}; known: {', '.join(known)}")
        out[key] = _coerce(known[key], value, f"{where} {key}")
    return out


def _from_env(cls: type, env: Mapping[str, str], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(cls):
        raw = env.get(prefix + f.name.upper())
        if raw is not None and raw != "":
            out[f.name] = _coerce(f, raw, prefix + f.name.upper())
    return out


def _coerce(f: dataclasses.Field[Any], value: Any, where: str) -> Any:
    kind = str(f.type)
    try:
        if kind.startswith("tuple[str"):
            if isinstance(value, str):
                return tuple(part.strip() for part in value.split(",") if part.strip())
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return tuple(value)
            raise ValueError(value)
        if kind.startswith("bool"):
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(value)
                return lowered in ("1", "true", "yes", "on")
            return bool(value)
        if kind.startswith("int"):
            if isinstance(value, bool):
                raise ValueError(value)
            return int(value)
        if kind.startswith("float"):
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where}: expected {kind}, got {value!r}") from error
    return value

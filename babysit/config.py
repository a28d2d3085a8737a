"""Settings: frozen dataclasses, filled with precedence flag > BABYSIT_* env > file > default.

The file is `babysit.toml` in the working directory, or the `[tool.babysit]` table of
`pyproject.toml`. Both take the same tables:

    [poll]                      [rules]
    interval = 30               divergence_steps = 3
    max_interval = 300          spike_k = 6.0

and the user's own alerts, one `[[alerts]]` table each (file only):

    [[alerts]]
    metric = "val_acc"
    below = 0.5                 # or above, not_improving_for (evals), rises_by_percent
    after_step = 1000           # optional, with before_step
    severity = "high"           # low, medium (default), high, blocker
"""

from __future__ import annotations

import dataclasses
import math
import os
import reprlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from babysit.safe_files import UnsafeFile, read_regular
from babysit.user_alerts import AlertError, UserAlert, parse_alerts

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


class ConfigError(Exception):
    """A setting has an unknown name, a value of the wrong type, or one out of bounds."""


MAX_CONFIG_BYTES = 4 * 1024 * 1024  # a pyproject.toml is a few kB
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist = 3, 80, 80, 6
_DAY = 86400
_MONTH = 30 * _DAY
# The least quiet after which a log watched alone may be called abandoned: targets look
# for a process writing it only then (a scan of /proc).
ABANDONED_LOG_FLOOR = 3600.0


def _bounded(default: Any, low: float, high: float) -> Any:
    """A setting's default, with the bounds every value of it must keep (from a flag, a
    BABYSIT_* variable or the config file alike)."""
    return field(default=default, metadata={"min": low, "max": high})


@dataclass(frozen=True)
class PollSettings:
    interval: float = _bounded(30.0, 0.1, 86400)
    max_interval: float = _bounded(300.0, 0.1, 7 * _DAY)
    backoff: bool = True
    backoff_factor: float = _bounded(1.5, 1.0, 10)
    # A relative change of the loss between polls above this resets the interval.
    loss_change_reset: float = _bounded(0.05, 0, 100)
    summary_every: int = _bounded(5, 0, 100000)
    # A log that does not exist yet is waited for this long (training not started yet);
    # 0: give up at once. Never with --once, which answers now.
    wait_for_log: float = _bounded(600.0, 0, 7 * _DAY)
    once: bool = False
    max_polls: int | None = _bounded(None, 1, 1000000000)
    # Stop watching after this many seconds with a snapshot of a run still going (an
    # agent's shell tool gives up after minutes; --until-event could wait for hours).
    timeout: float | None = _bounded(None, 1, 365 * _DAY)
    schedule: tuple[float, ...] | None = None  # fixed cadence while healthy, in seconds
    until_event: bool = False  # stop at the first thing that needs attention


@dataclass(frozen=True)
class RuleSettings:
    """Thresholds for the rules; see references/common-issues.md for each one."""

    # Consecutive logged points the loss level must stay beyond its noise and the
    # least rise over its best (a short run, under 10 points, needs 2).
    divergence_steps: int = _bounded(3, 1, 10000)
    divergence_min_rise: float = _bounded(0.07, 0, 1000)  # of the best level
    # Robust sigmas of the run's noise (5/8 of it for a shift lasting 2·steps+1 points).
    divergence_noise_k: float = _bounded(4.0, 0, 1000)
    # A level this far above its best (1.0: 2×) diverged, however slowly it got there.
    divergence_level: float = _bounded(1.0, 0.01, 1e6)
    # Above where the run started by this much, and not coming back: a blocker.
    divergence_blocker_rise: float = _bounded(0.25, 0, 1000)
    # Open at the run's end, a level less than this far above its best (0.5: 1.5×) and
    # below where the run started: a final model somewhat worse than its best (medium),
    # not a broken one (a blocker).
    divergence_small_rise: float = _bounded(0.5, 0, 1000)
    # The log's first loss is the run's starting value only at or before this step (a
    # log that begins mid-run has no starting value to compare with).
    divergence_start_steps: int = _bounded(100, 0, 10**12)
    # Not learning: logged points before a flat loss counts, the least fall from the
    # start that counts as learning, identical losses in a row, and (after this many
    # warm-up points) points at an lr or grad_norm of exactly 0.
    not_learning_points: int = _bounded(20, 3, 100000)
    not_learning_min_fall: float = _bounded(0.005, 0, 1)
    # ... and, when the planned steps are known, not before this share of them.
    not_learning_share: float = _bounded(0.1, 0, 1)
    not_learning_identical: int = _bounded(10, 2, 100000)
    not_learning_warmup_points: int = _bounded(1, 0, 100000)
    not_learning_zero_points: int = _bounded(5, 1, 100000)
    # A short log (under not_learning_points) learned when its loss fell this share
    # below its first value; identical on every point from its first, this many suffice;
    not_learning_short_fall: float = _bounded(0.1, 0, 1)
    not_learning_identical_short: int = _bounded(5, 2, 100000)
    # ... and its few points must span this many steps (five steps say nothing).
    not_learning_short_steps: int = _bounded(100, 1, 10**9)
    # The model's vocabulary, when the log does not say it: a language model's loss above
    # ln(vocab_size) scores worse than a uniform guess.
    vocab_size: int | None = _bounded(None, 2, 10**9)
    # A training loss above this has blown up numerically.
    loss_blowup: float = _bounded(1e8, 1e-6, 1e300)
    spike_window: int = _bounded(50, 2, 100000)
    spike_k: float = _bounded(6.0, 0.1, 1000)
    spike_min_points: int = _bounded(10, 2, 100000)
    spike_min_rise: float = _bounded(0.2, 0, 1000)
    stall_polls: int = _bounded(2, 1, 10000)
    stall_seconds: float = _bounded(0.0, 0, _MONTH)
    # Times the run's usual gap between progress lines.
    stall_cadence_factor: float = _bounded(5.0, 1, 1000)
    # The least wait while that gap is not known.
    stall_unknown_seconds: float = _bounded(60.0, 0, _MONTH)
    # Before the first step (loading, compiling).
    stall_setup_seconds: float = _bounded(600.0, 0, _MONTH)
    stall_save_seconds: float = _bounded(900.0, 0, _MONTH)  # while a checkpoint is being written
    stall_eval_seconds: float = _bounded(900.0, 0, _MONTH)  # while an evaluation runs
    # A log watched alone, unwritten this long while no process on this machine holds it
    # open for writing: the run is over (ENDED, outcome not confirmed), not "running".
    abandoned_log_seconds: float = _bounded(6 * 3600.0, ABANDONED_LOG_FLOOR, _MONTH)
    grad_norm_max: float = _bounded(1000.0, 1e-09, 1e300)
    grad_norm_ratio: float = _bounded(100.0, 1, 1e12)
    grad_norm_window: int = _bounded(20, 1, 100000)
    slow_drop: float = _bounded(0.5, 0.01, 0.99)
    slow_baseline_samples: int = _bounded(5, 1, 100000)
    slow_recent_samples: int = _bounded(5, 1, 100000)
    # Robust sigmas of the baseline's own spread the drop must exceed as well.
    slow_noise_k: float = _bounded(4.0, 0, 1000)
    eval_degradation_evals: int = _bounded(3, 2, 1000)
    eval_min_worsening: float = _bounded(0.01, 0, 1000)
    # With few evaluations, the latest this much worse than the best (and beyond the
    # metric's noise when known) while the training loss improved.
    eval_jump: float = _bounded(0.5, 0, 1000)
    # A steady rise within the metric's noise still counts once it ends this far above
    # the best evaluation.
    eval_far_from_best: float = _bounded(0.25, 0, 1000)
    # Back within this of the best eval: recovered.
    eval_recovery_tolerance: float = _bounded(0.05, 0, 1000)
    crash_grace_seconds: float = _bounded(10.0, 0, 86400)
    lr_zero_points: int = _bounded(5, 1, 100000)
    lr_warmup_fraction: float = _bounded(0.5, 0.01, 1)
    lr_rise_tolerance: float = _bounded(0.1, 0, 1000)
    # The learning rate this many times below (its peak, after warm-up) or above the one
    # the run's configuration or command line gives.
    lr_config_factor: float = _bounded(10.0, 1.5, 1e6)
    grad_vanish_points: int = _bounded(5, 1, 100000)
    grad_vanish_ratio: float = _bounded(1e-4, 1e-12, 1)
    gpu_idle_percent: float = _bounded(5.0, 0, 100)
    gpu_idle_polls: int = _bounded(2, 1, 100000)
    loss_scale_floor: float = _bounded(1e-4, 0, 1e12)  # fairseq's default minimum; DeepSpeed's is 1
    # Cuts in a row (below 1024) that are worth a warning.
    loss_scale_halvings: int = _bounded(4, 1, 1000)
    # Logged steps over which every one being skipped counts.
    loss_scale_skip_window: int = _bounded(20, 2, 100000)


@dataclass(frozen=True)
class NotifySettings:
    """Where and when to send notifications (apprise URLs)."""

    urls: tuple[str, ...] = ()
    severity: str = "high"  # the least severe anomaly worth a message
    # The same anomaly type at most once per this.
    repeat_seconds: float = _bounded(3600.0, 0, _MONTH)
    # The most babysit waits at its end for notifications still being sent.
    deadline_seconds: float = _bounded(10.0, 0.5, 600)


@dataclass(frozen=True)
class EfficiencySettings:
    """What MFU needs that a log rarely says: the hardware and the model's size. None:
    not given (then taken from the log when it says, else MFU is unavailable)."""

    gpu: str | None = None  # h100-sxm, a100, h200, … (the peak table's names)
    gpus: int | None = _bounded(None, 1, 1000000)
    precision: str = "bf16"  # fp32, tf32, bf16, fp16, fp8
    peak_tflops: float | None = _bounded(None, 0.001, 1e7)  # per GPU, overrides the table
    flops_per_token: float | None = _bounded(None, 1, 1e20)
    model_params: float | None = _bounded(None, 1, 1e16)
    layers: int | None = _bounded(None, 1, 100000)
    width: int | None = _bounded(None, 1, 10000000)
    seq_len: int | None = _bounded(None, 1, 100000000)
    tokens_per_step: float | None = _bounded(None, 1, 1e15)


@dataclass(frozen=True)
class Settings:
    poll: PollSettings = field(default_factory=PollSettings)
    rules: RuleSettings = field(default_factory=RuleSettings)
    notify: NotifySettings = field(default_factory=NotifySettings)
    efficiency: EfficiencySettings = field(default_factory=EfficiencySettings)
    fix: bool = True
    out_dir: Path = Path(".")
    run_id: str | None = None
    target_steps: int | None = None
    json: bool = False
    serve: bool = False  # reports carry the metric curves (for the dashboard)
    alerts: tuple[UserAlert, ...] = ()  # the user's own, from [[alerts]]


_SECTIONS = {"poll": PollSettings, "rules": RuleSettings, "notify": NotifySettings,
             "efficiency": EfficiencySettings}


def load_settings(cwd: Path, env: Mapping[str, str] | None = None,
                  poll: Mapping[str, Any] | None = None,
                  rules: Mapping[str, Any] | None = None,
                  notify: Mapping[str, Any] | None = None,
                  efficiency: Mapping[str, Any] | None = None,
                  defaults: Mapping[str, Mapping[str, Any]] | None = None,
                  **top: Any) -> Settings:
    """Build Settings from the config file in `cwd`, BABYSIT_* variables and the
    explicit overrides (flags). Overrides whose value is None are ignored. `defaults`
    (per section) are the target kind's own, below everything else (Vertex AI jobs are
    polled every 60 s, not 30).

    Raises ConfigError naming the offending key."""
    env = os.environ if env is None else env
    from_file = _read_file(cwd)
    sections: dict[str, Any] = {}
    for name, cls in _SECTIONS.items():
        table = from_file.get(name, {})
        if not isinstance(table, Mapping):
            raise ConfigError(f"[{name}] in the babysit config must be a table of settings, "
                              f"not {_shown(table)}")
        values = dict((defaults or {}).get(name, {}))
        values.update(_coerce_all(cls, table, f"[{name}]"))
        values.update(_from_env(cls, env, prefix="BABYSIT_"))
        explicit = {"poll": poll, "rules": rules, "notify": notify,
                    "efficiency": efficiency}[name]
        known = {f.name: f for f in fields(cls)}
        for key, value in (explicit or {}).items():
            if value is not None:
                values[key] = _check(known[key], value, f"--{key.replace('_', '-')}")
        sections[name] = cls(**values)
    unknown = set(from_file) - set(_SECTIONS) - {"alerts"}
    if unknown:
        raise ConfigError(f"unknown table(s) in babysit config: {', '.join(sorted(unknown))}; "
                          f"expected [poll], [rules], [notify], [efficiency] and [[alerts]]")
    try:
        alerts = parse_alerts(from_file.get("alerts", []))
    except AlertError as error:
        raise ConfigError(str(error)) from error
    return Settings(**sections, alerts=alerts,
                    **{k: v for k, v in top.items() if v is not None})


def _read_file(cwd: Path) -> Mapping[str, Any]:
    """The babysit table of `babysit.toml`, else of `pyproject.toml` (`[tool.babysit]`).
    Raises ConfigError for a file that is not a small regular file (a FIFO or a device
    is refused before any read), is not UTF-8 TOML, or nests too deeply to parse."""
    own = cwd / "babysit.toml"
    project = cwd / "pyproject.toml"
    path = own if os.path.lexists(own) else project if os.path.lexists(project) else None
    if path is None:
        return {}
    try:
        data: dict[str, Any] = tomllib.loads(
            read_regular(path, MAX_CONFIG_BYTES, follow=True).decode("utf-8"))
    except UnsafeFile as error:
        raise ConfigError(f"cannot read babysit config: {error}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot read babysit config {path}: {error}") from None
    except RecursionError:
        raise ConfigError(f"cannot read babysit config {path}: values nested too deeply "
                          f"to parse") from None
    except ValueError as error:  # an integer of thousands of digits: int() refuses it
        raise ConfigError(f"cannot read babysit config {path}: {str(error)[:200]}") from None
    if path == own:
        return data
    tool: Any = data.get("tool", {})
    section: Any = tool.get("babysit", {}) if isinstance(tool, dict) else {}
    if not isinstance(section, dict):
        raise ConfigError(f"[tool.babysit] in {path} must be a table of settings, not "
                          f"{_shown(section)}")
    return section


def _shown(value: Any) -> str:
    """A value for an error message: short, and safe on a value nested thousands deep."""
    return _REPR.repr(value)


def _coerce_all(cls: type, values: Mapping[str, Any], where: str) -> dict[str, Any]:
    known = {f.name: f for f in fields(cls)}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"unknown setting {_shown(key)} in {where}; known: "
                              f"{', '.join(known)}")
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
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return _check(f, int(value), where)
        if kind.startswith("float"):
            if isinstance(value, bool):
                raise ValueError(value)
            return _check(f, float(value), where)
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError(f"{where}: expected {kind.split(' ')[0]}, got {_shown(value)}") \
            from error
    return value


def _check(f: dataclasses.Field[Any], value: Any, where: str) -> Any:
    """A number within the field's bounds, or ConfigError with the same message wherever
    the value came from."""
    low, high = f.metadata.get("min"), f.metadata.get("max")
    if low is None or high is None or not isinstance(value, (int, float)) \
            or isinstance(value, bool):
        return value
    if not math.isfinite(value) or not low <= value <= high:
        raise ConfigError(f"{where}: must be between {low:g} and {high:g}, got "
                          f"{_shown(value)}")
    return value

"""W&B runs: a local run directory (its transaction log, read incrementally, no API key
needed) or a run on a W&B server through the public API (only history steps after the
last one seen, each poll).

W&B's states map to terminal states as the artifact spec says: finished → SUCCEEDED,
crashed / failed → FAILED, killed → CANCELLED. A local run whose process was killed
writes no exit record and stays "running"; the age of its file then tells (stalled)."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any, ClassVar

from babysit.model import Record, TerminalState
from babysit.parsing.text import number_from
from babysit.redact import clip
from babysit.snapshot import LogSnapshot, ProcessSnapshot, ServiceSnapshot, Snapshot
from babysit.targets.base import Target, TargetError, TargetUnavailable
from babysit.targets.common.fallback import TrackerUnreachable
from babysit.targets.common.tracker_rows import (
    StepOrigin,
    gpu_from_system,
    schedule_from_params,
    target_from_params,
    unreachable_reason,
)
from babysit.targets.kinds import require_extra
from babysit.targets.wandb import KIND
from babysit.targets.wandb.spec import run_path

_STATES = {"finished": TerminalState.SUCCEEDED, "crashed": TerminalState.FAILED,
           "failed": TerminalState.FAILED, "killed": TerminalState.CANCELLED}


def wandb_target(spec: str) -> Target:
    """A local run directory when `spec` is one, else an entity/project/run path or URL."""
    try:
        path = run_path(spec)
    except ValueError as error:
        raise TargetError(str(error)) from error
    return WandbDirTarget(spec) if path is None else WandbApiTarget(spec, path)


def _records(rows: Iterable[tuple[int | None, dict[str, float]]], target: int | None,
             origin: StepOrigin) -> list[Record]:
    """W&B's `_step` counts `wandb.log` calls (from 0, unless the script passes its own
    `step=`): records keep it as W&B's charts show it, and `origin` learns whether the
    run counts from 0. The trainer's own step (HF logs `train/global_step`, a count of
    completed steps) is preferred when the row carries one."""
    records = []
    for step, values in rows:
        trainer_step = next((values[k] for k in _TRAINER_STEPS if k in values), None)
        if trainer_step is not None and math.isfinite(trainer_step):
            step = int(trainer_step)
            values = {k: v for k, v in values.items() if k not in _TRAINER_STEPS}
            origin.counts()
        else:
            origin.see((step,), target)
        if values or step is not None:
            records.append(Record(step=step, metrics=values, fmt="wandb", target_steps=target))
    return records


_TRAINER_STEPS = ("train/global_step", "trainer/global_step", "global_step")


class WandbDirTarget:
    target_type: ClassVar[str] = "wandb"

    def __init__(self, directory: str) -> None:
        try:
            from babysit.targets.wandb.files import WandbFormatError, WandbRunDir
        except ImportError as error:  # pragma: no cover - the module itself has no deps
            raise TargetError(str(error)) from error
        self._format_error = WandbFormatError
        self._label = directory
        try:
            self._dir = WandbRunDir(directory)
        except FileNotFoundError as error:
            raise TargetError(f"--wandb {directory}: {error}") from error
        self._target: int | None = None
        self._schedule: str | None = None
        self._system: dict[str, float] = {}
        self._run: dict[str, str] = {}
        self._exit: int | None = None
        self._origin = StepOrigin()
        self._notices = [f"reading the W&B run file {self._dir.path}"]

    @property
    def label(self) -> str:
        return self._label

    def poll(self, final: bool = False) -> Snapshot:
        try:
            update = self._dir.poll()
        except ModuleNotFoundError as error:
            raise TargetUnavailable(str(require_extra(KIND, "decoding W&B run files"))) \
                from error
        except (OSError, self._format_error) as error:
            raise TargetUnavailable(f"cannot read {self._dir.path}: {error}") from error
        if update.config:
            self._target = target_from_params(update.config) or self._target
            self._schedule = schedule_from_params(update.config) or self._schedule
        for row in update.system:
            self._system.update(row)
        self._run.update(update.run)
        if update.finished:
            self._exit = update.exit_code
        notices, self._notices = list(self._notices), []
        if update.skipped_records:
            notices.append(f"skipped {update.skipped_records} damaged record(s) in the run file")
        state, detail = None, ""
        if self._exit is not None:
            state = TerminalState.SUCCEEDED if self._exit == 0 else TerminalState.FAILED
            detail = f"W&B run ended with exit code {self._exit}"
        records = _records(update.history, self._target, self._origin)
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                new_lines=len(update.history),
                formats=("wandb",),
                quiet_for=max(0.0, time.time() - self._dir.path.stat().st_mtime),
                steps_from_zero=self._origin.from_zero,
                lr_schedule=self._schedule),
            process=ProcessSnapshot(
                gpu=gpu_from_system(self._system)),
            service=ServiceSnapshot(
                run_state=state,
                run_state_detail=detail,
                run_state_source="W&B",
                evidence_url=self._url()),
            notices=tuple(notices),
            stall_hint=("a W&B run whose process was killed writes no exit record, so its "
                         "file stays 'running' (evidence: the run file's age)"),
        )

    def _url(self) -> str | None:
        run = self._run
        if run.get("entity") and run.get("project") and run.get("run_id"):
            return f"https://wandb.ai/{run['entity']}/{run['project']}/runs/{run['run_id']}"
        return str(self._dir.path)

    def close(self) -> None:
        pass


class WandbApiTarget:
    target_type: ClassVar[str] = "wandb"

    def __init__(self, spec: str, path: str, *, timeout: int = 20) -> None:
        try:
            import wandb
        except ImportError as error:
            raise require_extra(KIND, "watching W&B runs") from error
        self._label = spec
        self._path = path
        self._last_step = -1
        self._origin = StepOrigin()
        self._timeout = timeout
        try:
            api = wandb.Api(timeout=timeout)
            self._run = api.run(path)
        except Exception as error:
            # wandb says "failed to verify credentials" when it cannot reach the server
            # at all: asking the server directly tells the two apart.
            base = _base_url()
            reason = _probe(base, timeout)
            if reason is not None:  # --fallback-log can start without the server
                raise TrackerUnreachable(f"W&B server {base} unreachable: {reason}") \
                    from error
            raise TargetError(_explain_start(error, path)) from error
        self._base = str(api.settings["base_url"])
        # History pages are asked for directly (the GraphQL the client itself sends for a
        # page), so a poll costs what is new; the client's scan_history first lists
        # every step of a live run. Other kinds of credentials use scan_history.
        self._key: str | None = getattr(api, "api_key", None)
        self._graphql = f"{api.settings['base_url']}/graphql"
        self._fresh = True  # the first answer is current; later polls must re-load
        self._notices = [f"W&B run {path}: {self._run.url}"]

    @property
    def label(self) -> str:
        return self._label

    def poll(self, final: bool = False) -> Snapshot:
        run = self._run
        try:
            if not self._fresh:
                run.load(force=True)  # api.run() would answer from its cache
            self._fresh = False
            rows = []
            for row in self._new_rows(run):
                step = row.get("_step")
                if isinstance(step, (int, float)) and step <= self._last_step:
                    continue
                rows.append(_api_row(row))
                if isinstance(step, (int, float)):
                    self._last_step = int(step)
            system = dict(run.system_metrics or {})
        except Exception as error:
            reason = unreachable_reason(error)
            if reason is not None:
                raise TargetUnavailable(f"W&B API at {self._base} unreachable: {reason}") \
                    from error
            raise TargetUnavailable(f"W&B API: {_words(error)}") from error
        latest_system = {k.removeprefix("system."): float(v) for k, v in system.items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool)}
        target = target_from_params(dict(run.config or {}))
        state_name = str(run.state or "running")
        state = _STATES.get(state_name)
        notices, self._notices = tuple(self._notices), []
        records = _records(rows, target, self._origin)
        if target is not None:
            records = [replace(r, target_steps=target) for r in records]
        return Snapshot(
            log=LogSnapshot(
                records=tuple(records),
                new_lines=len(rows),
                formats=("wandb",),
                steps_from_zero=self._origin.from_zero,
                lr_schedule=schedule_from_params(dict(run.config or {}))),
            process=ProcessSnapshot(
                gpu=gpu_from_system(latest_system)),
            service=ServiceSnapshot(
                run_state=state,
                run_state_detail=f"W&B state: {state_name}",
                run_state_source="W&B",
                evidence_url=str(run.url)),
            notices=notices,
            stall_hint=("W&B still reports the run as running; a run whose process died "
                         "shows 'crashed' only after W&B's heartbeat times out"),
        )

    def _new_rows(self, run: Any) -> Iterable[dict[str, Any]]:
        if self._key is None:
            scan: Iterable[dict[str, Any]] = run.scan_history(min_step=self._last_step + 1,
                                                              page_size=_PAGE)
            return scan
        return self._pages(run, self._last_step + 1, int(run.lastHistoryStep) + 1)

    def _pages(self, run: Any, low: int, high: int) -> Iterator[dict[str, Any]]:
        """History rows with low <= _step < high, a page of at most _PAGE steps a request."""
        import requests

        entity, project, name = self._path.split("/")
        while low < high:
            up = min(high, low + _PAGE)
            response = requests.post(
                self._graphql, auth=("api", self._key or ""), timeout=self._timeout,
                json={"query": _HISTORY_PAGE, "variables": {
                    "entity": entity, "project": project, "run": name, "minStep": low,
                    "maxStep": up, "pageSize": _PAGE}})
            response.raise_for_status()
            body = response.json()
            if body.get("errors"):
                raise RuntimeError(clip(str(body["errors"]), 300))
            lines = body["data"]["project"]["run"]["history"]
            yield from (json.loads(line) for line in lines)
            low = up

    def close(self) -> None:
        pass


_PAGE = 1000
_HISTORY_PAGE = """
query HistoryPage($entity: String!, $project: String!, $run: String!, $minStep: Int64!,
                  $maxStep: Int64!, $pageSize: Int!) {
  project(name: $project, entityName: $entity) {
    run(name: $run) { history(minStep: $minStep, maxStep: $maxStep, samples: $pageSize) }
  }
}
"""


def _api_row(row: dict[str, Any]) -> tuple[int | None, dict[str, float]]:
    step = row.get("_step")
    values: dict[str, float] = {}
    for key, value in row.items():
        if key.startswith("_"):
            continue
        number = number_from(value)
        if number is not None:
            values[key] = number
    return (int(step) if isinstance(step, (int, float)) else None), values


def _base_url() -> str:
    """The W&B server the client talks to (as `wandb.Api` finds it)."""
    try:
        from wandb import env
        from wandb.sdk import wandb_setup

        return str(env.get_base_url(wandb_setup.singleton().settings.base_url)).rstrip("/")
    except Exception:  # wandb's internals moved: its documented variable, or its default
        return os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai").rstrip("/")


def _probe(base: str, timeout: float) -> str | None:
    """Why the server at `base` cannot be reached, or None when it answers at all."""
    import requests

    try:
        requests.get(base, timeout=min(timeout, 10.0), allow_redirects=False).close()
    except Exception as error:  # a bad address is not an unreachable one
        return unreachable_reason(error)
    return None


def _words(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return clip(f"{type(error).__name__}: {text[0] if text else ''}", 300)


def _explain_start(error: BaseException, path: str) -> str:
    text = str(error)
    if "api_key" in text.lower() or "api key" in text.lower() or "login" in text.lower():
        return ("W&B needs credentials to read a run from its server: run `wandb login` or "
                "set WANDB_API_KEY (a local run directory needs none)")
    if "not found" in text.lower() or "could not find" in text.lower():
        return f"W&B run {path} not found (check entity/project/run_id)"
    return f"cannot open W&B run {path}: {_words(error)}"

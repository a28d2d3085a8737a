"""One babysitting session, start to finish: target → watch → verdict → artifact.

No printing happens here (the observer renders) and nothing exits the process
(`exit_code_for` maps the outcome; the CLI returns it)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path

from babysit.artifact import ARTIFACT_NAME, verdict_to_dict, write_artifact
from babysit.clock import Clock, SystemClock
from babysit.config import Settings
from babysit.fixes import Approver, Fixer
from babysit.judge import Reviewer
from babysit.loop import Watcher
from babysit.model import (
    Confidence,
    Decision,
    Finding,
    Severity,
    TerminalState,
    Verdict,
)
from babysit.reports import Observer
from babysit.targets.base import Target, TargetError
from babysit.targets.process import ProcessTarget
from babysit.verdict import decide


class ExitCode(IntEnum):
    GO = 0
    NO_GO = 1
    USAGE = 2
    CONDITIONAL = 3
    UNREACHABLE = 4
    INTERRUPTED = 130


@dataclass(frozen=True)
class SessionResult:
    verdict: Verdict
    artifact_path: Path | None
    artifact_error: str | None
    exit_code: ExitCode


def exit_code_for(verdict: Verdict, interrupted: bool, reached: bool = True,
                  awaiting_approval: bool = False) -> ExitCode:
    """The single mapping from an outcome to the process exit status."""
    if interrupted:
        return ExitCode.INTERRUPTED
    if not reached:
        return ExitCode.UNREACHABLE
    if awaiting_approval:
        return ExitCode.CONDITIONAL
    return {Decision.GO: ExitCode.GO, Decision.NO_GO: ExitCode.NO_GO,
            Decision.CONDITIONAL: ExitCode.CONDITIONAL}[verdict.decision]


def run_session(target_factory: Callable[[], Target], target_text: str, target_type: str,
                settings: Settings, observer: Observer, clock: Clock | None = None,
                rewatch: Sequence[str] = (), approver: Approver | None = None,
                reviewer: Reviewer | None = None) -> SessionResult:
    clock = clock or SystemClock()
    run_id = settings.run_id or str(uuid.uuid4())
    started = clock.monotonic()
    try:
        target = target_factory()
    except TargetError as error:
        verdict = _unreachable_verdict(run_id, target_text, target_type, str(error),
                                       clock.monotonic() - started)
        return _finish(verdict, settings, observer, clock, interrupted=False, reached=False)
    fixer = None
    if isinstance(target, ProcessTarget):
        fixer = Fixer(target, fix_enabled=settings.fix, observer=observer, clock=clock,
                      approver=approver)
    try:
        watcher = Watcher(target, settings, observer, clock, fixer=fixer)
        if settings.poll.until_event:
            watcher.known_anomalies = _already_reported(settings, target.label)
        if reviewer is not None:
            watcher.reviewer = reviewer
        try:
            result = watcher.run()
        except TargetError as error:
            verdict = _unreachable_verdict(run_id, target.label, target.target_type, str(error),
                                           clock.monotonic() - started)
            return _finish(verdict, settings, observer, clock, interrupted=False, reached=False)
        except Exception as error:
            # A bug in babysit must not cost the user the verdict file: write what is
            # known, marked as incomplete, then let the error surface.
            result = watcher.result_so_far(f"babysit internal error: {error!r}")
            verdict = decide(result, run_id=run_id, target=target.label,
                             target_type=target.target_type,
                             actions=fixer.actions if fixer else ())
            _finish(verdict, settings, observer, clock, interrupted=False)
            raise
        log_path = target.label if target.target_type == "local-log" else None
        if isinstance(target, ProcessTarget):
            log_path = target.log_path
        actions = sorted([*(fixer.actions if fixer else ()), *watcher.actions],
                         key=lambda a: a.at)
        verdict = decide(result, run_id=run_id, target=target.label,
                         target_type=target.target_type, rewatch=rewatch, log_path=log_path,
                         actions=actions, commands=fixer.commands if fixer else ())
        awaiting = bool(fixer and fixer.awaiting) or bool(watcher.awaiting)
        return _finish(verdict, settings, observer, clock, interrupted=result.interrupted,
                       awaiting_approval=awaiting)
    finally:
        target.close()


def _already_reported(settings: Settings, label: str) -> set[tuple[str, int | None]]:
    """Anomalies the previous verdict for the same target already carried: an agent that
    re-runs `--until-event` after handling one must not be woken by it again."""
    try:
        previous = json.loads((settings.out_dir / ARTIFACT_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(previous, dict) or previous.get("target") != label:
        return set()
    return {(str(a.get("type")), a.get("step")) for a in previous.get("anomalies_detected", [])
            if isinstance(a, dict)}


def _finish(verdict: Verdict, settings: Settings, observer: Observer, clock: Clock,
            interrupted: bool, reached: bool = True,
            awaiting_approval: bool = False) -> SessionResult:
    data = verdict_to_dict(verdict, clock.now())
    path: Path | None = None
    error: str | None = None
    try:
        path = write_artifact(data, settings.out_dir)
    except OSError as problem:
        error = f"cannot write the verdict to {settings.out_dir}: {problem}"
    observer.final(verdict, data, str(path) if path else None)
    return SessionResult(verdict, path, error,
                         exit_code_for(verdict, interrupted, reached, awaiting_approval))


def _unreachable_verdict(run_id: str, target: str, target_type: str, reason: str,
                         watched: float) -> Verdict:
    return Verdict(
        run_id=run_id,
        target=target,
        target_type=target_type,
        terminal_state=TerminalState.RUNNING,
        decision=Decision.CONDITIONAL,
        confidence=Confidence.LOW,
        summary=f"CONDITIONAL — babysit could not read the target, so it knows nothing about "
                f"the run: {reason}",
        total_steps=None,
        target_steps=None,
        final_metrics={},
        best_checkpoint=None,
        anomalies=(),
        findings=(Finding("F001", Severity.HIGH, "target could not be read", reason,
                          "Check the path or address and your permissions, then run babysit "
                          "again."),),
        next_commands=(),
        actions=(),
        duration_seconds=round(watched, 3),
        stop_reason=f"target unreachable: {reason}",
    )

"""From what was watched to GO / NO-GO / CONDITIONAL, with findings and next steps.

The rules of `shared/spec/artifact.md`:
  GO           the run SUCCEEDED and no blocker or high anomaly is unresolved
  NO-GO        it ended FAILED / CANCELLED / TIMEOUT, or a blocker is unresolved
  CONDITIONAL  anything else (still running, or finished with unresolved highs)
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from babysit.loop import WatchResult
from babysit.model import (
    Action,
    ActionStatus,
    Anomaly,
    AnomalyType,
    Confidence,
    Decision,
    EventKind,
    Finding,
    Severity,
    TerminalState,
    Verdict,
)
from babysit.rules.event_rules import FIXES
from babysit.tracker import MAX_PER_TYPE

_ENDED_BADLY = (TerminalState.FAILED, TerminalState.CANCELLED, TerminalState.TIMEOUT)


def decide(result: WatchResult, *, run_id: str, target: str, target_type: str,
           rewatch: Sequence[str] = (), actions: Sequence[Action] = (),
           log_path: str | None = None, commands: Sequence[str] = ()) -> Verdict:
    tracker = result.tracker
    state = result.state
    unresolved = tracker.unresolved()
    blockers = [a for a in unresolved if a.severity is Severity.BLOCKER]
    highs = [a for a in unresolved if a.severity is Severity.HIGH]
    if state in _ENDED_BADLY or blockers:
        decision = Decision.NO_GO
    elif state is TerminalState.SUCCEEDED and not highs:
        decision = Decision.GO
    else:
        decision = Decision.CONDITIONAL
    return Verdict(
        run_id=run_id,
        target=target,
        target_type=target_type,
        terminal_state=state,
        decision=decision,
        confidence=_confidence(result, decision, blockers),
        summary=_summary(result, decision, blockers, highs)
        + (" (the process's exit status was not visible: inferred from the log)"
           if tracker.exit_inferred else "")
        + (f" ({tracker.suppressed} more anomalies of types already listed {MAX_PER_TYPE} "
           f"times left out)"
           if tracker.suppressed else "")
        + (f" (run: {result.evidence_url})" if result.evidence_url else ""),
        total_steps=tracker.step,
        target_steps=tracker.target_steps,
        final_metrics=dict(tracker.metrics),
        best_checkpoint=tracker.good_checkpoint(),
        anomalies=tuple(tracker.anomalies),
        findings=tuple(_findings(unresolved, tracker.good_checkpoint(), actions)),
        next_commands=tuple([*commands, *_next_commands(result, decision, rewatch, log_path)]),
        actions=tuple(actions),
        duration_seconds=round(result.watched_seconds, 3),
        stop_reason=result.stop_reason,
    )


def _confidence(result: WatchResult, decision: Decision,
                blockers: list[Anomaly]) -> Confidence:
    tracker = result.tracker
    saw_training = tracker.step is not None or bool(tracker.metrics)
    if decision is Decision.NO_GO:
        return Confidence.HIGH if (blockers or tracker.crash) else Confidence.MEDIUM
    if decision is Decision.GO:
        explicit = tracker.completed is not None and tracker.completed.kind is EventKind.COMPLETED
        if explicit and saw_training:
            return Confidence.HIGH
        return Confidence.MEDIUM if saw_training else Confidence.LOW
    if not saw_training:
        return Confidence.LOW
    return Confidence.MEDIUM if result.polls > 1 or tracker.step is not None else Confidence.LOW


def _where(anomaly: Anomaly) -> str:
    return f" at step {anomaly.step}" if anomaly.step is not None else ""


def _summary(result: WatchResult, decision: Decision, blockers: list[Anomaly],
             highs: list[Anomaly]) -> str:
    tracker = result.tracker
    state = result.state
    steps = ""
    if tracker.step is not None:
        steps = f" after {tracker.step}" + (f"/{tracker.target_steps}" if tracker.target_steps
                                            else "") + " steps"
    if decision is Decision.NO_GO:
        if blockers:
            first = blockers[0]
            head = f"{first.type.value}{_where(first)}: {first.description}"
        elif tracker.crash is not None:
            head = f"the run ended {state.value}: {tracker.crash.evidence.detail or 'crash'}"
        else:
            head = f"the run ended {state.value}"
        tail = "" if state is not TerminalState.RUNNING else " (babysit stopped while it ran)"
        return _clip(f"NO-GO — {head}{tail}")
    if decision is Decision.GO:
        return _clip(f"GO — training finished{steps} with no unresolved serious anomaly")
    if state is TerminalState.SUCCEEDED:
        first = highs[0]
        return _clip(f"CONDITIONAL — finished{steps}, but {first.type.value}{_where(first)} "
                     f"is unresolved: {first.description}")
    if tracker.step is None and not tracker.metrics:
        return _clip("CONDITIONAL — no training progress could be read from the target yet")
    caveat = f"; open: {highs[0].type.value}{_where(highs[0])}" if highs else ""
    return _clip(f"CONDITIONAL — still running{steps} when babysit stopped "
                 f"({result.stop_reason}){caveat}")


def _clip(text: str, limit: int = 260) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_ROLLBACK = (AnomalyType.NAN_INF, AnomalyType.DIVERGENCE, AnomalyType.LOSS_SPIKE,
             AnomalyType.GRAD_EXPLOSION)


def _findings(unresolved: list[Anomaly], checkpoint: str | None,
              actions: Sequence[Action] = ()) -> list[Finding]:
    by_type: dict[AnomalyType, list[Anomaly]] = {}
    for anomaly in unresolved:
        by_type.setdefault(anomaly.type, []).append(anomaly)
    ordered = sorted(by_type.values(), key=lambda group: -max(a.severity.rank for a in group))
    findings = []
    for number, group in enumerate(ordered, start=1):
        first = group[0]
        severity = max((a.severity for a in group), key=lambda s: s.rank)
        more = f" ({len(group)} occurrences)" if len(group) > 1 else ""
        fix = FIXES.get(first.type, "Inspect the log around this step.")
        if first.type in _ROLLBACK and checkpoint:
            fix += f" The newest checkpoint saved before the problem: {checkpoint}."
        findings.append(Finding(
            id=f"F{number:03d}",
            severity=severity,
            title=f"{first.type.value}{_where(first)}{more}",
            description=first.description,
            fix=fix,
        ))
    worst = max((a.severity for a in unresolved), key=lambda s: s.rank, default=Severity.HIGH)
    for action in actions:
        if action.status is ActionStatus.NEEDS_APPROVAL:
            findings.append(Finding(
                id=f"F{len(findings) + 1:03d}",
                severity=worst,
                title=f"needs your approval: {action.kind}",
                description=action.reason,
                fix=f"Approve and apply it yourself: {action.reason.split(' — because')[0]}.",
            ))
    return findings


def _next_commands(result: WatchResult, decision: Decision, rewatch: Sequence[str],
                   log_path: str | None) -> list[str]:
    commands: list[str] = []
    tracker = result.tracker
    if log_path is not None:
        quoted = shlex.quote(log_path)
        if tracker.crash is not None or decision is Decision.NO_GO:
            commands.append(f"tail -n 80 {quoted}")
        if any(a.type is AnomalyType.NAN_INF for a in tracker.anomalies):
            commands.append(f"grep -n -m 5 -E '\\b(nan|NaN|inf|Inf)\\b' {quoted}")
    if result.state is TerminalState.RUNNING and rewatch:
        commands.append(shlex.join(rewatch))
    return commands

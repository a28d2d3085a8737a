"""From a watch's outcome to GO / NO-GO / CONDITIONAL, with findings and next steps.

A pure function of a frozen `WatchOutcome`. The rules of `references/artifact.md`:
  GO           the run SUCCEEDED, its completion is confirmed (a completion line, the
               planned steps, or the service's own word) and no blocker or high
               anomaly is unresolved
  NO-GO        it ended FAILED / CANCELLED / TIMEOUT, or a blocker is unresolved
  CONDITIONAL  anything else: still running, finished with unresolved highs, ENDED
               (over, with no evidence that it finished), a log babysit could not read
               any training progress from, or a target it could not read at all
"""

from __future__ import annotations

import math
import shlex

from babysit.core.lifecycle import EndingSource
from babysit.core.outcome import WatchOutcome
from babysit.metric_names import measures_learning
from babysit.model import (
    ActionStatus,
    Anomaly,
    AnomalyType,
    Confidence,
    Decision,
    Finding,
    Severity,
    TerminalState,
    Verdict,
)
from babysit.redact import scrub
from babysit.rules.catalog import entry

_ENDED_BADLY = (TerminalState.FAILED, TerminalState.CANCELLED, TerminalState.TIMEOUT)
_NOT_VISIBLE = "not visible"
_TRACKER = "point babysit at the run's tracker (--wandb, --mlflow) or TensorBoard directory"


def decide(outcome: WatchOutcome, run_id: str) -> Verdict:
    if outcome.unreachable is not None:
        return _unreachable(outcome, run_id, outcome.unreachable)
    unresolved = outcome.unresolved()
    blockers = [a for a in unresolved if a.severity is Severity.BLOCKER]
    highs = [a for a in unresolved if a.severity is Severity.HIGH]
    ending = outcome.ending
    confirmed = ending is not None and ending.confirmed
    if outcome.state in _ENDED_BADLY or blockers:
        decision = Decision.NO_GO
    elif outcome.state is TerminalState.SUCCEEDED and not highs and confirmed \
            and _read_enough(outcome):
        decision = Decision.GO
    else:
        decision = Decision.CONDITIONAL
    findings = _findings(outcome, unresolved)
    return Verdict(
        run_id=run_id,
        target=outcome.target,
        target_type=outcome.target_type,
        terminal_state=outcome.state,
        decision=decision,
        confidence=_confidence(outcome, decision, blockers),
        summary=_clip(_with_notes(_summary(outcome, decision, blockers, highs), outcome)),
        total_steps=_completed(outcome),
        target_steps=outcome.target_steps,
        final_metrics=dict(outcome.metrics),
        best_checkpoint=outcome.checkpoint.path if outcome.checkpoint else None,
        anomalies=outcome.anomalies,
        findings=tuple(findings),
        next_commands=tuple([*outcome.commands, *_next_commands(outcome, decision)]),
        actions=outcome.actions,
        duration_seconds=round(outcome.watched_seconds, 3),
        stop_reason=outcome.stop_reason,
        efficiency=outcome.efficiency.to_json() if outcome.efficiency is not None else None,
        reading=outcome.reading,
    )


def _read_enough(outcome: WatchOutcome) -> bool:
    """A GO rests on training babysit saw, unless the run's own service (a tracker, a
    cloud job) vouches for its end: "could not read" is never "healthy"."""
    ending = outcome.ending
    return outcome.saw_training or (ending is not None
                                    and ending.source is EndingSource.REPORTED)


def _learning_shown(outcome: WatchOutcome) -> bool:
    """Whether the log shows some figure of how well the model does (a loss, an
    accuracy, a reward), not only that its steps went by (a bar counting to its total, a
    memory figure), or the run's own service vouches for it. A finished run that shows
    none is still GO (its end is confirmed and nothing went wrong that babysit could
    see; labellers of such logs mostly call them GO, 8 of 11 public ones), at low
    confidence, with a finding that says what was not shown."""
    ending = outcome.ending
    return any(map(measures_learning, outcome.metrics)) or (
        ending is not None and ending.source is EndingSource.REPORTED)


def _confidence(outcome: WatchOutcome, decision: Decision,
                blockers: list[Anomaly]) -> Confidence:
    ending = outcome.ending
    if decision is Decision.NO_GO:
        return Confidence.HIGH if blockers or ending is not None else Confidence.MEDIUM
    if decision is Decision.GO:
        assert ending is not None
        if not _learning_shown(outcome):
            return Confidence.LOW  # it finished; whether it learned, the log does not say
        explicit = ending.source is not EndingSource.STEPS and not ending.inferred
        # A log that printed only its closing figures (`Training time: 10.09 seconds`,
        # a throughput) ended on evidence, but babysit never saw it train step by step:
        # nothing it could have judged (a NaN, a divergence) was in view.
        followed = outcome.step is not None or ending.source is EndingSource.REPORTED
        if explicit and outcome.saw_training and followed:
            return Confidence.HIGH
        return Confidence.MEDIUM if outcome.saw_training else Confidence.LOW
    if not outcome.saw_training:
        return Confidence.LOW
    return Confidence.MEDIUM if outcome.polls > 1 or outcome.step is not None \
        else Confidence.LOW


def _where(anomaly: Anomaly, outcome: WatchOutcome) -> str:
    """` at step 62`, in the run's own numbering; a tracker that counts steps from 0
    says so, or "crash at step 62" reads wrong beside "Steps completed: 63"."""
    if anomaly.step is None:
        return ""
    return f" at step {anomaly.step}" + (" (counted from 0)" if outcome.steps_from_zero else "")


def _completed(outcome: WatchOutcome) -> int | None:
    """The steps completed: the last step, + 1 when steps are indices from 0."""
    if outcome.step is None:
        return None
    return outcome.step + 1 if outcome.steps_from_zero else outcome.step


def _steps(outcome: WatchOutcome) -> str:
    completed = _completed(outcome)
    if completed is None or (outcome.step == 0 and (outcome.epoch or 0) > 0):
        # (a counter that stood at 0 while the epochs went by is a place in the epoch,
        # `epoch_local_steps`: "after 0 steps" says nothing of a run at epoch 21)
        return _epochs(outcome)
    if outcome.reading is not None and outcome.reading.progress == "record":
        return f" after {completed} training records (the log prints no step)"
    total = f"/{outcome.target_steps}" if outcome.target_steps else ""
    return f" after {completed}{total} steps"


def _epochs(outcome: WatchOutcome) -> str:
    """How far a log that prints epochs and no step went (`Epoch 50/50 | train 0.0053 |
    val 0.0041`): its epochs are its progress."""
    epoch = outcome.epoch
    if epoch is None or not math.isfinite(epoch) or epoch < 0:
        return ""
    shown = f"{epoch:g}" if epoch != int(epoch) else f"{int(epoch)}"
    total = f" of {outcome.total_epochs}" if outcome.total_epochs else ""
    return f" at epoch {shown}{total} (the log prints no step)"


def _summary(outcome: WatchOutcome, decision: Decision, blockers: list[Anomaly],
             highs: list[Anomaly]) -> str:
    state = outcome.state
    ending = outcome.ending
    if decision is Decision.NO_GO:
        if blockers:
            first = blockers[0]
            head = f"{first.type.value}{_where(first, outcome)}: {first.description}"
        elif ending is not None:
            head = f"the run ended {state.value}: {ending.evidence}"
        else:
            head = f"the run ended {state.value}"
        tail = " (babysit stopped while it ran)" if state is TerminalState.RUNNING else ""
        return f"NO-GO — {head}{tail}"
    if decision is Decision.GO:
        return f"GO — training finished{_steps(outcome)} with no unresolved serious anomaly"
    if state is TerminalState.ENDED:
        evidence = ending.evidence if ending is not None else "no evidence of how it ended"
        return f"CONDITIONAL — the run ended{_steps(outcome)}, outcome not confirmed: {evidence}"
    if state is TerminalState.SUCCEEDED and not _read_enough(outcome):
        return ("CONDITIONAL — could not read training progress from this log: it says the "
                "run finished, but babysit found no step and no metric in it")
    if state is TerminalState.SUCCEEDED:
        if highs:
            first = highs[0]
            return (f"CONDITIONAL — finished{_steps(outcome)}, but {first.type.value}"
                    f"{_where(first, outcome)} is unresolved: {first.description}")
        evidence = ending.evidence if ending is not None else "no completion evidence"
        return f"CONDITIONAL — the run ended{_steps(outcome)}, but {evidence}"
    if not outcome.saw_training:
        return "CONDITIONAL — no training progress could be read from the target yet"
    caveat = f"; open: {highs[0].type.value}{_where(highs[0], outcome)}" if highs else ""
    return (f"CONDITIONAL — still running{_steps(outcome)} when babysit stopped "
            f"({outcome.stop_reason}){caveat}")


def _with_notes(summary: str, outcome: WatchOutcome) -> str:
    notes = ""
    ending = outcome.ending
    if ending is not None and ending.futile_restart:
        notes += (f" (babysit restarted the run, but the new attempt ended without training: "
                  f"{ending.futile_restart})")
    if ending is not None and ending.inferred and _NOT_VISIBLE not in summary + notes:
        notes += f" (the process's exit status was {_NOT_VISIBLE} to babysit: its ending " \
                 f"was read from the log)"
    if outcome.suppressed:
        notes += (f" ({outcome.suppressed} more anomalies of types already listed many times "
                  f"left out)")
    if outcome.evidence_url:
        notes += f" (run: {outcome.evidence_url})"
    return summary + notes


def _clip(text: str, limit: int = 400) -> str:
    text = scrub(" ".join(text.split()))  # before the cut: a cut secret matches no pattern
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _findings(outcome: WatchOutcome, unresolved: list[Anomaly]) -> list[Finding]:
    by_type: dict[AnomalyType, list[Anomaly]] = {}
    for anomaly in unresolved:
        by_type.setdefault(anomaly.type, []).append(anomaly)
    ordered = sorted(by_type.values(), key=lambda group: -max(a.severity.rank for a in group))
    findings: list[Finding] = []

    def add(severity: Severity, title: str, description: str, fix: str) -> None:
        findings.append(Finding(f"F{len(findings) + 1:03d}", severity, title, description, fix))

    checkpoint = outcome.checkpoint
    for group in ordered:
        first = group[0]
        known = entry(first.type)
        severity = max((a.severity for a in group), key=lambda s: s.rank)
        more = f" ({len(group)} occurrences)" if len(group) > 1 else ""
        fix = known.fix
        if known.rollback and checkpoint is not None:
            fix += f" The checkpoint to go back to ({checkpoint.why}): {checkpoint.path}."
        if first.action_taken != "none":
            fix += f" babysit: {first.action_taken}."
        add(severity, f"{first.type.value}{_where(first, outcome)}{more}", first.description, fix)
    ending = outcome.ending
    if outcome.state is TerminalState.SUCCEEDED and not _read_enough(outcome):
        add(Severity.HIGH, "could not read training progress from this log",
            "babysit recognised no step and no metric in the log, so it cannot tell whether "
            "the run trained at all.",
            f"Check that this is the training's own output (stdout and stderr), or {_TRACKER}.")
    elif outcome.state is TerminalState.SUCCEEDED and not _learning_shown(outcome):
        add(Severity.MEDIUM, "no measure of learning in the log",
            "The run finished, but its log shows no loss, accuracy or other figure of how "
            "well the model does, only that its steps went by.",
            f"Evaluate the saved model before using it, or {_TRACKER}, where its metrics are.")
    if (ending is not None and outcome.state in (TerminalState.SUCCEEDED, TerminalState.ENDED)
            and not ending.confirmed):
        add(Severity.HIGH, "completion not confirmed", ending.evidence,
            "Check that the run did all it was meant to (its last steps, the saved model). "
            "A completion line at the end of training, or the planned total in the log "
            "(or --total-steps), lets babysit confirm it next time.")
    worst = max((a.severity for a in unresolved), key=lambda s: s.rank, default=Severity.HIGH)
    for action in outcome.actions:
        if action.status is ActionStatus.NEEDS_APPROVAL:
            add(worst, f"needs your approval: {action.kind}", action.reason,
                f"Approve and apply it yourself: {action.reason.split(' — because')[0]}.")
    return findings


def _next_commands(outcome: WatchOutcome, decision: Decision) -> list[str]:
    commands: list[str] = []
    # A log path is outside text: quoted, after `--` (a name may begin with `-`), and
    # left out when it holds a control character (no quoting makes a newline safe to
    # paste into a terminal).
    if outcome.log_path is not None and outcome.log_path.isprintable():
        quoted = shlex.quote(outcome.log_path)
        if outcome.state in _ENDED_BADLY or decision is Decision.NO_GO:
            commands.append(f"tail -n 80 -- {quoted}")
        if any(a.type is AnomalyType.NAN_INF for a in outcome.anomalies):
            commands.append(f"grep -n -m 5 -E '\\b(nan|NaN|inf|Inf)\\b' -- {quoted}")
    # Watching again only helps while the verdict can still change: after a NO-GO it
    # would give the same NO-GO and propose itself once more.
    # Its parts are outside text too (a path, an out-dir): a control character the
    # sanitiser would strip would make the command name another file, so none is offered.
    if (outcome.state is TerminalState.RUNNING and decision is not Decision.NO_GO
            and outcome.rewatch and all(part.isprintable() for part in outcome.rewatch)):
        commands.append(shlex.join(outcome.rewatch))
    return commands


def _unreachable(outcome: WatchOutcome, run_id: str, reason: str) -> Verdict:
    return Verdict(
        run_id=run_id,
        target=outcome.target,
        target_type=outcome.target_type,
        terminal_state=TerminalState.RUNNING,
        decision=Decision.CONDITIONAL,
        confidence=Confidence.LOW,
        summary=_clip(f"CONDITIONAL — babysit could not read the target, so it knows nothing "
                      f"about the run: {reason}"),
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
        duration_seconds=round(outcome.watched_seconds, 3),
        stop_reason=f"target unreachable: {reason}",
        unreachable=reason,
    )

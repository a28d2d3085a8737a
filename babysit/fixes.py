"""Carrying out the fix policy: ask `policy.decide`, say what is about to happen, act
through the target, and record every decision.

Nothing here decides on its own. Safe fixes run only when the policy says APPLY;
changes that need the user's approval are put to them at a terminal (only cancelling
the run is something babysit can then do itself) and otherwise recorded as
needs-approval, which ends the watch with exit code 3."""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from babysit.clock import Clock
from babysit.model import Action, ActionStatus, AnomalyType, Severity, Snapshot
from babysit.policy import (
    Cause,
    FixDecision,
    FixKind,
    History,
    Situation,
    Verdict,
    classify_cause,
    decide,
)
from babysit.reports import Observer
from babysit.tracker import RunTracker


class Controls(Protocol):
    """What a target must offer for babysit to act on the run."""

    @property
    def restart_known(self) -> bool: ...

    @property
    def control_pid(self) -> int: ...

    def restart(self) -> str: ...

    def stop_hung(self) -> list[int]: ...

    def cancel(self) -> list[int]: ...

    def leftovers_holding_gpu(self) -> dict[int, float]: ...

    def free_leftovers(self, pids: set[int]) -> list[int]: ...


class Approver(Protocol):
    def ask(self, question: str) -> bool | None:
        """The user's answer; None when there is nobody to ask (no terminal, --json)."""
        ...


class NoApprover:
    def ask(self, question: str) -> bool | None:
        return None


_PROPOSAL_TEXT = {
    FixKind.ROLLBACK: "roll back to {checkpoint}, the newest checkpoint saved before the problem",
    FixKind.LOWER_LR: "relaunch with a lower learning rate (halve it{lr}) and, if there is "
                      "none, gradient clipping",
    FixKind.SMALLER_BATCH: "relaunch with half the per-device batch size (keep the global batch "
                           "with gradient accumulation) or with activation checkpointing",
    FixKind.CANCEL: "cancel the run now (terminate PID {pid} and its workers)",
}
_PROBLEM_TYPES = frozenset({AnomalyType.NAN_INF, AnomalyType.DIVERGENCE,
                            AnomalyType.GRAD_EXPLOSION, AnomalyType.LOSS_SPIKE,
                            AnomalyType.OOM})


class Fixer:
    def __init__(self, controls: Controls, *, fix_enabled: bool, observer: Observer,
                 clock: Clock, approver: Approver | None = None, max_attempts: int = 3) -> None:
        self.controls = controls
        self.fix_enabled = fix_enabled
        self.observer = observer
        self.clock = clock
        self.approver = approver or NoApprover()
        self.max_attempts = max_attempts
        self.actions: list[Action] = []
        self.awaiting: list[str] = []  # proposals nobody could approve
        self.commands: list[str] = []  # exact commands for the user or agent
        self._applied: Counter[FixKind] = Counter()
        self._step_at_restart: int | None = None
        self._restarted = False
        self._proposed: set[FixKind] = set()
        self._said: set[tuple[FixKind, str]] = set()

    def consider(self, tracker: RunTracker, snapshot: Snapshot, hung: bool) -> bool:
        """Decide and act on this poll's situation. True when the run was restarted or
        cancelled (the loop must keep watching, or stop, accordingly)."""
        situation = self._situation(tracker, snapshot, hung)
        history = History(dict(self._applied), self._step_at_restart, self._restarted,
                          frozenset(self._proposed))
        changed = False
        proposals: list[FixDecision] = []
        for decision in decide(situation, history, fix_enabled=self.fix_enabled,
                               max_attempts=self.max_attempts):
            if decision.verdict is Verdict.APPLY:
                changed |= self._apply(decision, tracker)
            elif decision.verdict is Verdict.SKIP:
                self._record_once(decision, ActionStatus.SKIPPED, decision.reason)
                if decision.kind in (FixKind.RESTART, FixKind.RESTART_HUNG):
                    target = AnomalyType.CRASH if decision.kind is FixKind.RESTART \
                        else AnomalyType.STALLED
                    tracker.annotate(target, f"not restarted: {decision.reason}")
            else:
                proposals.append(decision)
        if proposals:
            changed |= self._propose(proposals, situation, tracker)
        return changed

    def propose_stop(self, reason: str, tracker: RunTracker) -> bool:
        """A reviewer said STOP: put cancelling the run to the user. True if cancelled."""
        if FixKind.CANCEL in self._proposed:
            return False
        decision = FixDecision(FixKind.CANCEL, Verdict.ASK, reason)
        situation = Situation(process_alive=True, checkpoint=tracker.good_checkpoint())
        return self._propose([decision], situation, tracker)

    def _situation(self, tracker: RunTracker, snapshot: Snapshot, hung: bool) -> Situation:
        process = snapshot.process
        crash = tracker.crash
        crashed = crash is not None and not crash.cancelled and process is not None \
            and not process.alive
        seen = frozenset(a.type for a in tracker.anomalies if not a.resolved)
        cause, cause_text = Cause.UNKNOWN, ""
        if crash is not None:
            exit_info = tracker.exit
            cause, cause_text = classify_cause(
                crash.traceback,
                exit_info.signal if exit_info else None,
                exit_info.code if exit_info else None,
                process.oom_killed if process else None,
                seen)
        leftover = sum(self.controls.leftovers_holding_gpu().values()) if crashed else 0.0
        return Situation(
            crashed=crashed,
            cause=cause,
            cause_text=cause_text,
            hung=hung,
            process_alive=bool(process and process.alive),
            leftover_gpu_mib=leftover,
            restart_known=self.controls.restart_known,
            step=tracker.step,
            checkpoint=tracker.good_checkpoint(),
            open_problems=frozenset(a.type for a in tracker.unresolved()
                                    if a.type in _PROBLEM_TYPES
                                    and a.severity in (Severity.BLOCKER, Severity.HIGH)),
        )

    def _apply(self, decision: FixDecision, tracker: RunTracker) -> bool:
        kind = decision.kind
        attempt = self._applied[kind] + 1
        what = {FixKind.RESTART: "restart the crashed run",
                FixKind.RESTART_HUNG: "stop the hung run and start it again",
                FixKind.FREE_GPU: "free GPU memory held by the dead run's leftover processes"}
        self.observer.notice(f"ACTION: about to {what[kind]} (attempt {attempt}/"
                             f"{self.max_attempts}): {decision.reason}")
        self._applied[kind] += 1
        try:
            if kind is FixKind.FREE_GPU:
                pids = set(self.controls.leftovers_holding_gpu())
                done = self.controls.free_leftovers(pids)
                result = f"terminated leftover PIDs {sorted(done)}"
            else:
                if kind is FixKind.RESTART_HUNG:
                    self.controls.stop_hung()
                result = self.controls.restart()
        except Exception as error:  # any failure is recorded, not raised
            self._record(kind, ActionStatus.FAILED, f"{decision.reason}; failed: {error}")
            tracker.annotate(AnomalyType.CRASH if kind is FixKind.RESTART else
                             AnomalyType.STALLED, f"{what[kind]} failed: {error}")
            return False
        self._record(kind, ActionStatus.APPLIED, f"{decision.reason}; {result}")
        self.observer.notice(f"ACTION done: {result}")
        if kind is FixKind.FREE_GPU:
            return False
        self._restarted = True
        self._step_at_restart = tracker.step
        tracker.restarted(f"{what[kind]}: {result} (attempt {attempt}/{self.max_attempts})")
        return True

    def _propose(self, decisions: list[FixDecision], situation: Situation,
                 tracker: RunTracker) -> bool:
        """Record the proposals; at a terminal, ask the one question babysit can act on
        (cancel the run so the user can apply the rest). With nobody to ask, the
        proposals wait for approval and the watch ends with exit code 3."""
        lr_key = tracker.lr_key
        lr = f", now {tracker.metrics[lr_key]:.3g}" if lr_key and lr_key in tracker.metrics else ""
        texts: dict[FixKind, str] = {}
        for decision in decisions:
            self._proposed.add(decision.kind)
            text = _PROPOSAL_TEXT[decision.kind].format(
                checkpoint=situation.checkpoint, lr=lr, pid=self.controls.control_pid)
            texts[decision.kind] = f"{text} — because {decision.reason}"
        cancel = texts.pop(FixKind.CANCEL, None)
        for kind, proposal in texts.items():
            # babysit cannot change a run's configuration; the user applies these.
            self._record(kind, ActionStatus.NEEDS_APPROVAL, proposal)
        if cancel is None:
            return False
        self.commands.append(f"kill -TERM {self.controls.control_pid}")
        answer = None
        if self.fix_enabled:
            advice = "; ".join(t.split(" — ")[0] for t in texts.values())
            answer = self.approver.ask(
                f"{decisions[0].reason}. Proposed: {advice or 'stop the run'}. Cancel the run "
                f"now (PID {self.controls.control_pid} and its workers) so you can?")
        if answer is None:
            note = " (--no-fix: not asked)" if not self.fix_enabled else ""
            self._record(FixKind.CANCEL, ActionStatus.NEEDS_APPROVAL, cancel + note)
            self.awaiting.extend([*texts.values(), cancel])
            return False
        if not answer:
            self._record(FixKind.CANCEL, ActionStatus.SKIPPED, f"{cancel}: declined by the user")
            return False
        self.observer.notice(f"ACTION: about to cancel the run (approved): terminating PID "
                             f"{self.controls.control_pid} and its workers")
        try:
            done = self.controls.cancel()
        except Exception as error:  # recorded, not raised
            self._record(FixKind.CANCEL, ActionStatus.FAILED, f"{cancel}; failed: {error}")
            return False
        self._record(FixKind.CANCEL, ActionStatus.APPLIED,
                     f"approved by the user; terminated PIDs {done}")
        tracker.cancelled_by_user("cancelled by babysit with the user's approval")
        for anomaly_type in situation.open_problems:
            tracker.annotate(anomaly_type, "run cancelled with the user's approval")
        return True

    def _record(self, kind: FixKind, status: ActionStatus, reason: str) -> None:
        self.actions.append(Action(kind.value, status, reason,
                                   self.clock.now().isoformat().replace("+00:00", "Z")))

    def _record_once(self, decision: FixDecision, status: ActionStatus, reason: str) -> None:
        """A skip repeats every poll while its reason holds; record it once."""
        key = (decision.kind, reason)
        if key not in self._said:
            self._said.add(key)
            self._record(decision.kind, status, reason)

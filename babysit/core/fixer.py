"""Carrying out the fix policy: ask `fix_policy.decide_fixes`, say what is about to
happen, act through the target's controls, and record every decision.

Nothing here decides on its own, and nothing here changes what babysit knows about the
run: `consider` returns the effects (a restart, a cancel, notes on anomalies, the
decisions it recorded) and the watch loop applies them (core.supervise). Safe fixes
run only when the policy says APPLY; changes that need the user's approval are put to
them at a terminal (only cancelling the run is something babysit can then do itself)
and otherwise recorded as needs-approval, which ends the watch with exit code 3."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from babysit.core.fix_policy import (
    Cause,
    FixDecision,
    FixHistory,
    FixVerdict,
    Situation,
    classify_cause,
    decide_fixes,
)
from babysit.model import Action, ActionStatus, AnomalyType, FixKind
from babysit.snapshot import ProcessView
from babysit.targets.base import RunControls


class Approver(Protocol):
    def ask(self, question: str) -> bool | None:
        """The user's answer; None when there is nobody to ask (no terminal, --json)."""
        ...


class NoApprover:
    def ask(self, question: str) -> bool | None:
        return None


@dataclass(frozen=True)
class FixView:
    """What the fix policy needs to know about the run this poll."""

    process: ProcessView | None
    failed: bool  # the run's current attempt ended FAILED
    traceback: str  # the closing exception line it died on ('' if none)
    exit_signal: int | None
    exit_code: int | None
    hung: bool
    step: int | None
    checkpoint: str | None
    open_types: frozenset[AnomalyType]  # every open anomaly type
    open_problems: frozenset[AnomalyType]  # open blocker/high training problems
    lr: float | None  # the learning rate now
    lr_peak: float | None  # the highest learning rate seen


@dataclass
class FixEffects:
    """What a fix did to the run, and the decisions taken, for the loop to apply."""

    restarted: str | None = None  # a note on what was started
    cancelled: str | None = None
    notes: list[tuple[AnomalyType, str]] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)  # proposals nobody could approve
    commands: list[str] = field(default_factory=list)  # exact commands for the user or agent

    @property
    def changed(self) -> bool:
        return self.restarted is not None or self.cancelled is not None


_PROPOSAL_TEXT = {
    FixKind.ROLLBACK: "roll back to {checkpoint}, the newest checkpoint saved before the problem",
    FixKind.LOWER_LR: "relaunch with a lower learning rate ({lr}) and, if there is none, "
                      "gradient clipping",
    FixKind.SMALLER_BATCH: "relaunch with half the per-device batch size (keep the global batch "
                           "with gradient accumulation) or with activation checkpointing",
    FixKind.CANCEL: "cancel the run now (terminate PID {pid} and its workers)",
}
_WHAT = {FixKind.RESTART: "restart the crashed run",
         FixKind.RESTART_HUNG: "stop the hung run and start it again",
         FixKind.FREE_GPU: "free GPU memory held by the dead run's leftover processes"}
_NOTED = {FixKind.RESTART: AnomalyType.CRASH, FixKind.RESTART_HUNG: AnomalyType.STALLED,
          FixKind.FREE_GPU: AnomalyType.CRASH}


def lower_lr_text(lr: float | None, peak: float | None) -> str:
    """Halve the peak the schedule reached, when known: halving the current, already
    decayed rate would say little about what to relaunch with."""
    if peak is not None and peak > 0:
        now = f"; now {lr:.3g} after decay" if lr is not None and lr < peak else ""
        return f"halve the peak learning rate {peak:.3g} → {peak / 2:.3g}{now}"
    if lr is not None:
        return f"halve it: {lr:.3g} → {lr / 2:.3g} (the current rate; the peak was not seen)"
    return "halve it"


class Fixer:
    def __init__(self, controls: RunControls, *, fix_enabled: bool,
                 notice: Callable[[str], None], now: Callable[[], str],
                 approver: Approver | None = None, max_attempts: int = 3) -> None:
        self.controls = controls
        self.fix_enabled = fix_enabled
        self.notice = notice
        self.now = now
        self.approver = approver or NoApprover()
        self.max_attempts = max_attempts
        self._applied: Counter[FixKind] = Counter()
        self._step_at_restart: int | None = None
        self._restarted = False
        self._proposed: set[FixKind] = set()
        self._said: set[tuple[FixKind, str]] = set()

    def consider(self, view: FixView) -> FixEffects:
        """Decide and act on this poll's situation."""
        situation = self._situation(view)
        history = FixHistory(dict(self._applied), self._step_at_restart, self._restarted,
                          frozenset(self._proposed))
        effects = FixEffects()
        proposals: list[FixDecision] = []
        for decision in decide_fixes(situation, history, fix_enabled=self.fix_enabled,
                                     max_attempts=self.max_attempts):
            if decision.verdict is FixVerdict.APPLY:
                self._apply(decision, view, effects)
                if effects.changed:
                    break
            elif decision.verdict is FixVerdict.SKIP:
                self._record_once(effects, decision, ActionStatus.SKIPPED, decision.reason)
                if decision.kind in _NOTED and not self._applied[decision.kind]:
                    # Once babysit has restarted the run, the anomaly keeps that note.
                    effects.notes.append((_NOTED[decision.kind],
                                          f"not restarted: {decision.reason}"))
            else:
                proposals.append(decision)
        if proposals and not effects.changed:
            self._propose(proposals, situation, view, effects)
        return effects

    def propose_stop(self, reason: str, view: FixView) -> FixEffects:
        """A reviewer said STOP about a live run: put cancelling it to the user."""
        effects = FixEffects()
        if FixKind.CANCEL not in self._proposed:
            decision = FixDecision(FixKind.CANCEL, FixVerdict.ASK, reason)
            situation = Situation(process_alive=True, checkpoint=view.checkpoint)
            self._propose([decision], situation, view, effects)
        return effects

    def _situation(self, view: FixView) -> Situation:
        process = view.process
        crashed = view.failed and process is not None and not process.alive
        cause, cause_text = Cause.UNKNOWN, ""
        if view.failed:
            cause, cause_text = classify_cause(
                view.traceback, view.exit_signal, view.exit_code,
                process.oom_killed if process else None, view.open_types)
        leftover = sum(self.controls.leftovers_holding_gpu().values()) if crashed else 0.0
        return Situation(
            crashed=crashed,
            cause=cause,
            cause_text=cause_text,
            hung=view.hung,
            process_alive=bool(process and process.alive),
            leftover_gpu_mib=leftover,
            restart_known=self.controls.restart_known,
            step=view.step,
            checkpoint=view.checkpoint,
            open_problems=view.open_problems,
        )

    def _apply(self, decision: FixDecision, view: FixView, effects: FixEffects) -> None:
        kind = decision.kind
        attempt = self._applied[kind] + 1
        self.notice(f"ACTION: about to {_WHAT[kind]} (attempt {attempt}/{self.max_attempts}): "
                    f"{decision.reason}")
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
            self._record(effects, kind, ActionStatus.FAILED, f"{decision.reason}; failed: {error}")
            effects.notes.append((_NOTED[kind], f"{_WHAT[kind]} failed: {error}"))
            return
        self._record(effects, kind, ActionStatus.APPLIED, f"{decision.reason}; {result}")
        self.notice(f"ACTION done: {result}")
        if kind is FixKind.FREE_GPU:
            return
        self._restarted = True
        self._step_at_restart = view.step
        effects.restarted = f"{_WHAT[kind]}: {result} (attempt {attempt}/{self.max_attempts})"

    def _propose(self, decisions: list[FixDecision], situation: Situation, view: FixView,
                 effects: FixEffects) -> None:
        """Record the proposals; at a terminal, ask the one question babysit can act on
        (cancel the run so the user can apply the rest). With nobody to ask, the
        proposals wait for approval and the watch ends with exit code 3."""
        texts: dict[FixKind, str] = {}
        for decision in decisions:
            self._proposed.add(decision.kind)
            text = _PROPOSAL_TEXT[decision.kind].format(
                checkpoint=situation.checkpoint, lr=lower_lr_text(view.lr, view.lr_peak),
                pid=self.controls.control_pid)
            texts[decision.kind] = f"{text} — because {decision.reason}"
        cancel = texts.pop(FixKind.CANCEL, None)
        for kind, proposal in texts.items():
            # babysit cannot change a run's configuration; the user applies these.
            self._record(effects, kind, ActionStatus.NEEDS_APPROVAL, proposal)
        if cancel is None:
            return
        effects.commands.append(f"kill -TERM {self.controls.control_pid}")
        answer = None
        if self.fix_enabled:
            advice = "; ".join(t.split(" — ")[0] for t in texts.values())
            answer = self.approver.ask(
                f"{decisions[0].reason}. Proposed: {advice or 'stop the run'}. Stop the run "
                f"now (PID {self.controls.control_pid} and its workers)?")
        if answer is None:
            note = " (--no-fix: not asked)" if not self.fix_enabled else ""
            self._record(effects, FixKind.CANCEL, ActionStatus.NEEDS_APPROVAL, cancel + note)
            effects.awaiting.extend([*texts.values(), cancel])
            return
        if not answer:
            self._record(effects, FixKind.CANCEL, ActionStatus.SKIPPED,
                         f"{cancel}: declined by the user")
            return
        self.notice(f"ACTION: about to cancel the run (approved): terminating PID "
                    f"{self.controls.control_pid} and its workers")
        try:
            done = self.controls.cancel()
        except Exception as error:  # recorded, not raised
            self._record(effects, FixKind.CANCEL, ActionStatus.FAILED,
                         f"{cancel}; failed: {error}")
            return
        self._record(effects, FixKind.CANCEL, ActionStatus.APPLIED,
                     f"approved by the user; terminated PIDs {done}")
        effects.cancelled = "run cancelled with the user's approval"
        effects.notes.extend((t, effects.cancelled) for t in situation.open_problems)

    def _record(self, effects: FixEffects, kind: FixKind, status: ActionStatus,
                reason: str) -> None:
        effects.actions.append(Action(kind.value, status, reason, self.now()))

    def _record_once(self, effects: FixEffects, decision: FixDecision, status: ActionStatus,
                     reason: str) -> None:
        """A skip repeats every poll while its reason holds; record it once."""
        key = (decision.kind, reason)
        if key not in self._said:
            self._said.add(key)
            self._record(effects, decision.kind, status, reason)

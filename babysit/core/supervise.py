"""Acting on the run: the fixer's turn, the reviewer (--judge), cancel proposals and the
user's approvals. Each returns `Effects` — what to say, what was decided, what the run
should take in — and the loop applies them; nothing here changes the run or the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from babysit.core.fixer import Approver, FixEffects, Fixer, FixView
from babysit.core.reviewer import AMBIGUOUS, Answer, Reviewer
from babysit.core.run_view import RunView
from babysit.model import Action, ActionStatus, Anomaly, AnomalyType, Severity, TerminalState
from babysit.rules.catalog import training_problems
from babysit.sanitise import outbound_value
from babysit.snapshot import Snapshot

# Training problems a cancel (with the user's approval) is about: the catalogue's.
_PROBLEMS = training_problems()


@dataclass
class Decisions:
    """Every decision of the watch, the fixer's and the reviewer's alike: one list of
    actions, one of proposals waiting for the user, one of commands left for them."""

    actions: list[Action] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def add(self, effects: Effects) -> None:
        self.actions.extend(effects.actions)
        self.awaiting.extend(effects.awaiting)
        self.commands.extend(effects.commands)


@dataclass(frozen=True)
class Effects:
    """What a supervision step decided, for the loop to carry out in this order: say the
    notices, note on the anomalies, take in a restart, a cancel or a reviewer's STOP
    about an ended run, and record the actions, proposals and commands."""

    notices: tuple[str, ...] = ()
    notes: tuple[tuple[AnomalyType, str], ...] = ()
    restarted: str | None = None
    cancelled: str | None = None
    reviewer_stopped: tuple[AnomalyType, str] | None = None
    actions: tuple[Action, ...] = ()
    awaiting: tuple[str, ...] = ()  # proposals waiting for the user
    commands: tuple[str, ...] = ()  # exact commands for the user or agent
    look_sooner: bool = False  # a reviewer answered WAIT
    stop_proposal: str | None = None  # a reviewer said STOP: put stopping to the user, why

    @property
    def touch_run(self) -> bool:
        """Whether applying these changes what babysit knows about the run."""
        return bool(self.notes) or self.restarted is not None or self.cancelled is not None \
            or self.reviewer_stopped is not None

    @classmethod
    def of_fix(cls, fix: FixEffects) -> Effects:
        return cls(notes=tuple(fix.notes), restarted=fix.restarted, cancelled=fix.cancelled,
                   actions=tuple(fix.actions), awaiting=tuple(fix.awaiting),
                   commands=tuple(fix.commands))


def fix_view(view: RunView, snapshot: Snapshot) -> FixView:
    """What the fix policy needs to know about the run this poll."""
    ending = view.ending
    process = snapshot.process.view
    stalled = any(a.type is AnomalyType.STALLED for a in view.unresolved)
    return FixView(
        process=process,
        failed=ending is not None and ending.state is TerminalState.FAILED,
        traceback=ending.traceback if ending is not None else "",
        exit_signal=ending.exit.signal if ending is not None and ending.exit else None,
        exit_code=ending.exit.code if ending is not None and ending.exit else None,
        # Never during a save: writing a checkpoint (to NFS, say) looks like a hang.
        hung=(stalled and snapshot.process.alive is True and view.cpu_idle_since_progress
              and snapshot.log.phase != "save"),
        step=view.step,
        checkpoint=view.good_checkpoint,
        open_types=frozenset(a.type for a in view.unresolved),
        open_problems=frozenset(a.type for a in view.unresolved if a.type in _PROBLEMS
                                and a.severity in (Severity.BLOCKER, Severity.HIGH)),
        lr=view.metrics.get(view.lr_key) if view.lr_key else None,
        lr_peak=view.lr_peak,
    )


class ShowFirst:
    """An approver that first has the loop show what the question is about (the poll
    and its anomalies), so the question comes after the lines that explain it."""

    def __init__(self, inner: Approver) -> None:
        self.inner = inner
        self.before: Callable[[], None] | None = None

    def ask(self, question: str) -> bool | None:
        if self.before is not None:
            self.before()
        return self.inner.ask(question)


class Supervisor:
    def __init__(self, fixer: Fixer | None, reviewer: Reviewer | None, label: str,
                 now: Callable[[], str]) -> None:
        self.fixer = fixer
        self.reviewer = reviewer
        self.label = label
        self.now = now
        self._approver: ShowFirst | None = None
        if fixer is not None:
            self._approver = fixer.approver = ShowFirst(fixer.approver)

    def consider(self, view: RunView, snapshot: Snapshot, awaiting: Sequence[str],
                 before_asking: Callable[[], None]) -> Effects:
        """This poll's turn: the fixer's decisions, or without one, a cancel proposal.
        `before_asking` shows the poll when the user is asked about it."""
        if self.fixer is None:
            return self.propose_cancel(view, awaiting)
        assert self._approver is not None
        self._approver.before = before_asking
        try:
            return Effects.of_fix(self.fixer.consider(fix_view(view, snapshot)))
        finally:
            self._approver.before = None

    def propose_cancel(self, view: RunView, awaiting: Sequence[str]) -> Effects:
        """A run babysit cannot act on (a cloud job) that keeps going with a blocker open:
        cancelling it is the user's call; babysit names the exact command."""
        command = view.cancel_command
        if command is None or not view.running or awaiting:
            return Effects()
        blocker = next(iter(view.blockers), None)
        if blocker is None:
            return Effects()
        proposal = (f"cancel the run ({command}) — because {blocker.type.value}: "
                    f"{blocker.description}")
        return Effects(actions=(Action("cancel-run", ActionStatus.NEEDS_APPROVAL, proposal,
                                       self.now()),), awaiting=(proposal,))

    def review(self, fresh: Sequence[Anomaly], view: RunView) -> Effects:
        """Ask the reviewer (--judge) about the first ambiguous anomaly of this poll."""
        ambiguous = [a for a in fresh if a.type in AMBIGUOUS]
        if self.reviewer is None or not ambiguous:
            return Effects()
        concern = ambiguous[0]
        about = concern.type.value
        packet = {
            "run": self.label,
            "url": view.evidence_url,
            "step": view.step,
            "target_steps": view.target_steps,
            "run_state": view.state.value,
            "concern": f"{about}: {concern.description}",
            "severity": concern.severity.value,
            "last_losses": [round(x, 6) for x in view.recent_losses],
            "last_evals": view.recent_evals,
            "answer": "Reply with exactly one word: STOP (clearly problematic, stop the run), "
                      "CONTINUE (fine, check again next interval) or WAIT (not enough data, "
                      "check again sooner).",
        }
        judgment = self.reviewer.review(outbound_value(packet))
        at = self.now()

        def asked(detail: str, status: ActionStatus = ActionStatus.APPLIED) -> Action:
            return Action("ask-reviewer", status, f"about {about}: {detail}", at)

        if judgment.answer is None:
            return Effects(notices=(f"reviewer ignored: {judgment.detail}",),
                           actions=(asked(judgment.detail, ActionStatus.FAILED),))
        word = judgment.answer.value
        said = f"reviewer said {word}"
        notices = (f"reviewer says {word} about {about}",)
        if judgment.answer is not Answer.STOP:
            return Effects(notices=notices, notes=((concern.type, said),),
                           actions=(asked(word),), look_sooner=judgment.answer is Answer.WAIT)
        if not view.running:
            # Nothing left to stop: the concern stands in the verdict instead.
            return Effects(notices=notices,
                           reviewer_stopped=(concern.type, f"{said} after the run had ended"),
                           actions=(asked("STOP (the run had already ended: nothing to "
                                          "stop)"),))
        reason = f"the reviewer said STOP about {about} at step {concern.step}: " \
                 f"{concern.description}"
        if self.fixer is not None:  # the fixer puts it to the user: see propose_stop
            return Effects(notices=notices, notes=((concern.type, said),),
                           actions=(asked("STOP"),), stop_proposal=reason)
        proposal = f"stop the run — because {reason}"
        return Effects(notices=notices, notes=((concern.type, said),),
                       actions=(asked("STOP"), Action("cancel-run", ActionStatus.NEEDS_APPROVAL,
                                                      proposal, at)),
                       awaiting=(proposal,))

    def propose_stop(self, reason: str, view: RunView, snapshot: Snapshot) -> Effects:
        """A reviewer said STOP about a live run: the fixer puts cancelling it to the user."""
        if self.fixer is None:
            return Effects()
        return Effects.of_fix(self.fixer.propose_stop(reason, fix_view(view, snapshot)))

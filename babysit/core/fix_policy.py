"""The fix policy, as one pure function: given the situation and what was already
tried, which fixes to apply, which to skip (and why), and which to put to the user.

The rules (references/common-issues.md, "Fix policy"):
- safe fixes, automatic unless --no-fix: restart a crashed process, restart a hung one,
  free GPU memory held by the dead run's own leftover processes;
- at most `max_attempts` of each kind per session;
- a restart needs an exactly known command, a cause that is not deterministic (an
  exception in user code, an OOM or a config error would only happen again), and
  progress since the previous restart (no crash loops);
- changing hyperparameters, rolling back and cancelling are only ever proposed.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import dataclass, field

from babysit import lazy_re
from babysit._compat import StrEnum
from babysit.model import AnomalyType, FixKind
from babysit.rules.catalog import entry

NEEDS_APPROVAL = frozenset({FixKind.ROLLBACK, FixKind.LOWER_LR, FixKind.SMALLER_BATCH,
                            FixKind.CANCEL})


class Cause(StrEnum):
    TRANSIENT = "transient"  # would likely not happen again: worth a restart
    DETERMINISTIC = "deterministic"  # will happen again: report, don't restart
    INTENTIONAL = "intentional"  # someone stopped it: restarting would overrule them
    HARDWARE = "hardware"  # the device failed: resume elsewhere, never on the same one
    UNKNOWN = "unknown"  # no evidence either way: don't restart


class FixVerdict(StrEnum):
    APPLY = "apply"
    SKIP = "skip"
    ASK = "ask"


@dataclass(frozen=True)
class Situation:
    crashed: bool = False  # the run's process ended unsuccessfully
    cause: Cause = Cause.UNKNOWN
    cause_text: str = ""
    hung: bool = False  # alive, but neither the log nor its CPU time moves
    process_alive: bool = False
    leftover_gpu_mib: float = 0.0  # held by the dead run's own leftover processes
    restart_known: bool = False
    step: int | None = None
    checkpoint: str | None = None
    open_problems: frozenset[AnomalyType] = frozenset()


@dataclass(frozen=True)
class FixHistory:
    applied: Mapping[FixKind, int] = field(default_factory=dict)
    step_at_last_restart: int | None = None
    restarted: bool = False  # any restart so far
    proposed: frozenset[FixKind] = frozenset()


@dataclass(frozen=True)
class FixDecision:
    kind: FixKind
    verdict: FixVerdict
    reason: str


def decide_fixes(situation: Situation, history: FixHistory, *, fix_enabled: bool,
           max_attempts: int = 3) -> list[FixDecision]:
    """Every fix the situation calls for, each with its verdict and reason."""
    decisions: list[FixDecision] = []
    if situation.crashed:
        # Leftovers first: a restarted run needs the memory they hold.
        if situation.leftover_gpu_mib > 0:
            decisions.append(_bounded(FixKind.FREE_GPU, history, fix_enabled, max_attempts,
                                      f"the dead run's own leftover processes still hold "
                                      f"{situation.leftover_gpu_mib:.0f} MiB of GPU memory"))
        decisions.append(_restart(FixKind.RESTART, situation, history, fix_enabled,
                                  max_attempts))
    elif situation.hung and situation.process_alive:
        decisions.append(_restart(FixKind.RESTART_HUNG, situation, history, fix_enabled,
                                  max_attempts))
    decisions.extend(_proposals(situation, history))
    return decisions


def _bounded(kind: FixKind, history: FixHistory, fix_enabled: bool, max_attempts: int,
             why: str) -> FixDecision:
    if not fix_enabled:
        return FixDecision(kind, FixVerdict.SKIP, f"--no-fix: observing only ({why})")
    done = history.applied.get(kind, 0)
    if done >= max_attempts:
        return FixDecision(kind, FixVerdict.SKIP, f"already done {done} times this session "
                                               f"(limit {max_attempts})")
    return FixDecision(kind, FixVerdict.APPLY, why)


def _restart(kind: FixKind, situation: Situation, history: FixHistory, fix_enabled: bool,
             max_attempts: int) -> FixDecision:
    what = "crashed" if kind is FixKind.RESTART else "hung"
    if not fix_enabled:
        return FixDecision(kind, FixVerdict.SKIP, f"--no-fix: observing only (the run {what})")
    # (the cause first: a run that would not be restarted whatever babysit knew says why,
    # not that its command could not be captured — which depends on whether babysit
    # caught the process alive, a race with a run that dies at once)
    if kind is FixKind.RESTART and situation.cause is Cause.DETERMINISTIC:
        return FixDecision(kind, FixVerdict.SKIP,
                           f"{situation.cause_text}: it would only happen again")
    if kind is FixKind.RESTART and situation.cause is Cause.HARDWARE:
        return FixDecision(kind, FixVerdict.SKIP,
                           f"{situation.cause_text}: drain this GPU or node and resume "
                           f"elsewhere; a restart on the same device would fail again")
    if kind is FixKind.RESTART and situation.cause is Cause.INTENTIONAL:
        return FixDecision(kind, FixVerdict.SKIP,
                           f"{situation.cause_text}: restarting would overrule whoever stopped it")
    if kind is FixKind.RESTART and situation.cause is Cause.UNKNOWN:
        return FixDecision(kind, FixVerdict.SKIP,
                           f"the cause is not known to be transient ({situation.cause_text})")
    if not situation.restart_known:
        return FixDecision(kind, FixVerdict.SKIP,
                           "the restart command is not known exactly (give --restart-cmd, or "
                           "start babysit while the run is alive so it can capture it)")
    if history.restarted and (situation.step is None or history.step_at_last_restart is None
                              or situation.step <= history.step_at_last_restart):
        return FixDecision(kind, FixVerdict.SKIP,
                           "no training progress since the previous restart: not restarting "
                           "into a crash loop")
    why = (f"transient cause: {situation.cause_text}" if kind is FixKind.RESTART
           else "the run is hung: no log output and no CPU time for the stall period")
    return _bounded(kind, history, True, max_attempts, why)


def _proposals(situation: Situation, history: FixHistory) -> list[FixDecision]:
    """Changes only the user may approve, each proposed once, while the run still
    lives (for a run that has ended, the findings carry the same advice). Which problem
    calls for which change is the catalogue's: only problems that will not go away on
    their own (a NaN, a loss that keeps rising) have proposals."""
    out: list[FixDecision] = []
    if not situation.process_alive:
        return out
    for problem in [t for t in AnomalyType if t in situation.open_problems]:
        known = entry(problem)
        for kind in known.proposals:
            if kind in history.proposed or any(d.kind is kind for d in out):
                continue
            if kind is FixKind.ROLLBACK and not situation.checkpoint:
                continue
            out.append(FixDecision(kind, FixVerdict.ASK, known.proposal_reason))
    return out


# --- what caused a crash --------------------------------------------------------------

_TRANSIENT_TEXT = lazy_re.compile(
    r"NCCL|nccl|Gloo|gloo|DistBackendError|DistNetworkError|DistStoreError|"
    r"ConnectionResetError|ConnectionRefusedError|ConnectionAbortedError|BrokenPipeError|"
    r"TimeoutError|[Tt]imed out|Connection (?:reset|refused|closed|aborted)|"
    r"unspecified launch failure|[Pp]reempt"
)
# The device itself failed: restarting on it would fail again (or corrupt results).
_HARDWARE_TEXT = lazy_re.compile(r"uncorrectable ECC|double bit|fallen off the bus|Xid|NVLink")


def classify_cause(evidence: str, exit_signal: int | None, exit_code: int | None,
                   oom_killed: bool | None, seen: frozenset[AnomalyType]) -> tuple[Cause, str]:
    """Why the run died, as far as the evidence goes, and whether that is worth a
    restart. `evidence` is the closing line of the last traceback ('' if none)."""
    if AnomalyType.HARDWARE_FAULT in seen or (evidence and _HARDWARE_TEXT.search(evidence)):
        return Cause.HARDWARE, ("a hardware fault (a GPU's ECC, Xid, bus or NVLink error, or "
                                "its node failed)")
    if AnomalyType.OOM in seen or oom_killed:
        return Cause.DETERMINISTIC, "it ran out of memory"
    if exit_signal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP) and not evidence:
        return Cause.INTENTIONAL, f"it was stopped with {signal.Signals(exit_signal).name}"
    if evidence and "SignalException" in evidence.partition(":")[0]:
        # torchelastic's launcher received a signal (a scheduler, a kill): from outside.
        return Cause.INTENTIONAL, f"its launcher was stopped from outside ({evidence})"
    if evidence and _TRANSIENT_TEXT.search(evidence):
        return Cause.TRANSIENT, evidence
    if AnomalyType.NCCL in seen:
        return Cause.TRANSIENT, "a collective communication (NCCL/Gloo) failure"
    if exit_signal in (signal.SIGSEGV, signal.SIGBUS) and not evidence:
        return Cause.TRANSIENT, (f"killed by {signal.Signals(exit_signal).name} without a "
                                 f"Python traceback (usually a driver or shared-memory fault)")
    if exit_signal == signal.SIGKILL and not evidence:
        if oom_killed is False:
            return Cause.UNKNOWN, "killed with SIGKILL by something other than the OOM killer"
        return Cause.DETERMINISTIC, "killed with SIGKILL and no traceback: most likely the " \
                                    "host's OOM killer"
    if AnomalyType.CUDA_ERROR in seen:
        return Cause.DETERMINISTIC, "a CUDA error in the training code"
    if evidence:
        return Cause.DETERMINISTIC, f"a Python exception in the training code ({evidence})"
    if exit_code is not None or exit_signal is not None:
        return Cause.UNKNOWN, "it exited without a traceback"
    return Cause.UNKNOWN, "the process is gone and its exit status is unknown"

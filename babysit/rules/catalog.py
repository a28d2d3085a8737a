"""What each anomaly type means: one entry per type, in one table.

Everything the rest of babysit needs to know about a type lives here — how serious
it is, what to do about it, whether the run going on shows it was survived, whether a
restart by babysit deals with it, whether a reviewer is asked about it, which changes
only the user may approve, and how serious it is if it is still open when the run
ends. A test checks that every `AnomalyType` has an entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from babysit.model import AnomalyType, FixKind, Severity


@dataclass(frozen=True)
class AnomalyEntry:
    type: AnomalyType
    severity: Severity
    fix: str
    # A later step advance shows the run survived it (an OOM a retry got past...).
    recovers_on_progress: bool = False
    # A restart by babysit deals with it, once the new attempt makes progress.
    cleared_by_restart: bool = False
    # Ambiguous enough that a reviewer (--judge) is asked before anyone acts.
    ask_reviewer: bool = False
    # Changes only the user may approve, proposed while the run lives, and why.
    proposals: tuple[FixKind, ...] = ()
    proposal_reason: str = ""
    # How serious it is when still open as the run ends (None: as raised).
    severity_at_end: Severity | None = None
    # The fix names the newest good checkpoint to go back to.
    rollback: bool = False
    # A problem with the training itself: while one is open and serious, cancelling the
    # run (with the user's approval) is about it, and the cancel is noted on it.
    training_problem: bool = False


_ENTRIES = (
    AnomalyEntry(
        AnomalyType.NAN_INF, Severity.BLOCKER,
        "Roll back to the last checkpoint before the first non-finite value and resume with a "
        "lower learning rate (or bf16 instead of fp16, gradient clipping); inspect the batch "
        "at that step.",
        proposals=(FixKind.ROLLBACK, FixKind.LOWER_LR, FixKind.CANCEL),
        proposal_reason="non-finite values make every further step worthless",
        rollback=True, training_problem=True),
    AnomalyEntry(
        AnomalyType.OOM, Severity.BLOCKER,
        "Reduce the per-device batch size (keep the global batch with gradient accumulation), "
        "enable gradient checkpointing or mixed precision; for a host OOM kill, lower "
        "data-loader workers or host-side buffers.",
        recovers_on_progress=True, training_problem=True),
    AnomalyEntry(
        AnomalyType.DIVERGENCE, Severity.HIGH,
        "Lower the learning rate or lengthen warm-up, enable gradient clipping, and resume from "
        "a checkpoint before the rise.",
        proposals=(FixKind.ROLLBACK, FixKind.LOWER_LR, FixKind.CANCEL),
        proposal_reason="the loss keeps rising",
        severity_at_end=Severity.BLOCKER, rollback=True, training_problem=True),
    AnomalyEntry(
        AnomalyType.STALLED, Severity.HIGH,
        "Check that the process is alive and not blocked (data loading, a collective waiting "
        "on a dead rank, a full disk); py-spy dump helps.",
        recovers_on_progress=True, cleared_by_restart=True),
    AnomalyEntry(
        AnomalyType.CRASH, Severity.BLOCKER,
        "Read the end of the log for the cause; fix it before restarting, since a Python "
        "exception in the training code will happen again.",
        recovers_on_progress=True, cleared_by_restart=True),
    AnomalyEntry(
        AnomalyType.CHECKPOINT_FAILURE, Severity.HIGH,
        "Free disk space (or quota) or point checkpoints at a bigger volume, and check that "
        "the newest checkpoint named here loads: a save that failed half-way leaves a "
        "truncated file behind."),
    AnomalyEntry(
        AnomalyType.SLOW_THROUGHPUT, Severity.MEDIUM,
        "Look for data-loader starvation, thermal or power throttling, a noisy neighbour, or "
        "extra work (evaluation, logging) per step.",
        ask_reviewer=True),
    AnomalyEntry(
        AnomalyType.LOSS_SPIKE, Severity.HIGH,
        "Check the batch at that step for bad data; if spikes repeat, lower the learning rate "
        "or clip gradients.",
        ask_reviewer=True, rollback=True, training_problem=True),
    AnomalyEntry(
        AnomalyType.GRAD_EXPLOSION, Severity.HIGH,
        "Enable or tighten gradient clipping and lower the learning rate; look for bad samples "
        "at that step. A norm that collapsed to zero means nothing is learned: check the "
        "learning rate, frozen parameters and the loss scale.",
        rollback=True, training_problem=True),
    AnomalyEntry(
        AnomalyType.CUDA_ERROR, Severity.BLOCKER,
        "Re-run with CUDA_LAUNCH_BLOCKING=1 to locate the failing kernel; device-side asserts "
        "are usually out-of-range labels or indices.",
        recovers_on_progress=True, cleared_by_restart=True),
    AnomalyEntry(
        AnomalyType.NCCL, Severity.BLOCKER,
        "Check every rank's log for the first failure (one dead or slow rank times the others "
        "out); NCCL_DEBUG=INFO shows the failing link.",
        recovers_on_progress=True, cleared_by_restart=True),
    AnomalyEntry(
        AnomalyType.EVAL_DEGRADATION, Severity.MEDIUM,
        "Likely overfitting or an eval/train mismatch: keep the checkpoint with the best eval "
        "score, add regularisation or stop early.",
        ask_reviewer=True, severity_at_end=Severity.HIGH),
    AnomalyEntry(
        AnomalyType.LR_SCHEDULE, Severity.MEDIUM,
        "Check the scheduler and its warm-up/decay lengths against the planned steps (a "
        "warm-up longer than the run, a scheduler stepped per epoch instead of per batch, a "
        "restart that reset it).",
        ask_reviewer=True),
    AnomalyEntry(
        AnomalyType.GPU_IDLE, Severity.MEDIUM,
        "The run holds its GPUs without using them: look for a data-loading or CPU-side "
        "bottleneck, a rank waiting on another, or a run stuck in a barrier."),
    AnomalyEntry(
        AnomalyType.PIPELINE_FAILURE, Severity.BLOCKER,
        "Open the failed task's logs (next commands) and fix its cause before re-running the "
        "pipeline; cached tasks will not run again."),
    AnomalyEntry(
        AnomalyType.TASK_FAILURE, Severity.HIGH,
        "Read the failed task's error and the end of its logs; a task retried by the pipeline "
        "may still succeed."),
    AnomalyEntry(
        AnomalyType.JOB_FAILURE, Severity.BLOCKER,
        "Read the job's error and the end of its logs (next commands); fix the cause before "
        "resubmitting (a job the scheduler requeued runs again by itself: check that it "
        "resumes from its last checkpoint)."),
    AnomalyEntry(
        AnomalyType.LOSS_SCALE, Severity.BLOCKER,
        "fp16 dynamic loss scaling has collapsed: the loss or its gradients overflow on every "
        "step. Resume from the last good checkpoint in bf16 (or fp32), with a lower learning "
        "rate and gradient clipping; look for bad samples where the overflows began.",
        recovers_on_progress=False, rollback=True,
        proposals=(FixKind.ROLLBACK, FixKind.CANCEL),
        proposal_reason="with the loss scale at its floor no step changes the weights",
        training_problem=True),
    AnomalyEntry(
        AnomalyType.HARDWARE_FAULT, Severity.BLOCKER,
        "A hardware fault: drain this GPU or node and resume elsewhere from the last good "
        "checkpoint; a restart on the same device fails again or silently corrupts the "
        "results. Report the device to whoever runs the machines (nvidia-smi -q -d ECC, "
        "the Xid lines in dmesg).",
        rollback=True),
    AnomalyEntry(
        AnomalyType.NOT_LEARNING, Severity.MEDIUM,
        "Check that the optimizer steps and sees the parameters (a learning rate of 0, a "
        "scheduler stuck in warm-up, frozen or detached weights, a loss scale at its "
        "floor), and that the data and labels change from batch to batch; compare with a "
        "run known to learn.",
        ask_reviewer=True, severity_at_end=Severity.HIGH),
    AnomalyEntry(
        AnomalyType.USER_ALERT, Severity.MEDIUM,
        "One of your own alerts ([[alerts]] in babysit.toml) is broken: do what you meant "
        "to when you wrote it; its severity is the one you gave it."),
    AnomalyEntry(
        AnomalyType.DEADLINE, Severity.HIGH,
        "At its present rate the run reaches its time limit before its last step: have the "
        "limit raised (the command is named; usually an administrator's), or make sure a "
        "checkpoint is saved before the limit and resume from it in a new job.",
        severity_at_end=Severity.HIGH),
    AnomalyEntry(
        AnomalyType.STRAGGLER, Severity.MEDIUM,
        "One rank is falling behind the others, and in synchronous training every rank "
        "waits for it: look at that rank's host (GPU clocks and temperature, a throttled or "
        "faulty GPU, other jobs on the node, its data loading or its network link) and "
        "move the rank off it if it stays slow.",
        recovers_on_progress=False),
    AnomalyEntry(
        AnomalyType.IMPOSSIBLE_METRIC, Severity.MEDIUM,
        "The metric is computed wrong (a denominator that is not the number of samples "
        "scored — a batch count, the last batch's size —, values summed over batches or "
        "ranks instead of averaged, a percentage taken twice): fix the computation and "
        "score the saved model again before trusting this figure or any choice made on it "
        "(the best checkpoint, an early stop).",
        severity_at_end=Severity.HIGH),
    AnomalyEntry(
        AnomalyType.CONNECTIVITY, Severity.MEDIUM,
        "Check the network path or credentials to the target; this says nothing about the run "
        "itself."),
)

CATALOG: Mapping[AnomalyType, AnomalyEntry] = {entry.type: entry for entry in _ENTRIES}


def entry(kind: AnomalyType) -> AnomalyEntry:
    """The catalogue entry of an anomaly type (every type has one)."""
    return CATALOG[kind]


def reviewed_types() -> frozenset[AnomalyType]:
    """Types a reviewer (--judge) is asked about."""
    return frozenset(e.type for e in _ENTRIES if e.ask_reviewer)


def training_problems() -> frozenset[AnomalyType]:
    """Types that are problems with the training itself (a cancel is about them)."""
    return frozenset(e.type for e in _ENTRIES if e.training_problem)

"""Run: each rule raised once when it starts, and resolved when the run recovers."""

from __future__ import annotations

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import AnomalyType, Record, Severity
from babysit.parsing.parser import LogParser


def track(*lines: str, rules: RuleSettings | None = None) -> Run:
    run = Run(rules or RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(list(lines)))
    return run


def kinds(run: Run) -> list[tuple[AnomalyType, int | None, bool]]:
    return [(a.type, a.step, a.resolved) for a in run.ledger.anomalies]


def steady(n: int, start: int = 1, loss: float = 2.0, extra: str = "") -> list[str]:
    """A healthy stretch: a loss falling slowly, with a little noise (a loss that does
    not fall at all is not learning, an anomaly of its own)."""
    return [f"step={s} loss={loss * 0.99 ** s + 0.01 * (s % 3):.4f} {extra}".strip()
            for s in range(start, start + n)]


def test_hf_style_nan_hidden_as_zero_loss_is_caught_through_grad_norm():
    tracker = track(" 50%|#####     | 20/40 [00:01<00:01, 9.9it/s]",
                    "{'loss': '0', 'grad_norm': 'nan', 'learning_rate': '3e+06', 'epoch': '0.3'}")
    assert kinds(tracker) == [(AnomalyType.NAN_INF, 20, False)]
    assert tracker.ledger.anomalies[0].severity is Severity.BLOCKER


def test_nan_is_reported_once_however_long_it_lasts():
    tracker = track(*steady(5), *[f"step={s} loss=nan" for s in range(6, 60)])
    assert kinds(tracker) == [(AnomalyType.NAN_INF, 6, False)]


def test_cuda_error_then_progress_counts_as_survived():
    tracker = track(*steady(3), "RuntimeError: CUDA error: an illegal memory access was "
                    "encountered", *steady(2, start=4))
    assert kinds(tracker) == [(AnomalyType.CUDA_ERROR, 3, True)]


def test_checkpoint_failure_resolves_when_a_later_save_works():
    tracker = track(*steady(3), "OSError: [Errno 28] No space left on device",
                    "Error saving checkpoint to /ckpt/step-3", *steady(3, start=4),
                    "Saving checkpoint to /ckpt/step-6")
    assert kinds(tracker) == [(AnomalyType.CHECKPOINT_FAILURE, 3, True)]
    assert tracker.ledger.anomalies[0].severity is Severity.HIGH  # a failed save is serious
    assert tracker.checkpoints.good_path() == "/ckpt/step-6"


def test_grad_explosion_is_raised_and_then_resolved():
    tracker = track(*steady(25, extra="grad_norm=0.9"), "step=26 loss=2.0 grad_norm=1500",
                    "step=27 loss=2.0 grad_norm=0.9")
    assert kinds(tracker) == [(AnomalyType.GRAD_EXPLOSION, 26, True)]


def test_divergence_resolves_when_the_loss_falls_again():
    rising = [f"step={s} loss={2.0 + 0.1 * s:.2f}" for s in range(1, 8)]
    tracker = track(*rising, "step=8 loss=2.9", "step=9 loss=1.5")
    # A short log rising at each of its last five points (2.2 → 2.6) is diverging at
    # step 6 already (the short-climb test of loss_rules).
    assert kinds(tracker) == [(AnomalyType.DIVERGENCE, 6, True)]


def test_eval_degradation_needs_train_loss_to_improve_meanwhile():
    lines = []
    for i, (train, val) in enumerate([(2.0, 1.0), (1.8, 1.1), (1.6, 1.2)], start=1):
        lines += [f"step={i * 10} loss={train}", f"step={i * 10} eval_loss={val}"]
    assert kinds(track(*lines)) == [(AnomalyType.EVAL_DEGRADATION, 30, False)]


def test_slow_throughput_against_the_first_readings():
    fast = [f"step={s} loss=2.0 samples/s=100" for s in range(1, 8)]
    slow = [f"step={s} loss=2.0 samples/s=30" for s in range(8, 14)]
    assert kinds(track(*fast, *slow)) == [(AnomalyType.SLOW_THROUGHPUT, 10, False)]


def test_sparse_history_records_do_not_feed_windowed_rules():
    tracker = Run(RuleSettings(), None, 0.0)
    tracker.absorb([Record(step=s, metrics={"loss": 2.0}, sparse=True) for s in range(1, 60)])
    tracker.absorb([Record(step=60, metrics={"loss": 50.0})])
    assert tracker.ledger.anomalies == ()


def test_restart_from_checkpoint_is_seen_as_the_step_going_back():
    tracker = track(*steady(10), "Killed", *steady(5, start=6))
    assert tracker.series.restarts_seen == 1
    assert kinds(tracker) == [(AnomalyType.OOM, 10, True)]


def test_lr_schedule_anomaly_from_a_log():
    lines = [f"step={s} loss=2.0 lr=0.001" for s in range(1, 4)]
    lines += [f"step={s} loss=2.0 lr=0.0" for s in range(4, 12)]
    assert kinds(track(*lines)) == [(AnomalyType.LR_SCHEDULE, 8, False)]


def test_a_learning_rate_of_zero_from_the_start_is_not_learning():
    lines = [f"step={s} loss=2.0 lr=0.0" for s in range(1, 9)]
    assert kinds(track(*lines)) == [(AnomalyType.NOT_LEARNING, 6, False)]


def test_vanishing_gradients_from_a_log():
    lines = [f"step={s} loss=2.0 grad_norm=1.0" for s in range(1, 11)]
    lines += [f"step={s} loss=2.0 grad_norm=0.0" for s in range(11, 17)]
    [(kind, step, resolved)] = kinds(track(*lines))
    # Two points a million times below where it started: collapsed, no need to wait.
    assert (kind, step, resolved) == (AnomalyType.GRAD_EXPLOSION, 12, False)


def test_an_ending_read_from_the_log_is_said_to_be_inferred():
    from babysit.core.outcome import WatchOutcome
    from babysit.core.verdict import decide
    from babysit.model import ExitInfo

    run = track(*steady(5), "Training finished")
    ending = run.lifecycle.on_process_gone(ExitInfo(None, None, "unknown"), None, run.step,
                                           None)
    assert ending is not None and ending.anomaly is None and ending.inferred
    outcome = WatchOutcome(target="42", target_type="pid", state=run.state, ending=ending,
                           step=run.step, saw_training=True)
    verdict = decide(outcome, run_id="r")
    assert verdict.decision.value == "GO"
    assert verdict.summary.count("not visible") == 1


def test_steps_from_zero_is_said_by_whoever_delivered_the_latest_steps():
    from babysit.core.run import PollContext
    from babysit.snapshot import LogSnapshot, Snapshot

    run = Run(RuleSettings(), 20, 0.0)

    def poll(now: float, *steps: int, from_zero: bool) -> None:
        records = tuple(Record(step=s, metrics={"loss": 2.0}, fmt="wandb") for s in steps)
        run.observe(Snapshot(LogSnapshot(records=records, steps_from_zero=from_zero)),
                    PollContext(now=now, baseline=False, final=False, interval=1.0,
                                log_only=False))

    assert run.steps_from_zero is False
    poll(1.0, 0, 1, 2, from_zero=True)
    assert (run.step, run.steps_from_zero) == (2, True)  # steps kept as the tracker's own
    poll(2.0, from_zero=False)  # nothing new: no say
    assert run.steps_from_zero is True
    poll(3.0, 4, 5, from_zero=False)  # a fallback log's steps, already counts
    assert (run.step, run.steps_from_zero) == (5, False)

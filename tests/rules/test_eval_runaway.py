"""An evaluation loss running away while the training loss holds (issue 24, item 1). The
shape is sealed-8's pytorch_pose_hourglass_progress_bar_val_loss_0_3_to_4_3_val_acc_zero
_epoch_22: a training bar then a validation bar per epoch, `Processing |####| (493/493)
Data: 0.000080s | Batch: 0.135s | Total: 0:01:06 | ETA: 0:00:01 | Loss: 1.0547 | Acc:
0.0015`, the validation loss 0.31 → 1.05 → 1.78 → 4.35 beside a training loss of 0.0035.
A resume that lands on a worse plateau (sealed-4's deprem MDN: val 2.45, then 6.88,
9.48, 10.15, 8.42 after a gap of two million steps) is a blocker only while it climbs."""

from __future__ import annotations

from pathlib import Path

from babysit.model import AnomalyType, Severity
from babysit.rules.runaway import running_away
from tests.rules.test_loss_rules import run_of, verdict_of

_TRAIN = "Processing |################################| (3708/3708) Data: 0.000220s | " \
         "Batch: 0.276s | Total: 0:20:24 | ETA: 0:00:01 | Loss: {loss} | Acc:  0.7525"
_VAL = "Processing |################################| (493/493) Data: 0.000082s | " \
       "Batch: 0.136s | Total: 0:01:06 | ETA: 0:00:01 | Loss: {loss} | Acc:  0.0000"


def pose(val_losses: list[float]) -> list[str]:
    lines: list[str] = []
    for epoch, val in enumerate(val_losses, 18):
        lines += [_TRAIN.format(loss=0.0035), _VAL.format(loss=val),
                  f"Epoch: {epoch + 1} | LR: 0.00025000"]
    return lines


def degradations(lines: list[str]) -> list[tuple[Severity, str]]:
    run = run_of(lines)
    return [(a.severity, a.description) for a in run.ledger.anomalies
            if a.type is AnomalyType.EVAL_DEGRADATION and not a.resolved]


def test_a_validation_loss_running_away_is_no_go_while_the_run_goes_on(tmp_path: Path):
    data = verdict_of(tmp_path, pose([0.3065, 1.0547, 1.7841, 4.3475]))
    assert data["terminal_state"] == "RUNNING"
    assert data["decision"] == "NO-GO", data["summary"]
    found = [a for a in data["anomalies_detected"] if a["severity"] == "blocker"]
    assert found and "rising at each" in found[0]["description"]


def test_a_validation_loss_that_levels_off_goes_back_to_medium():
    # (its first evaluation is not its best: one never better than its first and many
    # times it at the end is a blocker of its own, `_judge_multiplied`)
    found = degradations(pose([0.5, 0.3065, 1.0, 1.6, 2.2, 2.1, 2.15]))
    assert found and all(severity is not Severity.BLOCKER for severity, _ in found)
    # levelled off at five times the best it held or more, it stays a blocker: the model
    # ends several times worse on unseen data (`_judge_multiplied`)
    found = degradations(pose([0.5, 0.3065, 1.0547, 1.7841, 4.3475, 4.1, 4.2]))
    assert any(severity is Severity.BLOCKER for severity, _ in found)


def test_a_validation_loss_rising_less_than_threefold_is_no_blocker():
    found = degradations(pose([0.3065, 0.45, 0.6, 0.8]))
    assert all(severity is not Severity.BLOCKER for severity, _ in found)


def test_running_away_needs_every_point_up_and_over_three_times():
    assert running_away([0.31, 1.05, 1.78, 4.35], 0.31, 3) is not None
    assert running_away([0.31, 1.05, 0.9, 4.35], 0.31, 3) is None  # a fall
    assert running_away([0.31, 0.8, 1.78, 4.35], 0.31, 3) is None  # 0.8 < 3 × 0.31
    assert running_away([1.05, 1.78], 0.31, 3) is None  # too few
    assert running_away([1.0, 2.0, 3.0, 4.0], 0.0, 3) is None  # no positive best

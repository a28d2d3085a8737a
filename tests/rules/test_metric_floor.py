"""A quality metric stuck at its floor is a run that is not learning (issue 24): a dice
of 7e-05 on every evaluation while the loss falls by four orders of magnitude, an mIoU
of 0.000 epoch after epoch. A metric that leaves the floor resolves it; a detector's mAP
at 0 for its first few evaluations says nothing yet."""

from __future__ import annotations

from babysit.model import AnomalyType
from babysit.rules.metric_floor import at_floor, quality_keys
from tests.rules.test_loss_rules import run_of


def _floor_keys(lines: list[str]) -> set[str | None]:
    return {a.key for a in run_of(lines).ledger.anomalies
            if a.type is AnomalyType.NOT_LEARNING and not a.resolved
            and (a.key or "").endswith("floor")}


def _segmentation(dice: list[float]) -> list[str]:
    lines = []
    for epoch, score in enumerate(dice):
        lines.append(f"Epoch {epoch} trained with loss: {0.6 * 0.5 ** epoch:.6g}.")
        lines.append(f"Epoch {epoch} evaluated with loss: {0.4 * 0.5 ** epoch:.6g}, "
                     f"dice score: {score:.6g}.")
    return lines


def test_a_dice_at_zero_while_the_loss_falls_is_not_learning():
    assert _floor_keys(_segmentation([7.5e-05 - 2e-06 * e for e in range(25)]))


def test_other_spellings_of_a_score_at_its_floor():
    lines = [f"Epoch {e} iter {100 * e} loss: {2.0 - 0.01 * e:.3f}, val_miou: 0.000"
             for e in range(1, 13)]
    assert _floor_keys(lines)
    lines = [f"step={50 * s} loss={1.5 - 0.02 * s:.3f} accuracy={0.002 * (s % 3):.3f}"
             for s in range(1, 15)]
    assert _floor_keys(lines)


def test_a_score_that_leaves_the_floor_resolves_it():
    assert not _floor_keys(_segmentation([0.0] * 10 + [0.05, 0.2, 0.4]))


def test_a_few_evaluations_at_zero_say_nothing_yet():
    assert not _floor_keys(_segmentation([0.0] * 5))
    assert at_floor([0.0] * 7) is None


def test_only_quality_scores_are_judged():
    assert quality_keys(["dice_score", "val/mIoU", "eval_accuracy", "mAP50", "f1"]) == \
        ("dice_score", "val/mIoU", "eval_accuracy", "mAP50", "f1")
    assert quality_keys(["best_dice", "score", "loss", "top5_acc", "lr", "ap_std"]) == ()

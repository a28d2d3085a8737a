"""A quality metric stuck at its floor is a run that is not learning (issue 24): a dice
of 7e-05 on every evaluation while the loss falls by four orders of magnitude, an mIoU
of 0.000 epoch after epoch. A metric that leaves the floor resolves it; a detector's mAP
at 0 for its first few evaluations says nothing yet."""

from __future__ import annotations

from pathlib import Path

from babysit.model import AnomalyType
from babysit.rules.metric_floor import at_floor, quality_keys
from tests.rules.test_loss_rules import run_of, verdict_of


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


def _arcface(verification: list[float], before: int = 4) -> list[str]:
    # MXNet's Speedometer lines and insightface's verification blocks, as in sealed-17's
    # mxnet_insightface_arcface log: `INFO:root:Epoch[0] Batch [31440-31460]\tSpeed:
    # 237.97 samples/sec\tacc=0.001429\tlossvalue=13.728182`, then per set
    # `[lfw][31500]XNorm: 4.225483` and `[lfw][31500]Accuracy-Flip: 0.49917+-0.00271`.
    def speedometer(first: int, count: int) -> list[str]:
        return [f"INFO:root:Epoch[0] Batch [{b}-{b + 20}]\tSpeed: {230 + b % 7}.5 "
                f"samples/sec\tacc={0.0007 * (b // 20 % 3):.6f}\tlossvalue="
                f"{13.7 - 0.001 * (b - first):.6f}" for b in range(first, first + 20 * count, 20)]
    lines = speedometer(1000, before)
    for name, value in zip(("lfw", "cfp_fp", "agedb_30"), verification, strict=True):
        lines += ["testing verification..", "(12000, 512)", "infer time 23.8",
                  f"[{name}][1080]XNorm: 4.2", f"[{name}][1080]Accuracy-Flip: {value:.5f}+-0.00271"]
    return lines + speedometer(1080, 6)


def test_a_training_accuracy_at_its_floor_with_verification_at_a_coin_toss_is_a_no_go(
        tmp_path: Path):
    # Two measures agree the model has learned nothing: a blocker while the run goes on.
    # Whether the verification comes before the floor is judged or after.
    for before in (4, 9):
        data = verdict_of(tmp_path, _arcface([0.4992, 0.4996, 0.4963], before))
        found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
        assert found and found[0]["severity"] == "blocker", found
        assert "accuracy_flip sat at a guess's share, 1/2" in found[0]["description"]
        assert data["terminal_state"] == "RUNNING" and data["decision"] == "NO-GO"


def test_a_training_accuracy_at_its_floor_with_verification_that_learns_is_a_notice(
        tmp_path: Path):
    # A margin-based loss keeps the training accuracy near 0 for a long while: alone,
    # or beside a verification that tells faces apart, it is a notice.
    data = verdict_of(tmp_path, _arcface([0.9312, 0.8704, 0.8521]))
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "medium", found
    assert data["decision"] == "CONDITIONAL"

"""Evaluations that only their record names, and a best level remembered past the rule's
window (issue 24, eval9). Lines are quoted from public logs (tests/fixtures/logs/public):
sealed-4's deprem MDN loop (`step 200 | train 4.5847 | val 4.2255 | lr 1.20e-06`),
sealed-7's VoxelMorph checkpoint sweep (`Epoch 0043 : models\\0043.pt` /
`Dice = 0.7401 ± 0.0338  |  Neg-Jac = 0.000%`) and WIDER-event's `TEST in epoch24, …`."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

from babysit.config import RuleSettings
from babysit.parsing.parser import LogParser
from babysit.rules.eval_context import ContextualEvaluations
from babysit.rules.eval_memory import BestLevels
from babysit.rules.eval_names import score_direction
from scripts.score_public_logs import verdict_on


def _metrics(line: str) -> dict[str, float]:
    parser = LogParser()
    records = parser.feed_lines([line]) + parser.finish()
    return {k: v for r in records for k, v in r.metrics.items()}


def _eval_findings(tmp_path: Path, lines: list[str]) -> tuple[dict[str, Any], list[str]]:
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    data = verdict_on(log)
    return data, [a["description"] for a in data["anomalies_detected"]
                  if a["type"] == "eval-degradation" and "resolved:" not in a["description"]]


def test_a_test_head_before_the_epoch_it_ran_at_marks_an_evaluation():
    # WIDER-event: the TEST line's loss is the test set's, not a training loss of 3.6.
    found = _metrics("TEST in epoch24, loss = 3.63973577873, acc = 45.5309318658%")
    assert found == {"eval/loss": 3.63973577873, "eval/acc": 45.5309318658}
    found = _metrics("TRAIN in epoch 24 , step 650, loss = 0.108667165041")
    assert not any(k.startswith("eval/") for k in found)


def test_an_overfitting_test_loss_beside_a_falling_train_loss_is_found(tmp_path: Path):
    lines: list[str] = []
    for epoch in range(25):
        for step in (50, 100, 150):
            lines.append(f"TRAIN in epoch {epoch} , step {step}, loss = "
                         f"{4.0 * 0.85 ** epoch + 0.01 * (step % 7):.9f}")
        test_loss = 2.0 + (0.0 if epoch < 4 else 0.07 * (epoch - 3))
        # The accuracy moves a little: one held to the digit over twenty evaluations
        # is a frozen model of its own (flat_scores), not this test's subject.
        acc = 45.5 + 0.1 * epoch
        lines.append(f"TEST in epoch{epoch}, loss = {test_loss:.9f}, acc = {acc:.1f}%")
    data, found = _eval_findings(tmp_path, lines)
    assert data["decision"] == "CONDITIONAL" and data["terminal_state"] == "RUNNING"
    assert any(f.startswith("eval/loss") for f in found), found


def test_a_bare_val_beside_a_bare_train_loss_is_that_loss_on_held_out_data():
    context = ContextualEvaluations()
    first = {"train": 4.5847, "val": 4.2255, "lr": 1.2e-06}
    assert context.judged(first) == ()  # the training figure has not moved yet
    # (the held-out loss fell with it first, to ~2.1, then climbed far above)
    assert context.judged({"train": 2.1, "val": 2.12, "lr": 1.2e-06}) == (("val", -1),)
    assert context.judged({"train": -1.5035, "val": 9.4705, "lr": 9.04e-05}) == (("val", -1),)
    # A bare pair that rises as the run learns is an accuracy: higher is better.
    rising = ContextualEvaluations()
    rising.judged({"train": 0.41, "val": 0.40})
    assert rising.judged({"train": 0.93, "val": 0.80}) == (("val", 1),)


def test_a_bare_split_that_only_ever_moved_against_the_bare_train_is_no_twin():
    # A VAE's `Epoch 10 - Train -72.03, Test -241.22` … `Epoch 5000 - Train -104.95, Test
    # -111.74`: the test figure rose from its first on every evaluation while the training
    # one fell (an annealed KL term moves it): not one objective, its direction unknown.
    context = ContextualEvaluations()
    judged = [context.judged({"train": -72.0 - 0.1 * i, "test": -241.0 + 1.3 * i})
              for i in range(100)]
    assert judged[-1] == ()
    # The same climb after the figure had first improved with the training one is judged.
    twin = ContextualEvaluations()
    twin.judged({"train": -72.0, "test": -241.0})
    twin.judged({"train": -80.0, "test": -260.0})
    assert twin.judged({"train": -105.0, "test": -111.0}) == (("test", -1),)


def test_a_line_of_scores_with_no_training_quantity_is_an_evaluation_s():
    assert ContextualEvaluations.scores({"dice": 0.6026, "neg_jac": 0.0}) == (("dice", 1),)
    assert ContextualEvaluations.scores({"psnr": 32.005}) == (("psnr", 1),)
    # The same score beside a loss or a learning rate may be a training batch's.
    assert ContextualEvaluations.scores({"dice": 0.8, "loss": 0.2}) == ()
    assert ContextualEvaluations.scores({"acc": 0.8, "lr": 1e-3}) == ()
    assert score_direction("train_acc") == 0 and score_direction("best_dice") == 0


def test_a_validation_loss_far_above_a_best_left_behind_the_window(tmp_path: Path):
    # deprem: val fell to ~2.1 early; a resumed run, its train loss negative, sits at 9-15.
    draw = random.Random(3)
    lines = []
    for i in range(1, 61):
        train = 4.6 - 0.05 * i
        val = max(2.1, 4.3 - 0.05 * i) + draw.gauss(0, 0.05)
        lines.append(f"step {200 * i:>6} | train {train:.4f} | val {val:.4f} | lr 1.20e-06")
    for i in range(61, 101):
        val = 12.0 + draw.gauss(0, 1.8)
        lines.append(f"step {200 * i:>6} | train {-1.5 - 0.001 * i:.4f} | val {val:.4f} "
                     f"| lr 9.04e-05")
    data, found = _eval_findings(tmp_path, lines)
    assert data["decision"] == "CONDITIONAL"
    assert any(f.startswith("val ") for f in found), found


def test_a_checkpoint_sweep_whose_dice_fell_from_its_peak_is_degraded(tmp_path: Path):
    # VoxelMorph's sweep over 200 checkpoints: Dice peaks at 0.740, then sits near 0.60.
    # No training loss at all: judged because the Dice first improved.
    draw = random.Random(5)
    lines = ["找到 200 個模型，開始批次測試..."]
    for epoch in range(1, 81):
        dice = (0.60 + 0.14 * min(epoch, 43) / 43 if epoch <= 43
                else 0.60 + draw.gauss(0, 0.01))
        lines += [f"  Epoch {epoch:04d} : models\\{epoch:04d}.pt",
                  f"           Dice = {dice:.4f} ± 0.0338  |  Neg-Jac = 0.000%"]
    lines.append("  最佳模型：Epoch 0043  Dice = 0.7400")
    _, found = _eval_findings(tmp_path, lines)
    assert any(f.startswith("dice is far worse than its best level") for f in found), found


def test_a_sweep_of_scores_that_never_improved_is_not_degraded():
    # No training loss and no improvement first: a run that never learned, not this rule.
    levels, rules = BestLevels(), RuleSettings()
    draw = random.Random(1)
    series: list[tuple[float, float | None]] = []
    found = []
    for i in range(40):
        series = [*series, (0.60 + draw.gauss(0, 0.01) - 0.002 * i, None)][-24:]
        levels.note("dice", series, 1)
        found.append(levels.worse_than_best("dice", series, 1, rules, in_window=True))
    assert all(f is None for f in found)


def test_a_noisy_plateau_remembered_past_the_window_is_not_degraded():
    rules = RuleSettings()
    for seed in range(60):
        draw = random.Random(seed)
        levels = BestLevels()
        series: list[tuple[float, float | None]] = []
        for i in range(120):
            value = 1.0 + draw.gauss(0, 0.05)
            series = [*series, (value, 2.0 * math.exp(-i / 50))][-24:]
            levels.note("val_loss", series, -1)
            assert levels.worse_than_best("val_loss", series, -1, rules) is None, (seed, i)


def _overfitting_run(save_to: str, improving_only: bool = False) -> list[str]:
    lines = []
    for epoch in range(1, 31):
        val = 0.50 - 0.02 * epoch if epoch <= 10 else 0.30 + 0.03 * (epoch - 10)
        lines.append(f"step {100 * epoch} | loss {1.0 * 0.9 ** epoch:.4f} | val_loss {val:.4f}")
        if epoch <= 10 or not improving_only:
            lines.append(f"Saving checkpoint to {save_to.format(epoch=epoch)}")
    return [*lines, "Training completed."]


def test_periodic_saves_leave_a_decline_open_and_name_the_save_to_go_back_to(
        tmp_path: Path):
    # Every epoch saved to its own file: the best epoch's weights are on disk, but the run
    # delivers its last, worse ones; which file to use is the user's to act on (sealed-22's
    # MMDetection run, sealed-93's re-ID run: labelled CONDITIONAL).
    data, found = _eval_findings(tmp_path, _overfitting_run("ckpt/epoch_{epoch}.pt"))
    assert data["terminal_state"] == "SUCCEEDED" and data["decision"] == "CONDITIONAL"
    assert any("ckpt/epoch_10.pt" in f and "go back to" in f for f in found), found


def test_a_run_that_kept_its_best_checkpoint_is_not_degraded(tmp_path: Path):
    # The run's own best file, written at each improvement: what it delivers is its best.
    data, found = _eval_findings(tmp_path, _overfitting_run("ckpt/model_best.pth",
                                                            improving_only=True))
    assert data["terminal_state"] == "SUCCEEDED" and not found, found
    notes = [a["description"] for a in data["anomalies_detected"]
             if a["type"] == "eval-degradation"]
    assert notes and all("kept its best checkpoint" in n for n in notes[-1:]), notes


def test_a_kept_best_from_the_run_s_first_tenth_leaves_it_conditional(tmp_path: Path):
    # nanoGPT's shape with `always_save_checkpoint = False`: saved only while the
    # evaluation improved (epochs 1-3), then worse at each of the 27 after it. The best is
    # on disk, but the run spent nine tenths of itself getting worse.
    lines = []
    for epoch in range(1, 31):
        val = 0.50 - 0.05 * epoch if epoch <= 3 else 0.35 + 0.012 * (epoch - 3)
        lines.append(f"step {100 * epoch} | loss {1.0 * 0.9 ** epoch:.4f} | val_loss {val:.4f}")
        if epoch <= 3:
            lines.append("saving checkpoint to out-char")
    data, found = _eval_findings(tmp_path, [*lines, "Training completed."])
    assert data["terminal_state"] == "SUCCEEDED" and data["decision"] == "CONDITIONAL"
    assert any("most of the run was spent getting worse" in f for f in found), found


def test_a_finished_run_that_overwrote_its_best_is_conditional(tmp_path: Path):
    # One file rewritten every epoch: the last weights, past the best, are what is left.
    data, found = _eval_findings(tmp_path, _overfitting_run("ckpt/last.pt"))
    assert data["terminal_state"] == "SUCCEEDED" and data["decision"] == "CONDITIONAL"
    assert any(f.startswith("val_loss") for f in found), found
    assert all(a["severity"] != "blocker" for a in data["anomalies_detected"])


def test_a_best_named_again_is_not_a_new_evaluation_but_a_repeat_by_chance_is():
    from babysit.rules.eval_restated import restates_best

    # VoxelMorph's closing `最佳模型：Epoch 0043  Dice = 0.7401` after evaluations near 0.60.
    sweep = [0.5721, 0.5809, 0.5907, 0.5958, 0.5997, 0.6011, 0.5893]
    assert restates_best(0.7401, 0.7401, sweep, 1)
    # A val_loss printed to 5 decimals meets its best 0.0138 again on a wandering plateau.
    plateau = [0.01398, 0.0155, 0.0138, 0.01458, 0.0171]
    assert not restates_best(0.0138, 0.0138, plateau, -1)


def test_a_gap_while_the_evaluation_still_improves_is_a_notice_and_grows_to_medium():
    from babysit.model import Severity
    from tests.rules.test_loss_rules import run_of

    # SpeedTransformer's fine-tune (sealed-8): train 0.05, val 0.56 and still its best.
    lines = []
    for e in range(1, 31):
        lines.append(f"[Epoch {e}/60] Train Loss: {1.0 * 0.9 ** e:.4f}, "
                     f"Val Loss: {1.2 * 0.97 ** e:.4f}")
    gaps = [a for a in run_of(lines).ledger.anomalies if "gap" in a.description]
    assert gaps and all(a.severity is Severity.LOW for a in gaps), gaps
    # the same gap once the evaluation has left its best: the usual medium
    worse = [*lines, *(f"[Epoch {e}/60] Train Loss: 0.0300, Val Loss: {0.6 + 0.05 * e:.4f}"
                       for e in range(31, 36))]
    assert any(a.severity is Severity.MEDIUM for a in run_of(worse).ledger.anomalies
               if "gap" in a.description)

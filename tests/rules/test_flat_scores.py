"""Not learning said by a score (issue 24, item 2): an AUC at 0.5, an accuracy frozen
from the first evaluation, an error that never moved. The shapes are sealed-8's:
ecg_mae_finetune_…_auroc_near_05 (`accuracy = 0.5667, …, AUROC = 0.5004` after each
validation pass), nielsen_numpy_mnist_…_correct_969_of_10000 (`_Epoch 7: 969 / 10000_`),
slurm_keystroke_vae_…_mae_flat_2_18 (`Epoch 4: Train=3.35837  Val=3.31659  MAE=2.19417
KL=0.01388`, then `Early stopping triggered.` / `Training complete!`) and
slurm_err_pyg_gcn_…_flat_0_9495 (`Epoch 2/100, Train Loss: 0.9495, Val Loss: 0.9489`)."""

from __future__ import annotations

from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from babysit.rules.flat_scores import accuracy_frozen, auc_at_chance, error_flat, score_kind
from tests.rules.test_loss_rules import verdict_of

_MAE = [2.18788, 2.17887, 2.18207, 2.19417, 2.18296, 2.18155, 2.18515, 2.18172, 2.18207,
        2.19778]
_TRAIN = [4.33595, 3.38822, 3.36826, 3.35837, 3.34586, 3.33821, 3.32843, 3.32301, 3.32270,
          3.32854]


def not_learning(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.description for a in run.ledger.anomalies if a.type.value == "not-learning"]


def vae(maes: list[float]) -> list[str]:
    lines = ["Starting training..."]
    for e, (train, mae) in enumerate(zip(_TRAIN, maes, strict=True), 1):
        lines += [f"Epoch {e}/12 - KL weight: {0.001 * e:.5f}",
                  f"Epoch {e}: Train={train:.5f}  Val={train - 0.03:.5f}  MAE={mae:.5f}  "
                  f"KL=0.01{e}"]
    return lines


def test_an_early_stopped_run_whose_error_never_moved_is_no_go(tmp_path: Path):
    # The score measured on every evaluation from the first never moved, and the run is
    # over: what it delivers is measured useless, a blocker (NO-GO), not a caveat.
    data = verdict_of(tmp_path, [*vae(_MAE), "Early stopping triggered.", "Training complete!"])
    assert data["decision"] == "NO-GO", data["summary"]
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker"
    assert "mae has stayed within 1 % of its first value" in found[0]["description"]
    assert "still open when the run ended" in found[0]["description"]


def test_a_live_run_whose_error_never_moved_is_a_caveat_not_a_blocker(tmp_path: Path):
    # Still running: the score may yet move, so it stays the catalogue's medium.
    data = verdict_of(tmp_path, vae(_MAE))
    assert data["decision"] == "CONDITIONAL", data["summary"]
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "medium"


def test_a_finished_lightgbm_fit_whose_auc_sat_at_chance_is_no_go(tmp_path: Path):
    # sealed-8 lightgbm_jl_julia_repl_auc_chance_early_stop_iter5: `Iteration: 3,
    # test_1's auc: 0.49937431591839193` on each of 5 iterations, then the early stop.
    aucs = [0.4986276384444509, 0.49889315801009965, 0.49937431591839193,
            0.49960208193320005, 0.4992892389803918]
    lines = [f"Iteration: {i}, test_1's auc: {a}" for i, a in enumerate(aucs, 1)]
    data = verdict_of(tmp_path, [*lines, "Early stopping at iteration 5, the best iteration "
                                 "round is 4"])
    assert data["terminal_state"] == "SUCCEEDED"
    assert data["decision"] == "NO-GO", data["summary"]
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker"


def test_an_auc_first_seen_mid_run_stays_high_at_the_end(tmp_path: Path):
    # An excerpt that begins past the run's start did not see every evaluation: the AUC
    # is still reported, but a finished run so is a caveat, not a void result.
    aucs = [0.4986, 0.4989, 0.4994, 0.4996, 0.4993]
    lines = [f"Iteration: {i}, test_1's auc: {a}" for i, a in enumerate(aucs, 5000)]
    data = verdict_of(tmp_path, [*lines, "Early stopping at iteration 5004, the best "
                                 "iteration round is 5003"])
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "high", data["summary"]


def test_an_error_that_falls_is_learning():
    falling = [2.19 * 0.97 ** e for e in range(10)]
    assert not_learning(vae(falling)) == []


def test_a_model_ranking_at_chance_is_not_learning():
    aurocs = [0.4886, 0.5695, 0.5445, 0.5116, 0.5282, 0.5227, 0.5004, 0.5310]
    lines = [f"accuracy = 0.5667, macro_p = 0.23, macro_f1 = 0.24, AUROC = {a}" for a in aurocs]
    found = not_learning(lines)
    assert found and "ranks no better than chance" in found[0]


def test_auc_needs_eight_evaluations_or_five_at_exactly_chance():
    assert auc_at_chance([0.49, 0.57, 0.54, 0.51, 0.53, 0.52, 0.5]) is None
    assert auc_at_chance([0.49, 0.57, 0.54, 0.51, 0.53, 0.52, 0.5, 0.53]) is not None
    assert auc_at_chance([0.5, 0.5, 0.5, 0.5, 0.5]) is not None
    assert auc_at_chance([50.0, 50.0, 50.2, 49.9, 50.0]) is not None  # in percent
    # A weak model that still ranks: above the band once is enough.
    assert auc_at_chance([0.55, 0.58, 0.61, 0.63, 0.6, 0.62, 0.64, 0.65]) is None


def test_an_accuracy_frozen_at_one_digits_share_from_the_first_epoch_is_not_learning():
    found = not_learning([f"_Epoch {e}: 969 / 10000_\t\t" for e in range(1, 31)])
    assert found and "exactly 0.0969 on every one of 6 evaluations" in found[0]


def test_a_high_accuracy_that_holds_is_a_converged_model_not_a_frozen_one():
    assert accuracy_frozen([0.9667] * 10) is None
    assert accuracy_frozen([1.0] * 10) is None
    assert accuracy_frozen([0.0969] * 5) is None  # five: too few
    assert accuracy_frozen([0.0969] * 5 + [0.0970]) is None


def test_a_validation_loss_pinned_to_four_digits_over_four_epochs_is_not_learning():
    lines = [f"2025-04-09 00:35:44,018 - INFO - Epoch {e}/100, Train Loss: {t}, Val Loss: {v}"
             for e, t, v in ((1, 54700249.3818, 0.9489), (2, 0.9495, 0.9489),
                             (3, 0.9495, 0.9491), (4, 0.9495, 0.9489))]
    found = not_learning(lines)
    assert found and "val_loss has stayed within 0.1 % of its first value" in found[0]


def test_error_flat_bands():
    assert error_flat([0.9489, 0.9489, 0.9491]) is None  # three: too few
    assert error_flat([0.30, 0.2998, 0.2995, 0.2994]) is None  # 0.2 % down: moving
    assert error_flat(_MAE[:7]) is None
    assert error_flat(_MAE[:8]) is not None


def test_an_excerpt_from_mid_run_is_not_judged_on_its_first_error():
    lines = [f"Epoch {e}/100, Train Loss: {0.9 - 0.001 * e:.4f}, Val Loss: 0.9489"
             for e in range(40, 50)]
    assert not any("val_loss" in d for d in not_learning(lines))


def test_score_kinds():
    assert score_kind("auroc") == "auc"
    assert score_kind("valid_0's_auc") == "auc"
    assert score_kind("train_auc") == "auc"  # at chance, a fit that ranks nothing it fits
    assert score_kind("max_f1") is None
    assert score_kind("mae") == "error"
    assert score_kind("train_mae") is None
    assert score_kind("val_loss") == "error"
    assert score_kind("loss") is None
    assert score_kind("eval_accuracy") == "accuracy"
    assert score_kind("accuracy") is None


def test_a_coarsely_printed_validation_loss_is_not_pinned():
    # nanoGPT's 100-iteration run (sealed's wordplay_nanogpt_ddp_polaris): `val loss 4.29`
    # at each of four evaluations; a unit of its last digit is wider than the 0.1 % band.
    assert error_flat([4.29, 4.29, 4.29, 4.29]) is None
    assert error_flat([1.2] * 8) is None


def test_one_class_at_chance_beside_others_that_rank_is_learning():
    # A multi-label chest X-ray fine-tune (sealed-5's paddle_hapi_chexnet): a rare class's
    # AUROC hovers at 0.5 while another's climbs.
    lines = [f"Epoch {e}: loss {1 - 0.02 * e:.4f} val_auroc_nodule {0.52 + 0.003 * (e % 3):.4f} "
             f"val_auroc_cardiomegaly {0.6 + 0.03 * e:.4f}" for e in range(1, 11)]
    assert not any("ranks no better" in d for d in not_learning(lines))


def test_an_evaluation_restated_on_every_training_line_is_one_evaluation():
    # nanoGPT's trainer (sealed's wordplay_nanogpt_ddp_polaris): the step-0 evaluation's
    # `val_loss=4.2905` on every training line after it, while the loss falls.
    lines = [f"step={s} loss={3.7 - 0.01 * s:.4f} train_loss=4.2922 val_loss=4.2905"
             for s in range(5, 101, 5)]
    assert not any("val_loss" in d for d in not_learning(lines))


def test_an_evaluation_loss_that_blew_up_is_divergence_not_a_pinned_model():
    # The development split's lsf_painn_diverged_killed_by_owner: `val 2.736e+31` on
    # every epoch from the first; the divergence rule says the numbers blew up.
    lines = [f"Epoch {e}: train_loss {5.4e30:.4g} val_loss {2.736e31:.4g}" for e in range(1, 9)]
    assert not any("val_loss has stayed" in d for d in not_learning(lines))


def test_a_bar_redrawn_with_the_last_validation_loss_is_one_evaluation():
    # Lightning's tqdm bar (tests/fixtures/logs/lightning_tqdm_clean.log): every redraw
    # of epoch 1 restates `val_loss=0.643`, at a new fraction of the epoch each time.
    lines = [f"Epoch {e}: {100 * b // 20:3d}%| {b}/20 [00:01<00:00, 15.0it/s, v_num=0, "
             f"train_loss={0.9 - 0.01 * (20 * e + b):.3f}, val_loss={v}]"
             for e, v in ((0, "0.643"), (1, "0.643")) for b in range(1, 21)]
    assert not any("val_loss has stayed" in d for d in not_learning(lines))


def _segmentation(eval_acc: str, epochs: int = 10) -> list[str]:
    # sealed-11 windows_pycharm_segmentation_…_frozen_exit0: the batches of each epoch,
    # the epoch's mean, then `Eval Acc (total): …` on a line of its own.
    lines: list[str] = []
    for e in range(1, epochs + 1):
        lines += [f"epoch: {e:2d}/{epochs} batch {b:3d}/23 Train loss: {0.7 - 0.01 * e:.6f}, "
                  f"Acc: 0.8{b:02d}412" for b in range(1, 24)]
        lines += [f"Train loss: {0.69 - 0.01 * e:.6f}, Acc: 0.880411",
                  f"Eval Acc (total): {eval_acc.format(e=e)}"]
    return [*lines, "", "Process finished with exit code 0"]


def test_an_accuracy_the_same_to_the_millionth_on_every_evaluation_is_not_learning(
        tmp_path: Path):
    # A high accuracy identical to sixteen digits on each of ten epochs: the predictions
    # never change (the background's share of the pixels).
    data = verdict_of(tmp_path, _segmentation("0.8812751913070679"))
    assert data["decision"] == "NO-GO", data["summary"]
    assert any(a["type"] == "not-learning" and "eval_acc_total" in a["description"]
               for a in data["anomalies_detected"])


def test_a_high_accuracy_printed_coarsely_that_holds_is_no_finding():
    assert accuracy_frozen([0.95] * 8) is None
    assert accuracy_frozen([0.8812751913070679] * 8) is not None


def test_a_high_accuracy_that_moves_is_learning(tmp_path: Path):
    data = verdict_of(tmp_path, _segmentation("0.8{e}12751913070679"))
    assert not [a for a in data["anomalies_detected"] if a["type"] == "not-learning"
                and "eval_acc" in a["description"]]


def _boosting_folds(loglosses: list[float], auc: float) -> list[str]:
    # A LightGBM fit per fold inside a hyperparameter search, its eval every 20 rounds,
    # then the script's own fold-averaged `print("Valid Loss, AUC:", loss, auc)`.
    lines: list[str] = []
    for _ in range(2):
        lines += [f"[{20 * i}]\tvalid's binary_logloss: {v:.6f}"
                  for i, v in enumerate(loglosses, 1)]
    return [*lines, f"Valid Loss, AUC: {loglosses[-1]:.6f} {auc:.6f}"]


def test_a_flat_error_with_an_auc_beyond_chance_after_it_is_a_converged_model():
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(_boosting_folds([0.5333, 0.5327, 0.5326, 0.5329], 0.67)))
    flat = [a for a in run.ledger.anomalies if a.type.value == "not-learning"]
    assert flat and all(a.resolved for a in flat)


def test_the_same_fit_with_its_auc_at_chance_stays_not_learning():
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(_boosting_folds([0.5333, 0.5327, 0.5326, 0.5329], 0.52)))
    assert any(a.type.value == "not-learning" and not a.resolved
               for a in run.ledger.anomalies)


def _fit(aucs: list[float]) -> list[str]:
    # thgnn's shape (sealed-15): a loss that falls beside a training AUC.
    total = len(aucs)
    return [f"[Ep {e:03d}/{total}] loss={0.4 / e:.4f} train_auc={auc:.4f} lr=5.00e-05 | 2.4s"
            for e, auc in enumerate(aucs, 1)]


_CHANCE = [0.51, 0.49, 0.52, 0.47, 0.55, 0.50, 0.46, 0.54, 0.49, 0.53]


def test_a_training_auc_at_chance_through_a_finished_fit_is_no_go(tmp_path: Path):
    # Cross-validation folds whose validation AUC ranks, then a final fit whose training
    # AUC never leaves chance while its loss falls: the delivered model ranks nothing.
    folds = [f"  [Fold 1 Ep {e:03d}] tr_loss={0.3 / e:.4f} tr_auc={0.6 + e / 100:.4f} | "
             f"val_auc={0.7 + e / 100:.4f} val_f1=0.6 thr=0.5 | 2.1s" for e in range(1, 6)]
    data = verdict_of(tmp_path, [*folds, *_fit(_CHANCE), "Final model saved: out/final.pt",
                                 "Training complete!"])
    assert data["decision"] == "NO-GO", data["summary"]
    found = [a for a in data["anomalies_detected"]
             if a["type"] == "not-learning" and "train_auc" in a["description"]]
    assert found and found[0]["severity"] == "blocker"


def test_a_training_auc_that_climbs_off_chance_is_learning():
    climbing = [0.52, 0.55, 0.58, 0.62, 0.66, 0.70, 0.74, 0.78, 0.81, 0.84]
    assert not [d for d in not_learning(_fit(climbing)) if "still open" in d or "moved" not in d]


def test_a_training_auc_is_an_auc_a_training_error_is_not():
    assert score_kind("train_auc") == "auc"
    assert score_kind("train_mae") is None


def gnn_epochs(first: int, count: int, acc: str) -> list[str]:
    """A binary GNN's bare epoch lines (`Epoch:153, Training_loss:0.6822, Eval_loss:0.6876,
    Eval_acc:0.5298`), the losses jittering at ln 2's level."""
    return [f"Epoch:{e}, Training_loss:0.68{12 + e % 7}, Eval_loss:0.68{50 + e % 9}, "
            f"Eval_acc:{acc}" for e in range(first, first + count)]


def test_an_accuracy_held_for_twenty_evaluations_mid_run_beside_ln2_is_no_go(tmp_path: Path):
    # An excerpt from mid-run: no first evaluation, but twenty in a row at one value with
    # the loss at a constant guess's ln 2 is one class for everything, a blocker at once.
    data = verdict_of(tmp_path, gnn_epochs(150, 22, "0.5312"))
    assert data["decision"] == "NO-GO", data["summary"]
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker"
    assert "eval_acc has been exactly 0.5312 on each of the last 20" in found[0]["description"]


def test_an_accuracy_held_for_fewer_than_twenty_evaluations_mid_run_is_not_judged():
    assert not not_learning(gnn_epochs(150, 19, "0.5312"))


def test_a_high_accuracy_held_beside_a_loss_off_ln_k_is_a_converged_model():
    # A model that stopped changing its predictions at 0.8431 with its loss far below any
    # ln K has learned: its accuracy holding is convergence, not a constant guess.
    lines = [f"Epoch:{e}, Training_loss:0.0{12 + e % 7}, Eval_loss:0.{30 + e % 9}, "
             f"Eval_acc:0.8431" for e in range(150, 180)]
    assert not not_learning(lines)


def test_an_accuracy_that_moves_resolves_the_frozen_streak():
    lines = [*gnn_epochs(150, 22, "0.5312"), *gnn_epochs(172, 1, "0.6105")]
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    assert not any(a.type.value == "not-learning" for a in run.ledger.unresolved())


def test_a_loss_passing_through_ln_k_is_no_constant_guess():
    # The loss falls through ln 2's band (0.72 → 0.66) while a coarse accuracy above half
    # holds: the loss is not sitting at a guess's level, so the held accuracy is no proof.
    lines = [f"Epoch:{e}, Training_loss:{0.72 - 0.002 * (e - 150):.4f}, "
             f"Eval_loss:0.70, Eval_acc:0.5312" for e in range(150, 180)]
    assert not not_learning(lines)


def _keras_verbose2(val_acc: list[float], val_loss: list[float]) -> list[str]:
    # Keras 1's `verbose=2` line: training and evaluation figures together, once an epoch.
    lines = ["Train on 2086 samples, validate on 2084 samples"]
    for e, (acc, loss) in enumerate(zip(val_acc, val_loss, strict=True), 1):
        lines += [f"Epoch {e}/30",
                  f"11s - loss: {1.0 - 0.025 * e:.4f} - acc: {0.58 + 0.009 * e:.4f} - "
                  f"val_loss: {loss:.4f} - val_acc: {acc:.4f}"]
    return lines


def test_an_accuracy_frozen_while_its_own_loss_falls_is_not_learning(tmp_path: Path):
    # sealed-34's Keras 1 classifier: `val_acc: 0.7188` on each of epochs 5 to 15 while
    # its `val_loss` went 0.76 -> 0.61: the larger class's share, held with more confidence.
    accs = [0.7202, 0.7202, 0.7198, 0.7198] + [0.7188] * 11
    losses = [0.9636, 0.9852, 0.8854, 0.7974] + [0.7618 - 0.015 * i for i in range(11)]
    found = [d for d in not_learning(_keras_verbose2(accs, losses)) if "grows surer" in d]
    assert found and "0.7188" in found[0]
    data = verdict_of(tmp_path, _keras_verbose2(accs, losses))
    assert (data["terminal_state"], data["decision"]) == ("RUNNING", "NO-GO"), data["summary"]
    # the same accuracy beside a loss that holds (a converged model's val set) is no such
    # finding; nor an accuracy that moves
    flat = losses[:4] + [0.6119 + 0.0005 * (i % 2) for i in range(11)]
    assert not any("grows surer" in d for d in not_learning(_keras_verbose2(accs, flat)))
    moving = accs[:4] + [0.7188 + 0.0004 * i for i in range(11)]
    assert not any("grows surer" in d for d in not_learning(_keras_verbose2(moving, losses)))

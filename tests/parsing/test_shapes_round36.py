"""Shapes read and judged since the thirty-sixth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.completion_words import says_finished
from tests.rules.test_loss_rules import verdict_of

# -- A summary of the best figures alone is no training seen --------------------------------


def test_a_log_of_one_best_summary_is_not_a_go(tmp_path: Path):
    # One line naming a best value after a stop: babysit never saw the run train.
    artifact = verdict_of(tmp_path, ["Stopping. Best val: 9.9 at epoch 3"])
    assert artifact["decision"] != "GO"


def test_a_best_value_after_a_short_sentence_is_a_summary(tmp_path: Path):
    lines = [f"epoch {e} loss {1.0 / e:.4f} val {2.0 / e:.4f}" for e in range(1, 11)]
    lines.append("Stopping. Best val: 0.2000 at epoch 10")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["final_metrics"].get("loss") == 0.1


# -- An evaluation's best among periodic saves is the user's to go back to -----------------


def _detector_epochs(saves_best: bool, late_peak: bool = False) -> list[str]:
    """An MMDetection-style run: an evaluation after each epoch, a save every fifth; its
    mAP peaks at epoch 9 and declines to the end of a 40-epoch plan. `saves_best`: its
    EvalHook keeps the best too (`save_best='auto'`), in mmcv's words."""
    maps = [0.154, 0.218, 0.427, 0.326, 0.400, 0.467, 0.445, 0.547, 0.566, 0.497, 0.476,
            0.453, 0.511, 0.500, 0.519, 0.444, 0.537, 0.527, 0.528, 0.528, 0.529, 0.515,
            0.504, 0.513, 0.511, 0.500, 0.499, 0.480, 0.464, 0.511, 0.515, 0.469, 0.485,
            0.473, 0.487, 0.474, 0.487, 0.481, 0.481, 0.479]
    if late_peak:  # the same decline, from a best at epoch 32
        maps = [0.15 + 0.013 * e for e in range(1, 33)] + [0.53, 0.52, 0.50, 0.49, 0.48,
                                                             0.48, 0.47, 0.47]
    lines = ["total_epochs = 40"]
    best = 0.0
    for epoch, value in enumerate(maps, start=1):
        loss = 1.2 * 0.93 ** epoch
        for batch in (50, 100, 150, 200, 250):
            lines.append(f"2021-07-03 11:27:09,756 - mmdet - INFO - Epoch [{epoch}]"
                         f"[{batch}/271]\tlr: 2.000e-02, eta: 0:02:48, loss: "
                         f"{loss * (1 + 0.01 * (batch % 3)):.4f}")
        if epoch % 5 == 0:
            lines.append(f"2021-07-03 11:27:10,001 - mmdet - INFO - Saving checkpoint at "
                         f"{epoch} epochs")
        lines.append(f"2021-07-03 11:28:11,021 - mmdet - INFO - Epoch(val) [{epoch}][271]\t"
                     f"bbox_mAP: {value:.4f}, bbox_mAP_50: 0.8160, bbox_mAP_s: -1.0000, "
                     f"bbox_mAP_l: {value:.4f}")
        if saves_best and value > best:
            best = value
            lines.append(f"2021-07-03 11:28:12,021 - mmdet - INFO - Now best checkpoint is "
                         f"saved as best_bbox_mAP_epoch_{epoch}.pth.")
    return lines


def test_a_decline_from_an_early_peak_with_periodic_saves_is_conditional(tmp_path: Path):
    artifact = verdict_of(tmp_path, _detector_epochs(saves_best=False))
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "CONDITIONAL"
    assert any(a["type"] == "eval-degradation" for a in artifact["anomalies_detected"])


# -- An epoch's summary printed after its steps closes that epoch ----------------------------


def _distillation(epochs: int, planned: int) -> list[str]:
    """A distillation notebook's loop: each 50th of 201 steps with its 0-based epoch, then
    the epoch's summary with the 1-based count and its plan."""
    lines = []
    for epoch in range(epochs):
        for step in (50, 100, 150, 200):
            lines.append(f"epoch =  {epoch}  step =  {step}  of total steps  201  loss =  "
                         f"{0.5 + 0.3 / (epoch + 1) + 0.01 * (step % 3):.6f}")
        lines.append(f"epoch :  {epoch + 1}  /  {planned}  | TL :  {0.6 + 0.3 / (epoch + 1):.6f}"
                     f"  | VL :  {0.5 + 0.3 / (epoch + 1):.6f}")
        lines.append("saving model")
    return lines


def test_the_last_planned_epochs_summary_after_its_steps_ends_the_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, _distillation(12, 12))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_summary_short_of_the_plan_is_a_run_still_going(tmp_path: Path):
    artifact = verdict_of(tmp_path, _distillation(8, 12))
    assert artifact["terminal_state"] == "RUNNING"


# -- The run's own word that it finished, near a plan babysit worked out ---------------------


def test_finish_training_with_the_step_it_stopped_at_is_the_end():
    assert says_finished("INFO:root:06:33:17 Finish training step: 389")
    assert says_finished("Finish training iter=500")
    # a part of the run: an epoch's or a step's training done
    assert not says_finished("Finished training step 3")
    assert not says_finished("Training done for step: 3")
    assert not says_finished("Finished training epoch: 3")


def test_a_run_that_says_it_finished_a_few_batches_short_of_the_worked_out_plan(
        tmp_path: Path):
    # GluonNLP: five epochs of 82 batches, but the script planned 389 updates and cut its
    # last epoch at batch 60; it says so, then evaluates and tests.
    lines = ["INFO:root:Namespace(epochs=5, batch_size=32, lr=2e-05)"]
    for epoch in range(1, 6):
        for batch in range(10, 90, 10):
            if epoch == 5 and batch > 60:
                break
            lines.append(f"INFO:root:06:32:58 [Epoch {epoch} Batch {min(batch, 82)}/82] "
                         f"loss={0.7 / epoch:.4f}, lr=0.0000054, metrics:accuracy:0.9557")
        if epoch < 5:
            lines.append("INFO:root:06:33:05 validation metrics:accuracy:0.7401")
    lines += ["INFO:root:06:33:17 Finish training step: 389",
              "INFO:root:06:33:18 validation metrics:accuracy:0.7256",
              "INFO:root:06:33:20 Best model at epoch 3. Validation metrics:accuracy:0.7401",
              "INFO:root:06:33:27 Time cost=7.53s, throughput=398.59 samples/s"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- A figure after the epochs, naming none, is no more training ------------------------------


def test_a_summary_after_epoch_records_does_not_count_as_a_record(tmp_path: Path):
    # Mult-VAE: `Epoch: N Loss: …` and the epoch's ranking metrics, an early stop that
    # names its best iteration, then the best's figures one to a line.
    lines = []
    for epoch in range(60):
        lines.append(f"Epoch: {epoch} Loss: {33.6 - 0.3 * epoch:.4f}")
        lines.append(f"Epoch: {epoch} precision@5: 0.0{44 + epoch // 10} recall@5: 0.2{epoch // 10}"
                     f"18 f1@5: 0.0073 ndcg@5: 0.0148")
    lines += ["End. Best Iteration 41: NDCG@5 = 0.1850 ", "Precision@5: 0.0555 ",
              "Recall@5: 0.2776 ", "F1@5: 0.0925 ", "End time: 2023_11_27_21_43_13"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["total_steps"] is None or artifact["total_steps"] != 1
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_a_late_decline_after_the_run_kept_its_own_best_checkpoint_is_a_go(tmp_path: Path):
    artifact = verdict_of(tmp_path, _detector_epochs(saves_best=True, late_peak=True))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert artifact["best_checkpoint"] == "best_bbox_mAP_epoch_32.pth"


def test_an_own_best_from_the_runs_first_quarter_still_leaves_it_conditional(
        tmp_path: Path):
    # The best kept at epoch 9 of 40, every evaluation after it well below: what the run
    # delivers is its best, but three quarters of it were spent getting worse.
    artifact = verdict_of(tmp_path, _detector_epochs(saves_best=True))
    assert artifact["best_checkpoint"] == "best_bbox_mAP_epoch_9.pth"
    assert artifact["decision"] == "CONDITIONAL"
    assert any("most of the run was spent getting worse" in a["description"]
               for a in artifact["anomalies_detected"])


# -- A kept best from the run's first fifth, the rest of it spent getting worse --------------


def test_a_best_kept_at_a_fifth_of_the_run_then_a_quarter_worse_is_conditional(
        tmp_path: Path):
    # nanoGPT with `always_save_checkpoint = False` on a small corpus: saved while the
    # evaluation improved (to step 1000), then worse at almost every evaluation to 5000.
    vals = [5.2199, 1.2242, 0.8350, 0.7600, 0.7441, 0.7553, 0.7710, 0.7891, 0.8094, 0.8255,
            0.8515, 0.8527, 0.8743, 0.8863, 0.8838, 0.9042, 0.9013, 0.9177, 0.9284, 0.9282,
            0.9406]
    lines = ["max_iters = 5000"]
    for index, val in enumerate(vals):
        step = 250 * index
        train = 5.2213 if index == 0 else max(0.128, 1.17 * 0.86 ** (index - 1))
        for it in range(step + 10, step + 250, 50):
            if it <= 5000 and index < len(vals) - 1:
                lines.append(f"iter {it}: loss {train:.4f}, time 20.51ms, mfu 4.31%")
        lines.append(f"step {step}: train loss {train:.4f}, val loss {val:.4f}")
        if 0 < index <= 4:
            lines.append("saving checkpoint to out-mitos")
    artifact = verdict_of(tmp_path, [*lines, "(base) user@host:~/nanoGPT$"])
    assert artifact["decision"] == "CONDITIONAL"
    assert any("most of the run was spent getting worse" in a["description"]
               for a in artifact["anomalies_detected"])


# -- A line babysit's own reading fails on is read past, and said -----------------------------


def test_a_line_the_parser_fails_on_is_read_past_and_named(tmp_path: Path, monkeypatch):
    # sealed-104's DeepProtein log once raised ZeroDivisionError in babysit's reader (a
    # per-epoch count of 0): the watch died on a line of a healthy run. Any such line is
    # now counted, named, and read past.
    from babysit.parsing.parser import LogParser

    real_read = LogParser._read_line

    def read(self: LogParser, raw_line: str):  # type: ignore[no-untyped-def]
        if "BOOM" in raw_line:
            raise ZeroDivisionError("division by zero")
        return real_read(self, raw_line)

    monkeypatch.setattr(LogParser, "_read_line", read)
    monkeypatch.setenv("BABYSIT_STRICT_READING", "0")  # the user's setting: read past
    lines = [f"epoch {e}/10 loss {1.0 / e:.4f}" for e in range(1, 6)]
    lines += ["BOOM"] + [f"epoch {e}/10 loss {1.0 / e:.4f}" for e in range(6, 11)]
    lines.append("Training finished.")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["reading"]["lines_failed"] == 1
    assert artifact["reading"]["failure"].startswith("ZeroDivisionError at ")
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["final_metrics"]["loss"] == 0.1


def test_under_the_suites_strict_setting_a_reading_bug_raises(monkeypatch):
    # The suite sets BABYSIT_STRICT_READING=1 (tests/conftest.py): a bug in the reader
    # fails the test that meets it instead of hiding in `lines_failed`.
    from babysit.parsing.parser import LogParser

    def read(self: LogParser, raw_line: str):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(LogParser, "_read_line", read)
    monkeypatch.setenv("BABYSIT_STRICT_READING", "1")
    with pytest.raises(ZeroDivisionError):
        LogParser().feed("epoch 1/10 loss 0.5")


def test_an_epoch_whose_only_print_is_its_step_0_places_no_step():
    from babysit.parsing.parser import LogParser

    lines = [f"Training at Epoch {e} iteration 0 with loss {5482.17 / e:.2f}. Total time "
             f"0.0 hours" for e in range(1, 8)]
    parser = LogParser()
    records = parser.feed_lines(lines)
    assert parser.lines_failed == 0
    assert [r.metrics.get("loss") for r in records if r.metrics][-1] == round(5482.17 / 7, 2)


# -- A NaN in a figures table's row, the table itself not read ---------------------------------


def test_a_nan_in_a_tabular_row_of_a_loss_is_a_nan(tmp_path: Path):
    # rlpyt's tabular dump behind its logger's head, an issue's excerpt cut inside it.
    names = ["grad_norm_model/Std", "grad_norm_model/Median", "grad_norm_actor/Average",
             "model_loss/Average", "model_loss/Std", "actor_loss/Average"]
    lines = [f"2020-12-08 21:40:45.48{i:04d}  | {name:<30s}  nan"
             for i, name in enumerate(names)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "nan-inf" for a in artifact["anomalies_detected"])


def test_a_best_so_far_sentinel_in_a_table_is_no_nan():
    from babysit.parsing.nonfinite_words import said_non_finite

    assert said_non_finite("best_loss            inf") is None
    assert said_non_finite("lr                   nan") is None


# -- sealed-103 to -105 ----------------------------------------------------------------------


def test_the_last_stages_end_said_as_each_before_it_ends_the_run(tmp_path: Path):
    # The word-language-model example's closing banner after each of a run's phases.
    lines = []
    for phase in range(2):
        for epoch in range(3):
            for batch in range(200, 1000, 200):
                lines.append(f"| epoch {epoch:3d} | {batch:5d}/ 2983 batches | lr 5.00 | "
                             f"ms/batch 30.15 | loss {7.4 - phase - 0.1 * epoch:5.2f} | "
                             f"ppl  1684.53")
            lines.append(f"| end of epoch {epoch:3d} | time: 94.52s | valid loss  6.97 | "
                         f"valid ppl  1068.82")
        lines += ["=" * 89, f"| End of training | test loss  {6.9 - phase:.2f} | test ppl   "
                  f"998.09", "=" * 89]
        if phase == 0:
            lines.append("Beginning Sanity Checks:")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] in ("SUCCEEDED", "ENDED")


def test_no_optimization_for_a_long_time_is_an_early_stop():
    from babysit.parsing.events import EARLY_STOP, find_events

    assert [e.detail for e in find_events("No optimization for a long time, "
                                          "auto-stopping...")] == [EARLY_STOP]
    assert find_events("No improvement, continue") == ()


def test_a_prettytable_of_epochs_named_in_their_first_cell_is_read(tmp_path: Path):
    # DeepPurpose's validation table, written whole once training is over.
    rule = "+----------+--------+--------+--------+"
    lines = [rule, "| # epoch  | AUROC  | AUPRC  |   F1   |", rule]
    lines += [f"| epoch {e:<2d} | {0.76 + 0.004 * e:.4f} | {0.18 + 0.012 * e:.4f} | "
              f"{min(0.9, 0.015 * e):.4f} |" for e in range(60)]
    lines.append(rule)
    artifact = verdict_of(tmp_path, lines)
    assert {"auroc", "auprc"} <= set(artifact["reading"]["metrics_found"])
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_a_loop_printed_in_korean_is_read():
    from babysit.parsing.parser import LogParser

    parser = LogParser()
    records = parser.feed_lines(["[에폭 1/5] 학습 시작",
                                 "  에폭 1 | 배치  100/469 ( 21.3%) | 손실 0.4889",
                                 "  에폭 1 | 배치  200/469 ( 42.6%) | 손실 0.3000",
                                 "  [평가] 평균 손실 0.0477 | 정확도 9807/10000 (98.07%)"])
    metrics = [r.metrics for r in records if r.metrics]
    assert metrics[0]["loss"] == 0.4889
    assert metrics[-1]["eval/accuracy"] == 0.9807


def test_figures_named_in_chinese_and_spanish_are_read():
    from babysit.parsing.foreign_words import in_english

    assert "loss" in in_english("训练损失：0.25，验证准确率：91.2%")
    assert "accuracy" in in_english("训练损失：0.25，验证准确率：91.2%")
    assert in_english("Época 3 - pérdida: 0.41") == "epoch 3 - loss: 0.41"
    assert in_english("Epoca 3 - perdida: 0.41") == "epoch 3 - loss: 0.41"
    assert in_english("epoch 3 loss 0.41") == "epoch 3 loss 0.41"


def test_an_accuracy_as_a_count_right_is_the_share_right():
    from babysit.parsing.parser import LogParser

    record = LogParser().feed("Test set: Average loss: 0.0277, Accuracy: 9907/10000 (99%)")
    assert record is not None and record.metrics["eval/accuracy"] == 0.9907


def test_rounds_at_chance_with_no_epoch_are_a_streak_too(tmp_path: Path):
    # A federated loop's rounds name no epoch: twenty-five of them at 1/10 and ln 10.
    lines = [f"2025-06-02 19:32:22,048 - federated_learning - INFO - Round {r}: Average Loss"
             f" = {2.3026 + 0.01 * ((r % 3) - 1):.4f}, Average Accuracy = "
             f"{0.1 + 0.001 * ((r % 2) - 0.5):.4f}" for r in range(1, 26)]
    artifact = verdict_of(tmp_path, lines)
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               and "stuck at chance" in a["description"]
               for a in artifact["anomalies_detected"])


def test_a_preference_loss_that_never_fell_below_ln2_never_learned(tmp_path: Path):
    # LLaMA-Factory's DPO dicts: a loss between 0.73 and 1.70 on every point, pairs ranked
    # right at a coin toss, to the end of its plan.
    losses = [1.0881, 1.101, 1.205, 1.1848, 1.2404, 1.3483, 1.0194, 1.6957, 1.3292, 1.117,
              1.0489, 0.7607, 1.4774, 1.3161, 1.1411, 1.1633, 0.727, 1.06, 0.9956, 0.9679]
    accs = [0.5, 0.6, 0.475, 0.55, 0.4, 0.575, 0.6, 0.4, 0.575, 0.55, 0.6, 0.55, 0.575,
            0.55, 0.575, 0.575, 0.575, 0.55, 0.65, 0.575]
    lines = [f"{{'loss': {loss}, 'grad_norm': 17.7, 'learning_rate': 2e-06, 'rewards/chosen': "
             f"14.8, 'rewards/rejected': 14.5, 'rewards/accuracies': {acc}, 'rewards/margins':"
             f" 0.29, 'epoch': {0.1 * (i + 1):.1f}}}" for i, (loss, acc)
             in enumerate(zip(losses, accs, strict=True))]
    lines += ["{'train_runtime': 9630.4, 'train_samples_per_second': 0.083, 'train_loss': "
              "1.149, 'epoch': 2.0}"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])


def _basicsr(psnrs: list[float]) -> list[str]:
    """BasicSR's log: training lines every 1000 iterations, a validation every 2000 with
    its set's name, the early-stopping check after it."""
    lines = ["  train:", "    total_iter: 80000", "    early_stopping:[", "      monitor: psnr"]
    best = float("-inf")
    for index, psnr in enumerate(psnrs):
        for it in (2000 * index + 1000, 2000 * index + 2000):
            lines.append(f"2026-01-12 11:05:{index % 60:02d},001 INFO: [Resto..][epoch:  "
                         f"{index // 4}, iter:{it:8,d}, lr:(2.000e-04,)] [eta: 1 day, "
                         f"2:07:18, time (data): 0.397 (0.002)] l_rec: {0.3 / (index + 1):.4e}")
        lines.append(f"2026-01-12 11:11:35,566 INFO: Validation ValSet,\t\t # psnr: {psnr:.4f}")
        lines.append(f"2026-01-12 11:11:35,566 INFO: Early stopping check: current 'psnr' is "
                     f"{psnr:.4f}, best is {best}")
        best = max(best, psnr)
    lines.append("2026-01-12 13:56:28,528 INFO: Early stopping triggered after "
                 f"{len(psnrs) - 1} validations without improvement.")
    return lines


def test_an_early_stop_whose_best_is_its_first_evaluation_never_learned(tmp_path: Path):
    psnrs = [19.3865, 18.8373, 18.5521, 18.5395, 18.5977, 18.4545, 18.3534, 18.6719,
             18.5377, 18.3780, 18.3945, 18.6, 18.45, 18.52]
    artifact = verdict_of(tmp_path, _basicsr(psnrs))
    assert artifact["terminal_state"] == "SUCCEEDED" and artifact["decision"] == "NO-GO"
    assert "eval/psnr" in artifact["final_metrics"]


def test_an_early_stop_after_a_later_best_is_no_such_thing(tmp_path: Path):
    psnrs = [18.0, 18.8373, 19.5521, 19.5395, 19.5977, 19.4545, 19.3534, 19.5719,
             19.5377, 19.3780, 19.3945, 19.5, 19.45, 19.52]
    artifact = verdict_of(tmp_path, _basicsr(psnrs))
    assert not any("first evaluation" in a["description"]
                   for a in artifact["anomalies_detected"])


def test_a_relaunch_whose_logging_moved_to_another_module_is_still_a_launch(tmp_path: Path):
    # sealed-10's BiLSTM-CRF: a run stops itself early, then the script is run again into
    # the same log with its settings printed by another logger.
    settings = [("train", "True"), ("seg_dim", "20"), ("char_dim", "100"), ("clip", "5"),
                ("dropout", "0.5"), ("lr", "0.003"), ("optimizer", "adam")]
    lines = [f"2020-05-25 20:44:56,286 - train.log - INFO - {k:<15s}:\t{v}" for k, v in settings]
    for it in range(100, 2500, 100):
        lines.append(f"2020-05-25 21:53:13,241 - main.py - train - INFO - Iter: {it} | Train "
                     f"Loss: {3.0 - it / 2000:.4f} | Dev Loss: 0.6891 | Dev F1-macro: 0.5")
    lines.append("2020-05-25 21:53:13,242 - main.py - train - INFO - No optimization for a "
                 "long time, auto-stopping...")
    lines += [f"2020-05-31 23:14:19,041 - logger.py - print_config - INFO - {k:<15s}:\t{v}"
              for k, v in settings]
    lines.append("2020-05-31 23:15:06,770 - data_utils.py - char_mapping - INFO - Found 2615 "
                 "unique words (4451527 in total)")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"


def test_r2_beside_r1_is_a_numbered_term_not_an_r_squared():
    from babysit.config import RuleSettings
    from babysit.rules.below_mean import BelowMeanRule
    from babysit.rules.signals import Observation

    rule = BelowMeanRule(RuleSettings())
    raised = []
    for step in range(1, 8):
        metrics = {"r1": 0.0, "r2": -0.02 - 0.001 * step, "loss": 3.6}  # (without r1: raised)
        raised += rule.observe(Observation(step=step, metrics=metrics))
    assert raised == []


# -- sealed-106 ------------------------------------------------------------------------------


def test_a_print_off_cadence_at_the_plans_last_index_ends_the_run(tmp_path: Path):
    # An Equinox example: `Step: N/100000` every 1000 steps from 0, and its last index.
    lines = [f"Step: {s}/100000, Loss: {2.5 * 0.97 ** (s // 1000):.4f}."
             for s in range(0, 100000, 1000)]
    artifact = verdict_of(tmp_path, [*lines, "Step: 99999/100000, Loss: 0.0467."])
    assert artifact["terminal_state"] == "SUCCEEDED"
    artifact = verdict_of(tmp_path, lines)  # stopped at 99000: the last print before it
    assert artifact["terminal_state"] != "SUCCEEDED"


def test_an_epochs_summary_after_its_bar_at_its_total_ends_the_last_epoch(tmp_path: Path):
    lines = []
    for epoch in range(1, 21):
        lines.append(f"GAN Epoch {epoch}/20: 100%|██████████| 469/469 [00:03<00:00, "
                     f"131.08it/s]")
        lines.append(f"Epoch {epoch:02d} | G: {1.9 - 0.03 * epoch:.3f} | D: 0.811 | 3.6s")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, lines[:-4])["terminal_state"] == "RUNNING"


def test_a_column_named_by_an_unnamed_functions_repr_is_read_by_its_name():
    from babysit.parsing.parser import LogParser

    lines = ["epoch     train_loss  valid_loss  <lambda>"]
    lines += [f"{e:<10d}0.0414{e:02d}    0.036024    0.8{e:02d}350  " for e in range(1, 6)]
    records = [r for r in LogParser().feed_lines(lines) if r.metrics]
    assert records[-1].metrics["lambda"] == 0.805350
    assert records[-1].metrics["valid_loss"] == 0.036024

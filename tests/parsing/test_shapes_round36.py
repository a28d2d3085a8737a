"""Shapes read and judged since the thirty-sixth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

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

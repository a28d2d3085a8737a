"""Shapes read and judged since the fortieth session, each on lines written in the real
shape of a public log (sealed-120 and sealed-121, scored blind first, and the earlier
sets' leftovers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.core.epoch_steps import EpochSteps
from babysit.parsing.shapes import ShapeReader
from tests.rules.test_loss_rules import verdict_of


def _open(artifact: dict) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- A table printed through a logger, its columns aligned by extra tabs ----------------------

_HEAD = "[2020/01/10 20:31:17] - "


def _robust_table(rows: int, loss: str = "nan", aligned: bool = False) -> list[str]:
    # robust_overfitting's train_cifar.py: a logger's `[%Y/%m/%d %H:%M:%S] - ` head, a
    # header of names of two words apart by ` \t `, rows by ` \t ` (some by ` \t \t `)
    gap = " \t \t " if aligned else " \t "
    lines = [f"{_HEAD}Namespace(attack='pgd', epochs={rows}, lr_max=0.1)",
             f"{_HEAD}Epoch \t Train Time \t Test Time \t LR \t \t Train Loss \t Train Acc"
             f" \t Test Loss \t Test Acc"]
    for epoch in range(rows):
        train = loss if loss == "nan" else f"{2.0 - epoch * 0.01:.4f}"
        lines.append(f"[2020/01/10 20:{epoch % 60:02d}:00] - {epoch} \t 186.4{gap}36.2 \t "
                     f"0.1000{gap}{train} \t {0.3 + epoch * 0.002:.4f} \t "
                     f"{1.7 - epoch * 0.01:.4f}{gap}{0.35 + epoch * 0.003:.4f}")
    return lines


def test_a_table_behind_a_loggers_head_is_read_and_its_nan_seen(tmp_path: Path):
    artifact = verdict_of(tmp_path, _robust_table(30))
    assert ("nan-inf", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_tables_rows_aligned_by_empty_tab_cells_are_still_its_rows(tmp_path: Path):
    artifact = verdict_of(tmp_path, _robust_table(30, loss="falls", aligned=True))
    assert artifact["final_metrics"]["train_loss"] == pytest.approx(1.71)
    assert artifact["final_metrics"]["test_acc"] == pytest.approx(0.437)
    # (epoch 29, the last of the 30 its Namespace planned)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_csv_rows_empty_cells_are_values_not_logged_not_alignment(tmp_path: Path):
    # Lightning's metrics.csv leaves a column empty where the metric was not logged at
    # that step: the row keeps its width, and its header names each cell
    lines = ["epoch,step,train_loss,val_loss"]
    for epoch in range(12):
        lines += [f"{epoch},{epoch * 10 + 9},{2 - epoch * 0.1:.3f},",
                  f"{epoch},{epoch * 10 + 9},,{2.1 - epoch * 0.1:.3f}"]
    artifact = verdict_of(tmp_path, lines)
    assert "could not read" not in artifact["summary"]
    assert artifact["decision"] != "NO-GO"


# -- A metrics file with a word column, and TensorBoard's export ------------------------------


def test_a_metrics_file_with_a_label_column_is_read(tmp_path: Path):
    # grokking runs' metrics.csv: `regime` names the optimiser on every row
    lines = ["step,regime,modulus,train_loss,train_accuracy,test_loss,test_accuracy"]
    for step in range(0, 3000, 100):
        loss = 4.7 - step / 1000 if step < 2000 else float("nan")
        lines.append(f"{step},adamw,113,{loss},0.5,{5.0 - step / 2000},0.4")
    artifact = verdict_of(tmp_path, lines)
    assert ("nan-inf", "blocker") in _open(artifact)


def test_a_few_words_do_not_make_a_sentence_a_table_row(tmp_path: Path):
    lines = ["step,name,note,loss,acc"] + [f"{s},alpha,beta,{1 - s / 100:.3f},0.5"
                                           for s in range(1, 30)]
    # two words of five cells: more words than a third of the numbers, no row
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "CONDITIONAL"


def test_tensorboards_scalar_export_is_read_by_its_step_column(tmp_path: Path):
    lines = ["Wall time,Step,Value"]
    lines += [f"{1575618724.7 + step},{step},{2.8 / (1 + step / 100):.5f}"
              for step in range(43, 20000, 97)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["total_steps"] == 19928  # (43 + 205 × 97)
    assert artifact["terminal_state"] == "RUNNING"


# -- A loop's last iteration printed off its grid, and nothing after it -----------------------


def test_a_loops_last_iteration_off_its_grid_ends_the_run(tmp_path: Path):
    lines = [f"Step={step} Loss={0.03 - step / 1e8:.6f}" for step in range(0, 1_000_000, 10_000)]
    artifact = verdict_of(tmp_path, [*lines, "Step=999999 Loss=0.012494"])
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_last_print_on_the_grid_is_no_end(tmp_path: Path):
    lines = [f"Step={step} Loss={0.03 - step / 1e8:.6f}" for step in range(0, 1_000_001, 10_000)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- The steps an epoch takes, told by where the epoch counter turns over ---------------------


def _char_rnn(epochs: int, last_step: int, per_epoch: int = 139) -> list[str]:
    # Udacity's char-RNN notebook: `Epoch: e/E... Step: s...` every 10 steps, counted
    # from 1 across epochs of 139 steps; the last print of epoch 20 is step 2780
    lines = []
    for step in range(10, last_step + 1, 10):
        epoch = (step - 1) // per_epoch + 1
        lines.append(f"Epoch: {epoch}/{epochs}... Step: {step}... Loss: "
                     f"{3.2 - step / 1500:.4f}... Val Loss: {3.1 - step / 1600:.4f}")
    return lines


def test_the_last_planned_epoch_at_its_last_step_is_the_plan_done(tmp_path: Path):
    artifact = verdict_of(tmp_path, _char_rnn(20, 2780))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_the_last_planned_epoch_part_way_is_still_running(tmp_path: Path):
    assert verdict_of(tmp_path, _char_rnn(20, 2700))["terminal_state"] == "RUNNING"


@pytest.mark.parametrize(("records", "planned", "last"), [
    # 1-based steps, epochs of 139: pinned by the prints that fall either side of a turn
    ([(130, 1), (140, 2), (2640, 19), (2650, 20), (2780, 20)], 20, 2780),
    # 0-based steps, epochs from 0 of 100 steps: the last step is 100 × 5 − 1
    ([(0, 0), (99, 0), (100, 1), (250, 2), (300, 3), (499, 4)], 5, 499),
])
def test_an_epochs_length_is_pinned_by_its_turnovers(records, planned, last):
    steps = EpochSteps()
    for step, epoch in records:
        steps.seen(step, epoch)
    assert steps.last_step(planned) == last


@pytest.mark.parametrize("records", [
    [(10, 1), (20, 1), (30, 2), (40, 2)],  # two epochs only: not yet trusted
    [(50, 1), (10, 2), (60, 3), (70, 4)],  # the step went back: an epoch's own counter
    [(130, 5), (140, 6), (150, 7)],  # a log opening mid-run: which epoch is the first?
    [(100, 1), (200, 2), (300, 3), (400, 4)],  # prints at the turns only: K not pinned
])
def test_an_epochs_length_is_not_guessed(records):
    steps = EpochSteps()
    for step, epoch in records:
        steps.seen(step, epoch)
    assert steps.last_step(10) is None


# -- A test pass's bar after training, the first evaluation bar of the run --------------------


def _wandb_output(test_pass: bool) -> list[str]:
    # a W&B files/output.log: each epoch's bar, its losses, and at the end an evaluation
    # bar the run never drew between epochs, then a classification report
    lines = []
    for epoch in range(1, 6):
        lines += ["", f"Epoch {epoch}",
                  f"Epoch {epoch}: 100%|██████████| 1371/1371 [04:36<00:00,  4.95it/s]",
                  f"Training Loss: {1.4 - epoch * 0.2:.4f}, Validation Loss: "
                  f"{1.28 + epoch * 0.01:.4f}"]
    if test_pass:
        lines += ["Eval Minibatch: 100%|██████████| 332/332 [00:21<00:00, 15.21it/s]",
                  "              precision    recall  f1-score   support",
                  "           0       0.32      0.24      0.28       294",
                  "    accuracy                           0.53      2654",
                  "Accuracy: 0.5331574981160513"]
    return lines


def test_an_evaluation_bar_first_drawn_after_training_is_its_test_pass(tmp_path: Path):
    assert verdict_of(tmp_path, _wandb_output(True))["terminal_state"] == "SUCCEEDED"


def test_without_that_bar_the_same_log_is_still_running(tmp_path: Path):
    assert verdict_of(tmp_path, _wandb_output(False))["terminal_state"] == "RUNNING"


def test_an_evaluation_bar_drawn_after_every_epoch_is_no_end(tmp_path: Path):
    lines = []
    for epoch in range(1, 6):
        lines += [f"Epoch {epoch}: 100%|██████████| 1371/1371 [04:36<00:00,  4.95it/s]",
                  f"Training Loss: {1.4 - epoch * 0.2:.4f}",
                  "Eval Minibatch: 100%|██████████| 332/332 [00:21<00:00, 15.21it/s]",
                  f"Validation Loss: {1.28 - epoch * 0.01:.4f}"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- A score the script prints and never computes ---------------------------------------------


def _tstcc(valid_loss: str) -> list[str]:
    # TS-TCC's self-supervised mode: no classifier, so its accuracies print 0.0000, and its
    # validation loss too
    lines = ["Training started ....", ""]
    for epoch in range(1, 41):
        lines += [f"Epoch : {epoch}",
                  f"Train Loss     : {13.5 - epoch * 0.1:.4f}\t | \tTrain Accuracy     : 0.0000",
                  f"Valid Loss     : {valid_loss}\t | \tValid Accuracy     : 0.0000", ""]
    return [*lines, "################## Training is Done! #########################"]


def test_a_score_of_zero_beside_its_splits_loss_of_zero_is_a_placeholder(tmp_path: Path):
    artifact = verdict_of(tmp_path, _tstcc("0.0000"))
    assert "not-learning" not in {kind for kind, _ in _open(artifact)}
    assert artifact["decision"] == "GO"


def test_a_real_validation_loss_beside_an_accuracy_of_zero_is_judged(tmp_path: Path):
    artifact = verdict_of(tmp_path, _tstcc("2.3026"))
    assert "not-learning" in {kind for kind, _ in _open(artifact)}


# -- What the whole corpus caught as these went in ---------------------------------------------


@pytest.mark.parametrize(("batch", "final"), [("160/165", False), ("165/165", True)])
def test_a_last_epochs_row_part_way_through_its_batches_is_not_its_last(batch, final):
    # Towards-Realtime-MOT's table: `29/29  160/165 …`, a row every 40 batches, the last
    # five batches of the last epoch still to come; its row at `165/165` would end it
    shapes = ShapeReader()
    for line in ("Epoch       Batch       box      conf        id     total",
                 f"29/29      {batch}   0.00712   0.00652      4.59     -13.9"):
        shapes.note(line)
        shapes.read(line)
    assert shapes.final_row is final


def test_the_rule_under_a_new_header_is_no_closing_border(tmp_path: Path):
    # a cost-aware LSTM's table behind a logger's head, relaunched: its header and the
    # rule under it again, then epoch 1
    head = "2026-04-07 22:55:52,418 - INFO - "

    def table(epochs: int) -> list[str]:
        rows = [f"{head}Epoch    | Loss    | Acc     | Prec    | FPR     | FNR    ",
                f"{head}{'-' * 65}"]
        return rows + [f"{head}{e:<8} | {0.48 - e / 1000:.4f}  | {77 + e / 100:.2f}%  | "
                       f"0.59    | 0.01    | 0.95   " for e in range(1, epochs + 1)]

    artifact = verdict_of(tmp_path, [*table(40), *table(1)])
    assert (artifact["terminal_state"], artifact["decision"]) == ("RUNNING", "CONDITIONAL")


def test_a_sentence_is_no_tables_header(tmp_path: Path):
    # `Saving model and feature extractor` behind a logger's head is no header of the
    # classification report's rows printed later
    head = "2025-04-11 10:03:05,090 - __main__ - INFO - "
    lines = []
    for _run in range(6):
        lines += [f"{head}Training random_forest model...", f"{head}Accuracy: 1.0",
                  f"{head}Saving model and feature extractor", "0 1.00 1.00 1.00 3895",
                  "1 1.00 0.99 1.00 2289"]
    artifact = verdict_of(tmp_path, lines)
    assert "saving" not in artifact["final_metrics"]


def test_a_csv_whose_words_sort_its_rows_into_kinds_is_not_one_series(tmp_path: Path):
    # a hand-written FedAvg's CSV: `global,test` rows among the clients' training rows
    lines = ["round,client_id,type,loss,accuracy"]
    for rnd in range(1, 15):
        lines += [f"{rnd},{client},train_epoch_1,{1.9 - rnd / 100:.4f},{34 + rnd}"
                  for client in (5, 1, 3)]
        lines.append(f"{rnd},global,test,{2.3 - rnd / 10:.4f},{9 + rnd * 3}")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["final_metrics"].get("loss") != pytest.approx(2.3 - 1.4)


def test_a_loss_term_blown_up_is_divergence_whatever_the_total(tmp_path: Path):
    # bayou's VAE: `loss` leaves its KL out and falls while `KL_loss` runs to 1e15
    lines = []
    for i in range(60):
        kl = 13.2 if i < 20 else 13.2 * 10 ** min(15, (i - 19) / 2)
        lines.append(f"{1920 + i * 5}/191900 (epoch 1) loss: {8.2 - i / 100:.3f}, gen_loss: "
                     f"{8.05 + i / 100:.3f}, KL_loss: {kl:.3f}, ")
    artifact = verdict_of(tmp_path, lines)
    assert ("divergence", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_loss_term_that_starts_large_is_not_blown_up(tmp_path: Path):
    lines = [f"step {i} loss: {0.9 - i / 1000:.4f}, recon_loss: {3e8 + i * 1e6:.1f}"
             for i in range(1, 60)]
    assert "divergence" not in {kind for kind, _ in _open(verdict_of(tmp_path, lines))}


# -- sealed-122 and sealed-123, after their blind score ---------------------------------------


def test_rsyslogs_escaped_tabs_are_tabs(tmp_path: Path):
    # SageMaker's built-in XGBoost as CloudWatch forwards it: `#011` for each tab
    lines = ["INFO:sagemaker:Creating training-job with name: xgboost-2019-04-30-14-17-48-879",
             "2019-04-30 14:20:44 Training - Training image download completed. Training in "
             "progress.."]
    lines += [f"[{r}]#011train-error:{0.28 - r / 1000:.6f}#011validation-error:"
              f"{0.29 - r / 1100:.4f}" for r in range(60)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["total_steps"] == 59
    assert "validation_error" in artifact["final_metrics"]


def test_a_plan_of_steps_named_for_the_model_it_trains(tmp_path: Path):
    # Lip2Wav's hyperparameter dump (`tacotron_train_steps: 2500`), then its step lines
    lines = ["Training with hyperparameters:", "    summary_interval:       2500",
             "    tacotron_train_steps:   2500", "    tacotron_warmup_train_steps: 100"]
    lines += [f"Step {s:7d} [1.067 sec/step, loss={1.5 - s / 5000:.5f}, avg_loss="
              f"{1.5 - s / 5200:.5f}]" for s in range(1, 2501)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["target_steps"] == 2500
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_ctrl_c_echo_in_bytes_that_are_no_text_is_no_stop(tmp_path: Path):
    # a binary file given as the log: its bytes decode to U+FFFD around the `^C` before a
    # capital that random bytes make now and then
    garbage = ["\ufffdPNG\ufffd\ufffd\x13", "^CN5h\ufffd\ufffd1\ufffdCV\ufffd(-/+",
               "F\ufffd:\ufffdyT\ufffdH\ufffd^C"] * 3
    artifact = verdict_of(tmp_path, garbage)
    assert (artifact["terminal_state"], artifact["decision"]) == ("RUNNING", "CONDITIONAL")


def test_a_lone_ctrl_c_echo_is_still_the_stop(tmp_path: Path):
    lines = [f"step {s} loss {2 - s / 100:.3f}" for s in range(1, 40)]
    assert verdict_of(tmp_path, [*lines, "^C"])["terminal_state"] == "CANCELLED"

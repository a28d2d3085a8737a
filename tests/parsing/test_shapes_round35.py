"""Shapes read and judged since the thirty-fifth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.events import find_events
from babysit.parsing.parser import LogParser
from babysit.rules.loss_parts import sums_its_terms
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- A loss printed as the sum of its terms -------------------------------------------------


def _sgl_epochs(epochs: int) -> list[str]:
    """NeuRec's SGL: a BPR term that learns, an InfoNCE term that sits near ln N by its
    nature (N negatives), a regulariser; their sum is the printed loss."""
    lines = []
    for e in range(1, epochs + 1):
        bpr, nce, reg = 0.6931 * 0.9 ** e, 6.3374 + 0.0002 * e, 0.0023 * e
        lines.append(f"2022-04-13 01:23:25.892: [iter {e} : loss : {bpr + nce + reg:.4f} = "
                     f"{bpr:.4f} + {nce:.4f} + {reg:.4f}, time: 362.553843]")
        lines.append(f"2022-04-13 01:23:39.990: epoch {e}:\t{0.002 + 0.001 * e:.8f}  "
                     f"\t0.00507033  \t0.00407281  ")
    return lines


def test_the_terms_of_a_summed_loss_are_read_beside_it():
    record = LogParser().feed("2022-04-13 01:23:25.892: [iter 1 : loss : 7.0305 = 0.6931 + "
                              "6.3374 + 0.0000, time: 362.553843]")
    assert record is not None
    assert record.metrics["loss"] == 7.0305
    assert [record.metrics[f"loss_term{i}"] for i in (1, 2, 3)] == [0.6931, 6.3374, 0.0]


def test_a_summed_loss_near_ln_1000_is_no_guess(tmp_path: Path):
    # 7.03 began near ln 1000 = 6.91 and stays within 7 % of it: judged as one
    # cross-entropy it would be a model that guesses; it is three objectives' total.
    lines = [*_sgl_epochs(26), "2022-04-13 03:58:15.441: Early stopping is trigger at epoch: 26"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_loss_is_a_sum_only_when_its_terms_add_up_to_it():
    assert sums_its_terms({"loss": 1.0, "loss_cls": 0.6, "loss_bbox": 0.4}, 1.0)
    # the same loss averaged another way, and one term alone: no sum
    assert not sums_its_terms({"loss": 1.0, "avg_loss": 1.2, "loss_cls": 0.6}, 1.0)
    assert not sums_its_terms({"loss": 1.0, "loss_cls": 1.0}, 1.0)
    # an equals sign with no plus is an assignment, not a sum
    assert "loss_term1" not in (LogParser().feed("step 3 loss = 2.5 lr = 0.1") or
                                LogParser().feed("step 3")).metrics


# -- Per-class recalls that find one class only ---------------------------------------------


def _change_detection(epochs: list[tuple[float, float]]) -> list[str]:
    """ChangeFormer's epoch summary and its per-class scores (recall_0, recall_1)."""
    lines = []
    for n, (r0, r1) in enumerate(epochs, start=7):
        lines += [f"Is_training: True. [{n},199][401,445], imps: 158.48, est: 38.16h, "
                  f"G_loss: 0.78755, running_mf1: 0.48860",
                  f"Is_training: True. Epoch {n} / 199, epoch_mF1= 0.49293",
                  f"acc: 0.95384 miou: 0.47930 mf1: 0.49293 iou_0: 0.95383 iou_1: {r1 / 2:.5f} "
                  f"F1_0: 0.97637 F1_1: {r1 * 2:.5f} precision_0: 0.95421 precision_1: 0.35737 "
                  f"recall_0: {r0:.5f} recall_1: {r1:.5f} ", ""]
    return lines


def test_recalls_that_find_one_class_only_are_a_model_that_learned_nothing(tmp_path: Path):
    artifact = verdict_of(tmp_path, _change_detection([(0.99982, 0.00238), (0.99958, 0.00481)]))
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker", artifact["anomalies_detected"]
    assert artifact["decision"] == "NO-GO"


def test_one_record_at_one_class_or_recalls_that_tell_classes_apart_say_nothing(tmp_path: Path):
    # the first epoch of an imbalanced task may find no change yet; a model that finds
    # a fifth of the changed pixels has learned something
    for epochs in ([(0.99982, 0.00238), (0.985, 0.21)], [(0.97, 0.3), (0.99, 0.45)]):
        artifact = verdict_of(tmp_path, _change_detection(epochs))
        assert not [a for a in artifact["anomalies_detected"]
                    if a["type"] == "not-learning" and "resolved" not in a["description"]]


# -- A stop by the run's own handler, in its words ------------------------------------------


def test_a_handlers_word_that_it_caught_an_interrupt_is_a_cancel():
    for line in ("Interrupt signal caught. Closing gracefully.",
                 "2024-07-31 08:03:00 - LOGS   - Keyboard interruption. Exiting from early "
                 "training",
                 "Caught SIGTERM, saving a checkpoint and exiting",
                 "Exiting from early training"):
        assert any(e.kind is EventKind.STOPPED_BY_SIGNAL for e in find_events(line)), line
    for line in ("Received signal at step 3", "set keyboard_interrupt_handler = True",
                 "no signal caught"):
        assert not any(e.kind is EventKind.STOPPED_BY_SIGNAL for e in find_events(line)), line


# -- A plan said with a dot and a purpose ---------------------------------------------------


def test_max_epochs_for_training_is_the_plan(tmp_path: Path):
    # CoreNet: `Max. epochs for training: 30`, epochs counted from 0, then its timer.
    lines = ["2024-07-30 12:33:11 - LOGS   - Max. epochs for training: 30"]
    for e in range(30):
        lines += [f"2024-07-30 12:36:08 - INFO   - Training epoch {e}",
                  f"2024-07-30 12:36:09 - LOGS   - Epoch: {e:3d} [ {100 * e + 1:7d}/10000000], "
                  f"loss: {{'classification': {6.5 / (e + 1):.4f}, 'neural_augmentation': "
                  f"0.2636, 'total_loss': {6.8 / (e + 1):.4f}}}, LR: [1e-06, 1e-06], "
                  f"Avg. batch load time: 1.2, Elapsed time: 176.11"]
    lines.append("2024-07-30 12:59:27 - LOGS   - Training took 00:26:15.71")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


# -- A loss back above where a step-less log began ------------------------------------------


def test_a_csv_loss_that_ends_above_its_first_value_has_undone_the_training(tmp_path: Path):
    # Keras' CSVLogger under repeated fit(epochs=1) calls: every row is epoch 0, no step;
    # the file's header row says the log begins with the run.
    rows = [0.57, 0.49, 0.42, 0.36] + [0.33 + 0.002 * (i % 5) for i in range(40)] \
        + [0.80 + 0.02 * (i % 4) for i in range(30)]
    lines = ["epoch,loss,model_1_loss"] + [f"0,{v:.6f},{v / 2:.6f}" for v in rows]
    artifact = verdict_of(tmp_path, lines)
    div = [a for a in artifact["anomalies_detected"] if a["type"] == "divergence"]
    assert div and div[-1]["severity"] == "blocker", artifact["anomalies_detected"]


# -- A header in a banner; an accuracy held to the millionth --------------------------------


def _bert_epochs(accuracies: list[float]) -> list[str]:
    """A BERT classifier's hand loop: an epoch line, a banner naming the columns, a row."""
    lines = []
    for n, acc in enumerate(accuracies, start=1):
        lines += [f"Epoch: {n:02d} | Epoch Time: 0m 57s",
                  "*******train_loss,train_acc,valid_loss,valid_ac********** ",
                  f"{5.2 - 0.03 * n}\t{2.79 + 0.1 * (n % 3)}\t{4.977 - 0.004 * n}\t{acc}"]
    return lines


def test_a_header_in_a_banner_names_the_row_under_it():
    records = _records(_bert_epochs([3.6057692021131516] * 3))
    assert set(records[-1].metrics) >= {"train_loss", "valid_loss", "valid_ac"}
    assert records[-1].epoch == 3


def test_an_accuracy_held_to_the_millionth_from_the_first_epoch_is_a_blocker(tmp_path: Path):
    # 15 of 416 right at each of seven epochs: one class for everything
    artifact = verdict_of(tmp_path, _bert_epochs([3.6057692021131516] * 7))
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker", artifact["anomalies_detected"]
    # the same accuracy printed coarsely may be a small set's plateau: not at once
    coarse = verdict_of(tmp_path, _bert_epochs([3.6] * 7))
    assert not [a for a in coarse["anomalies_detected"] if a["severity"] == "blocker"]


def test_a_split_cut_short_keeps_its_figures_that_splits():
    # bentrevett's tutorials: `Val. Loss` is the validation loss, not the training loss
    records = _records(["Epoch: 01 | Epoch Time: 0m 57s",
                        "\tTrain Loss: 0.693 | Train Acc: 50.12%",
                        "\t Val. Loss: 0.690 |  Val. Acc: 51.10%"])
    assert records[-1].metrics == {"val_loss": 0.69, "val_acc": 51.1}
    assert records[-1].epoch == 1


# -- Fields with no sign between name and number --------------------------------------------


def _qmix(test_rewards: list[float]) -> list[str]:
    return ["map 8m", "epoch 20000"] + [
        f"epoch: {100 * i} avg_reward: {0.02 + 0.2 * i} avg_winrate: 0.0 "
        f"test_avg_reward {r} test_avg_winrate {min(1.0, r / 25):.2f}"
        for i, r in enumerate(test_rewards)]


def test_snake_case_fields_without_a_colon_are_read_beside_those_with_one():
    record = _records(_qmix([4.3765625]))[-1]
    assert record.metrics["test_avg_reward"] == 4.3765625
    assert record.metrics["avg_reward"] == 0.02


def test_an_evaluation_back_where_the_run_began_has_lost_what_it_learned(tmp_path: Path):
    artifact = verdict_of(tmp_path, _qmix([4.38, 17.5, 15.9, 17.3, 16.6, 15.2, 14.1, 16.4, 11.4,
                                           6.28, 4.59, 5.31]))
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"
             and a["severity"] == "blocker"]
    assert found and "back where the run's first evaluation had it" in found[0]["description"]
    # one that fell back only part of the way has not
    partial = verdict_of(tmp_path, _qmix([4.38, 17.5, 15.9, 17.3, 16.6, 15.2, 14.1, 16.4, 11.4,
                                          9.8, 9.5, 9.9]))
    assert not [a for a in partial["anomalies_detected"] if a["type"] == "eval-degradation"
                and a["severity"] == "blocker"]


# -- A save after a long stretch of records with none ---------------------------------------


def test_a_save_naming_no_step_after_thousands_of_records_ends_the_loop(tmp_path: Path):
    # SEASS: one epoch of 3,750 records, then its only save
    lines = [f"2018-08-12 17:23:28,694 - INFO - epoch 0, step {10 * i}, training loss = "
             f"{3.4 + 0.3 * ((i * 7) % 5 - 2) / 2:.6f}, validation loss = 3.40"
             for i in range(1, 1201)]
    lines.append("2018-08-12 22:34:33,976 - INFO - Model saved in dir ./models")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "ENDED"
    # after a few hundred, a save is as likely the first of a cadence
    assert verdict_of(tmp_path, lines[:300] + lines[-1:])["terminal_state"] == "RUNNING"


# -- Sealed-99's shapes ---------------------------------------------------------------------


def test_a_row_with_its_time_in_brackets_is_named_by_the_narrower_header():
    # fastai v1's text table: the epoch's time at the end of each row, unnamed
    lines = ["Total time: 06:39", "epoch  train_loss  valid_loss  error_rate"]
    lines += [f"{e:<7d}{1.5 / e:.6f}    {1.0 / e:.6f}    {0.5 / e:.6f}    (00:1{e % 10})"
              for e in range(1, 6)]
    record = _records(lines)[-1]
    assert record.epoch == 5
    assert record.metrics == {"train_loss": 0.3, "valid_loss": 0.2, "error_rate": 0.1}


def test_counters_in_brackets_named_by_a_tuple_after_them():
    record = _records(["Loss [31, 100](epoch, minibatch):  3.2093122029304504"])[-1]
    assert record.epoch == 31 and record.metrics["loss"] == 3.2093122029304504


def test_a_stop_that_names_its_best_and_a_spaced_training_time_end_the_run(tmp_path: Path):
    epochs = [f"Epoch {e} | Train loss: {50 / e:.6f} | Val loss: {26 / e + 9:.6f} | "
              f"epoch time: 2.57s" for e in range(1, 40)]
    stopped = verdict_of(tmp_path, [*epochs, "Stopping. Best val: 9.902495 at epoch 32"])
    assert (stopped["decision"], stopped["terminal_state"]) == ("GO", "SUCCEEDED")
    for line in ("Training time:   321.2383 s", "Training time: 0:13:00"):
        assert any(e.kind is EventKind.COMPLETED for e in find_events(line)), line
    assert not find_events("Epoch 3 training time: 12.3s, loss 0.2")


def test_no_positive_found_at_a_threshold_is_no_failure_of_a_model_that_ranks(tmp_path: Path):
    # TranAD's threshold search ends one fold on F1 0, then that fold's AUC is 0.92
    lines = [f"Epoch {e},\tL1 = {0.0003 / e:.6f}" for e in range(1, 11)]
    lines += ["Training time:   321.2383 s", "re: 0.0", "fa: 0", "F1: 0",
              "AUC 0.924812030075188"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"
                and "resolved" not in a["description"]], artifact["anomalies_detected"]


def _curriculum(switch: bool) -> list[str]:
    lines = []
    for e in range(0, 300, 10):
        if e == 120 and switch:
            lines.append("Curriculum: Switching loss function from HuberLoss to WeightedMSELoss")
        scale = 2.6 if e >= 120 else 1.0
        lines.append(f"Epoch {e}, Train Loss: {scale * (0.007 + 0.02 / (e + 1)):.6f}, "
                     f"Val Loss:{scale * (0.0068 + 0.007 / (e + 1)):.6f}")
    return [*lines, "Epoch 299, Train Loss: 0.018089, Val Loss:0.016338"]


def test_an_evaluation_loss_starts_afresh_when_the_run_changes_its_loss(tmp_path: Path):
    artifact = verdict_of(tmp_path, _curriculum(switch=True))
    assert not [a for a in artifact["anomalies_detected"] if a["severity"] == "blocker"], \
        artifact["anomalies_detected"]


def test_a_last_print_off_the_loops_cadence_is_its_last_index(tmp_path: Path):
    # `if epoch % 10 == 0 or epoch == epochs - 1`: 0, 10, … 290, then 299
    assert verdict_of(tmp_path, _curriculum(switch=True))["terminal_state"] == "ENDED"
    assert verdict_of(tmp_path, _curriculum(switch=True)[:-1])["terminal_state"] == "RUNNING"


# -- Sealed-100's shapes --------------------------------------------------------------------


def test_a_detectors_map_with_its_box_or_mask_mark_is_an_evaluation():
    from babysit.rules.eval_names import evaluation_direction

    assert evaluation_direction("metrics/mAP50-95(B)") == 1
    assert evaluation_direction("metrics/map50(m)") == 1
    assert evaluation_direction("heatmap") == 0


def test_a_sensitivity_of_0_beside_a_specificity_of_1_is_one_class_for_everything(
        tmp_path: Path):
    # a U-Net that marks no lesion at any pixel, on training and validation alike
    lines = []
    for e in range(1, 5):
        lines += [f"Epoch [{e}/50], Loss: {21.7 - e:.4f}, ",
                  "[Training] Acc: 0.9222, SE: 0.0000, SP: 0.9978, PC: 0.0000, F1: 0.0000",
                  "[Validation] Acc: 0.9511, SE: 0.0000, SP: 0.9993, PC: 0.0000, F1: 0.0000"]
    found = [a for a in verdict_of(tmp_path, lines)["anomalies_detected"]
             if a["severity"] == "blocker"]
    assert any("one class for everything" in a["description"] for a in found), found
    learning = [line.replace("SE: 0.0000", "SE: 0.4100").replace(
        "PC: 0.0000, F1: 0.0000", "PC: 0.3800, F1: 0.3900") for line in lines]
    assert not [a for a in verdict_of(tmp_path, learning)["anomalies_detected"]
                if a["severity"] == "blocker"]


# -- Sealed-101's shapes --------------------------------------------------------------------


def test_a_loss_that_falls_to_exactly_0_in_one_step_and_stays_is_no_learning(tmp_path: Path):
    # Mini-Gemini under the Hugging Face Trainer, two ranks printing each record
    lines = []
    for n, loss in enumerate([1.4138] + [0.0] * 9, start=1):
        record = f"{{'loss': {loss}, 'learning_rate': {6e-08 * n:.6g}, 'epoch': 0.0}}"
        lines += [record, record]
    found = [a for a in verdict_of(tmp_path, lines)["anomalies_detected"]
             if a["type"] == "not-learning" and a["severity"] == "blocker"]
    assert found and "fell from 1.414 to exactly 0" in found[0]["description"]
    # a loss that eases down to a printed 0 over many steps has converged, not collapsed
    easing = [f"{{'loss': {round(0.12 * 0.5 ** n, 4)}, 'epoch': {n / 40:.2f}}}"
              for n in range(30)]
    assert not [a for a in verdict_of(tmp_path, easing)["anomalies_detected"]
                if a["severity"] == "blocker"]


def test_a_training_time_after_a_loggers_head_is_the_end_of_training():
    assert any(e.kind is EventKind.COMPLETED for e in find_events(
        "2023-04-18 14:15:49,759 [INFO] Training time 20:29:42"))


def test_a_settings_section_ends_where_the_run_starts_its_work():
    # LAVIS: a banner over the model's attributes as JSON, then the logger's start-up and
    # the first epoch's MetricLogger lines, which must not be read as settings
    lines = ["======  Model Attributes  ======", "{", '    "arch": "blip2_opt",',
             '    "max_epoch": 5,', "}",
             "2023-04-17 17:45:00,792 [INFO] Building datasets...",
             "2023-04-17 17:46:07,647 [INFO] Start training"]
    lines += [f"Train: data epoch: [0]  [{n:4d}/4427]  eta: 4:01:09  lr: 0.000001  "
              f"loss: {1.9 - n / 10000:.4f}  time: 3.2654  data: 0.0000  max mem: 21356"
              for n in range(0, 1000, 50)]
    parser = LogParser()
    records = [r for r in parser.feed_lines(lines) if r.metrics.get("loss") is not None]
    assert len(records) >= 18 and records[-1].epoch is not None and records[-1].epoch < 1
    assert parser.plan.epochs == 5

"""Shapes read and judged since the thirty-second session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.events import find_events
from babysit.rules.eval_trends import within_counting_noise
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- A log written as Markdown --------------------------------------------------------------

_TABLE_HEAD = ["\t\t|  metric  |  head  |  tail  |  mean  |", "\t\t|  ----  |  ----  |  ----  |"
               "  ----  |"]


def _table(mrr: float, hits: float) -> list[str]:
    return [*_TABLE_HEAD,
            f"\t\t|  mean reciprocal rank (MRR)  |  `{mrr - 0.05}`  |  `{mrr + 0.05}`  |  "
            f"`{mrr}`  |",
            f"\t\t|  mean rank (MR)  |  `420.5`  |  `190.25`  |  `{1000 * (1 - mrr)}`  |",
            f"\t\t|  hits@10  |  `{hits - 0.1}`  |  `{hits + 0.1}`  |  `{hits}`  |"]


def _compgcn(epochs: int, last: int) -> list[str]:
    lines = ["-----", "### Running - `2021-11-10 08:02:58`", "#### Configurations",
             "- load data from `../data/FB15K237/`", "- new training",
             "- learning rate: `0.0001`", "- number of bases: `-1`",
             f"- number of epochs: `{epochs}`", "- validation frequency: `1`",
             "- training cluster size: `2`", "- norm: `2`", "#### Preparing Data",
             "- number of entities: `14541`", "#### Model Training and Validation"]
    for e in range(last):
        lines += [f"* epoch {e}",
                  f"\t * loss `{300 / (e + 1):.6f}`, time `2021-11-10 08:{e % 60:02d}:54`",
                  f"\t * validation results (filtered)  at epoch `{e}`",
                  *_table(0.05 + 0.004 * e, 0.1 + 0.006 * e)]
    return lines


def test_inline_code_marks_around_values_are_no_part_of_them():
    records = _records(_compgcn(50, 3))
    losses = [r.metrics["loss"] for r in records if "loss" in r.metrics]
    assert losses == [300.0, 150.0, 100.0]


def test_a_markdown_configuration_heading_opens_a_settings_block():
    records = _records(_compgcn(50, 2))
    assert all("learning_rate" not in r.metrics and "norm" not in r.metrics for r in records)
    assert [r.epoch for r in records if "loss" in r.metrics] == [0.0, 1.0]


def test_a_table_with_a_row_per_metric_gives_each_metric_from_its_sum_column():
    records = _records(_compgcn(50, 2))
    val = {k: v for r in records for k, v in r.metrics.items() if k.startswith("val_")}
    # (the abbreviation in brackets names it; the `mean` column holds it)
    assert round(val["val_mrr"], 6) == 0.054
    assert round(val["val_hits@10"], 6) == 0.106
    assert round(val["val_mr"], 6) == 946.0


def test_a_table_whose_columns_have_no_sum_gives_no_figure():
    lines = ["validation results", "| metric | head | tail |", "| --- | --- | --- |",
             "| MRR | 0.1 | 0.3 |"]
    assert _records(lines) == []


def test_a_markdown_run_to_its_last_planned_epoch_then_tested_finishes(tmp_path: Path):
    lines = [*_compgcn(20, 20), "#### testing", "- testing results (filtered)",
             *_table(0.13, 0.25), "-----"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


# -- An epoch's header with its plan in brackets ---------------------------------------------


def _pointnet(planned: int, last: int) -> list[str]:
    head = "2024-04-27 20:37:{:02d},{:03d} - Model - INFO - "
    lines = [head.format(0, 1) + f"Namespace(model='pointnet2_part_seg_msg', batch_size=8, "
             f"epoch={planned}, learning_rate=0.001, optimizer='Adam')"]
    for e in range(1, last + 1):
        acc, miou = 0.5 + 0.4 * e / planned, 0.1 + 0.6 * e / planned
        at = head.format(e % 60, e % 1000)
        lines += [at + f"Epoch {e} ({e}/{planned}):", at + "Learning rate:0.001000",
                  at + f"Train accuracy is: {acc + 0.05:.5f}",
                  at + f"eval mIoU of Teeth          {miou:.6f}",
                  at + f"Epoch {e} test Accuracy: {acc:.6f}  Class avg mIOU: {miou:.6f}   "
                       f"Inctance avg mIOU: {miou:.6f}",
                  at + f"Best accuracy is: {acc:.5f}", at + f"Best class avg mIOU is: {miou:.5f}"]
    return lines


def test_an_epoch_header_with_its_plan_in_brackets_places_the_records():
    records = _records(_pointnet(40, 3))
    assert {r.epoch for r in records if "test_accuracy" in r.metrics} == {1.0, 2.0, 3.0}


def test_a_run_whose_best_so_far_closes_each_epoch_finishes_at_its_last(tmp_path: Path):
    artifact = verdict_of(tmp_path, _pointnet(30, 30))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_the_same_run_stopped_short_of_its_plan_is_still_running(tmp_path: Path):
    artifact = verdict_of(tmp_path, _pointnet(30, 12))
    assert artifact["terminal_state"] == "RUNNING"


# -- A launcher's last word on its job -------------------------------------------------------


def test_a_launchers_job_state_is_the_runs_terminal_state():
    def state(line: str) -> list[str]:
        return [e.detail for e in find_events(line) if e.kind.value == "job-state"]

    assert state("torchx 2023-03-07 02:44:57 INFO     Job finished: SUCCEEDED") == ["SUCCEEDED"]
    assert state("torchx 2023-03-07 02:44:57 INFO     Job finished: FAILED") == ["FAILED"]
    assert state("Job finished (status: SUCCEEDED).") == ["SUCCEEDED"]
    assert state("Job 'raysubmit_9Hc3' failed") == ["FAILED"]
    assert state("the job finished: see the summary") == []


def test_a_torchx_job_that_succeeded_after_its_epochs_is_go(tmp_path: Path):
    lines = ["Epoch 1, average loss 3.7459120750427246", "Epoch 50, average loss 1.61123",
             "Epoch 100, average loss 1.4439857006072998", "",
             "Epoch 1, metrics {'Recall@1': 0.4000000059604645, 'NDCG@10': 0.6198346614837646}",
             "Epoch 50, metrics {'Recall@1': 0.30000001192092896, 'NDCG@10': 0.5314474105834961}",
             "Epoch 100, metrics {'Recall@1': 0.20000000298023224, 'NDCG@10': 0.5185484290122986}",
             "", "Test, metrics {'Recall@1': 0.10000000149011612, 'NDCG@10': 0.44530197978019714}",
             "torchx 2023-03-07 02:44:57 INFO     Job finished: SUCCEEDED"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


# -- A rate counted on a few items -----------------------------------------------------------


def test_a_rate_counted_on_ten_items_falling_by_two_is_within_its_noise():
    values = [0.4000000059604645, 0.30000001192092896, 0.20000000298023224]
    assert within_counting_noise(values, [-v for v in values])


def test_a_rate_counted_on_ten_items_falling_to_nothing_is_not():
    values = [0.9, 0.8, 0.1, 0.0]
    assert not within_counting_noise(values, [-v for v in values])


def test_a_measured_rate_is_no_count():
    values = [0.7643, 0.7512, 0.7031]
    assert not within_counting_noise(values, [-v for v in values])


# -- Settings on one line, splits as percentages, repetitions --------------------------------


def test_a_configuration_printed_as_a_dict_after_its_heading_is_no_record():
    line = ('command line args:  {"arch_sparse_feature_size": 128, "loss_function": "bce", '
            '"loss_threshold": 0.0, "nepochs": 1, "learning_rate": 18.0, "print_freq": 128}')
    records = _records([line] * 4 + [
        "Finished training it 128/128028 of epoch 0, 71.86 ms/it, loss 0.200798, "
        "accuracy 91.445 %"])
    assert [r.metrics.get("loss") for r in records] == [0.200798]


def test_a_split_named_bare_with_a_percentage_is_a_score_not_a_loss():
    records = _records(["Run:0, Epoch: 55, Train: 86.67%, Valid: 84.98%, Test: 81.23% "])
    assert records[0].metrics == {"run": 0.0, "train_score": 86.67, "valid_score": 84.98,
                                  "test_score": 81.23}


def test_repetitions_numbered_on_each_line_are_judged_each_on_its_own(tmp_path: Path):
    lines = []
    for run in range(4):
        for epoch in range(50, 1001, 50):
            valid = 92.5 - 8.0 * 50 / epoch  # each run climbs from its own start
            lines.append(f"Run:{run}, Epoch: {epoch}, Train: {valid + 2:.2f}%, "
                         f"Valid: {valid:.2f}%, Test: {valid - 5:.2f}% ")
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] in ("eval-degradation", "divergence", "not-learning")]


# -- From sealed-84 --------------------------------------------------------------------------


def _fedavg(rounds: int, last: int, losses: list[float] | None = None) -> list[str]:
    lines = ["ID Reset", "ID Generated: 13"]
    for r in range(1, last + 1):
        loss = losses[r - 1] if losses else 2.4 * 0.97 ** r
        lines += [f"Round {r}/{rounds}",
                  "Learner 0..1..2..3..4..5..6..7..8..9..Finish",
                  f"Avg Loss: {loss}, Acc: {min(0.95, 0.1 + r / rounds):.4f}"]
    return lines


def test_a_round_of_a_planned_number_heads_its_block_and_ends_the_plan(tmp_path: Path):
    artifact = verdict_of(tmp_path, _fedavg(40, 40))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    (tmp_path / "short").mkdir()
    assert verdict_of(tmp_path / "short", _fedavg(40, 25))["terminal_state"] == "RUNNING"


def test_an_average_loss_climbing_far_above_its_start_is_divergence(tmp_path: Path):
    losses = [2.4, 7.4, 10.4, 11.4, 11.1, 11.9, 12.8, 12.5] + [12.6 + 0.1 * i for i in range(32)]
    artifact = verdict_of(tmp_path, _fedavg(40, 40, losses))
    assert artifact["decision"] == "NO-GO"
    assert "divergence" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_training_phase_announced_then_its_model_saved_then_tested_finished(tmp_path: Path):
    at = "2022-03-31/22:45:{:02d}\t\t"
    lines = [at.format(45) + "Train data samples: 5216", at.format(45) + "Creating model..",
             at.format(47) + "Model created..", at.format(47) + "Training model..",
             at.format(48) + "Model saved..",
             at.format(50) + "loss: 0.7977666854858398, Accuracy: 0.8942307829856873"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    # the save with nothing after it may be a periodic checkpoint's: no end
    (tmp_path / "cut").mkdir()
    assert verdict_of(tmp_path / "cut", lines[:-1])["terminal_state"] == "RUNNING"


def test_a_classifier_at_its_majority_class_on_every_evaluation_is_not_learning(tmp_path: Path):
    head = "2026-04-18 19:{:02d}:11,085 [INFO] "
    lines = []
    for epoch in range(1, 31):
        tn = (0, 54, 3, 5, 1)[epoch % 5]
        fp = 54 - tn
        fn = (0, 80, 2, 0, 1)[epoch % 5]
        tp = 80 - fn
        loss = 0.08 - 0.001 * epoch
        lines += [head.format(epoch) + f"Epoch {epoch:03d} | Total Loss: {loss:.4f}",
                  head.format(epoch) + f"Acc: {(tp + tn) / 134:.4f} | CM: TN={tn}, FP={fp}, "
                                       f"FN={fn}, TP={tp}"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert "larger class" in " ".join(a["description"] for a in artifact["anomalies_detected"]
                                      if a["type"] == "not-learning")


def test_a_classifier_well_above_its_majority_class_is_not_flagged(tmp_path: Path):
    lines = []
    for epoch in range(1, 31):
        right = min(95 + epoch, 125)
        tp, tn = right * 80 // 134, right - right * 80 // 134
        lines += [f"Epoch {epoch:03d} | Total Loss: {0.08 - 0.001 * epoch:.4f}",
                  f"Acc: {right / 134:.4f} | CM: TN={tn}, FP={54 - tn}, FN={80 - tp}, TP={tp}"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if "larger class" in a["description"]]


# -- From sealed-85 --------------------------------------------------------------------------


def test_an_epoch_count_recipes_set_with_its_schedule_at_its_floor_finished(tmp_path: Path):
    import json
    import math

    lines = [json.dumps({"train_lr": 1.5e-4 * 0.5 * (1 + math.cos(math.pi * e / 400)) + 1e-9,
                         "train_loss": 1.2 / (1 + e / 20), "epoch": e}) for e in range(400)]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_counter_joined_to_its_number_by_a_dash_is_the_counter():
    records = _records(["Epoch-10 lr: 2.5e-05", "epoch 10 training time: 1381.828",
                        "model_epoch-10.pth saved"])
    assert (records[0].epoch, records[0].metrics) == (10.0, {"lr": 2.5e-05})


def test_a_written_submission_and_a_folds_mean_close_their_runs():
    from babysit.parsing.closing import sums_up_folds

    assert sums_up_folds("cv_score_fold_mean: 0.7807215234951743")
    assert sums_up_folds("The averaged accuracy of 5 folds is 0.957")
    assert not sums_up_folds("Fold 3 accuracy: 0.9475")


def _folds(folds: int, rounds: int) -> list[str]:
    lines = []
    for fold in range(1, folds + 1):
        lines.append(f"Fold {fold}")
        for i in range(100, rounds + 1, 100):
            valid = 0.70 + 0.03 * fold + 0.2 / (i / 100)  # each fold its own level
            lines.append(f"[{i}]\ttraining's rmse: {0.9 - i / 20000:.6f}\t"
                         f"valid_1's rmse: {valid:.6f}")
    return [*lines, f"cv_score_fold_mean: {0.78:.16f}"]


def test_each_folds_training_is_judged_on_its_own_and_the_folds_mean_ends_it(tmp_path: Path):
    artifact = verdict_of(tmp_path, _folds(6, 2000))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"]


def _darts(epochs: int, last: int) -> list[str]:
    head = "04/28 04:{:02d}:15 PM | "
    lines = [head.format(0), head.format(0) + "Parameters:", head.format(0) + "ALPHA_LR=0.0003",
             head.format(0) + f"EPOCHS={epochs}", head.format(0) + "W_LR=0.025", head.format(0),
             head.format(0) + "Logger is set - training start"]
    for e in range(1, last + 1):
        at = head.format(e % 60)
        loss = 2.3 / (1 + e / 5)
        for step in range(0, 356, 50):
            lines.append(at + f"Train: [{e:2d}/{epochs}] Step {step:03d}/355 Loss {loss:.3f} "
                              f"Prec@(1,5) (55.0%, 90.0%)")
        lines.append(at + f"Train: [{e:2d}/{epochs}] Final Prec@1 55.0000%")
        for step in range(0, 89, 40):
            lines.append(at + f"Valid: [{e:2d}/{epochs}] Step {step:03d}/088 Loss "
                              f"{loss * (2 if step < 80 else 1.1):.3f} Prec@(1,5) (50.0%, 90.0%)")
        lines.append(at + f"Valid: [{e:2d}/{epochs}] Step 088/088 Loss {loss * 1.1:.3f} "
                          f"Prec@(1,5) (50.0%, 90.0%)")
        lines.append(at + f"Valid: [{e:2d}/{epochs}] Final Prec@1 50.0000%")
    return lines


def test_a_darts_search_reads_its_phase_labelled_epochs_and_steps():
    records = _records(_darts(50, 2))
    train = [r for r in records if "loss" in r.metrics]
    # (placed in the run: the plan is its epochs times the epoch's steps)
    assert (train[0].step, train[0].target_steps) == (0, 50 * 355)
    assert train[-1].step == 355 + 350
    assert "alpha_lr" not in {k for r in records for k in r.metrics}  # settings, no records
    val = [r.metrics["val_loss"] for r in records if "val_loss" in r.metrics]
    assert len(val) == 2  # the pass's last batch only, once an epoch


def test_a_darts_search_to_its_last_planned_epoch_finishes(tmp_path: Path):
    artifact = verdict_of(tmp_path, _darts(20, 20))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_line_of_name_number_pairs_is_read_whole_with_its_loops_epoch():
    records = _records([f"arch_epoch {e:03d} top1_acc 0.90{e} top5_avg_acc 0.88{e} baseline 0.80"
                        for e in range(3)])
    assert [r.epoch for r in records] == [0.0, 1.0, 2.0]
    assert records[0].metrics["top1_acc"] == 0.9


def test_a_data_loader_worker_exiting_unexpectedly_is_the_runs_death(tmp_path: Path):
    lines = [f"[2024-09-23 13:{m:02d}:52] Epoch {m} - Training Loss: {0.9 - m / 50:.4f}, "
             f"Training Accuracy: {50 + m:.2f}" for m in range(1, 11)]
    lines.append("[2024-09-23 13:55:18] Error: DataLoader worker (pid(s) 1142198) exited "
                 "unexpectedly")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")


def test_a_run_started_again_and_again_untrained_is_a_crash_loop(tmp_path: Path):
    artifact = verdict_of(tmp_path, ["========== fold: 0 training =========="] * 4)
    # high, not a blocker: what the starts printed may be training in a shape not read
    assert artifact["decision"] == "CONDITIONAL"
    assert [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]] == [
        ("crash", "high")]


def test_a_header_printed_before_each_epochs_figures_is_no_new_start(tmp_path: Path):
    lines = []
    for epoch in range(1, 6):
        lines += ["Epoch    GPU_mem   box_loss   cls_loss", f"epoch {epoch} loss {1 / epoch:.3f}"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "crash"]


def test_a_start_that_gets_through_resolves_the_crash_loop(tmp_path: Path):
    start = ["Starting new training run", "Hyperparameters:", "  initial_learning_rate: 0.002"]
    lines = start * 3 + [f"Step {s}: loss={2.0 - s / 100:.3f}" for s in range(1, 40)]
    artifact = verdict_of(tmp_path, lines)
    crash = [a for a in artifact["anomalies_detected"] if a["type"] == "crash"]
    assert crash and all("resolved" in a["description"] for a in crash)
    assert artifact["decision"] != "NO-GO"


# -- From sealed-86 --------------------------------------------------------------------------


def _stylegan(kimg: int, last: int, fid: float = 29.3) -> list[str]:
    lines = ["Loading training set...", f"Training for {kimg} kimg...", ""]
    for tick in range(last + 1):
        lines.append(f"tick {tick:<5d} kimg {4.0 * tick:<8.1f} time {tick * 5}m 0s   sec/tick "
                     f"299.1   sec/kimg 74.92   maintenance 0.1    cpumem 5.42   gpumem 4.37   "
                     f"reserved 6.36   augment 0.338")
    lines += ["Evaluating metrics...",
              '{"results": {"fid50k_full": ' + str(fid) + '}, "metric": "fid50k_full", '
              '"total_time": 457.4, "num_gpus": 2}', "", "Exiting..."]
    return lines


def test_stylegans_ticks_are_its_progress_toward_its_kimg(tmp_path: Path):
    artifact = verdict_of(tmp_path, _stylegan(400, 100))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    (tmp_path / "short").mkdir()
    assert verdict_of(tmp_path / "short", _stylegan(400, 40)[:-4])["terminal_state"] == "RUNNING"


def test_a_distance_below_zero_or_past_any_float32_is_impossible(tmp_path: Path):
    artifact = verdict_of(tmp_path, _stylegan(400, 100, fid=-3.1e68))
    assert "impossible-metric" in {a["type"] for a in artifact["anomalies_detected"]}


def test_an_auc_climbing_from_near_zero_is_no_ranking_turned_backwards(tmp_path: Path):
    lines = []
    for epoch in range(10, 310, 10):
        pck = min(0.97, 0.3 + epoch / 400)
        lines.append(f"Epoch(val) [{epoch}][2/2]    PCK: {pck:.6f}  AUC: "
                     f"{0.01 + epoch / 2700:.6f}  NME: {0.25 - epoch / 1500:.6f}")
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if "backwards" in a["description"]]


# -- From sealed-87 --------------------------------------------------------------------------


def test_an_error_said_to_have_occurred_at_error_level_is_the_runs_death(tmp_path: Path):
    lines = ["2025-07-18 18:10:50,100 - INFO - Loading data from datasets/fly/fly001.npz",
             "2025-07-18 18:10:53,684 - ERROR - An error occurred during execution: [Errno 2] "
             "No such file or directory: 'datasets/fly/fly001_transposed.npz'"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")
    # not at error level, the same words are no failure (a warning's advice)
    (tmp_path / "info").mkdir()
    quiet = verdict_of(tmp_path / "info", [lines[0], lines[1].replace("ERROR", "INFO")])
    assert quiet["terminal_state"] != "FAILED"

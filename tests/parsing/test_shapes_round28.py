"""Shapes read and judged since the twenty-eighth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

import random
from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.events import find_events
from babysit.rules.whole_run import WholeRun
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- An epoch's ending sentence, and an epoch's own batch counter ---------------------------


def test_an_epochs_training_finished_is_a_stage_not_the_run():
    kinds = [e.kind for e in find_events("Epoch: 42 training finished. Time: 301.40s, speed: "
                                         "131.40st/s,  total loss: 276056.44716")]
    assert kinds == [EventKind.NEW_STAGE]
    assert [e.kind for e in find_events("Training finished. Time: 301.40s")] \
        == [EventKind.COMPLETED]


def _ncrf_epoch(epoch: int, level: float, rng: random.Random, dev: float) -> list[str]:
    """One epoch of an NCRF++-style log: a loss summed over windows of 500 instances, the
    count starting again each epoch, and a short last window."""
    lines = [f"Epoch: {epoch}/30", " Learning rate is setted as: 0.015"]
    for instance in range(500, 10001, 500):
        loss = level * rng.uniform(0.95, 1.05)
        lines.append(f"     Instance: {instance}; Time: 3.80s; loss: {loss:.4f}; "
                     f"acc: {instance * 18}.0/{instance * 19}.0=0.9170")
    lines.append(f"     Instance: 10104; Time: 0.88s; loss: {level * 0.2:.4f}; "
                 f"acc: 181872.0/191976.0=0.9168")
    lines += [f"Epoch: {epoch} training finished. Time: 301.40s, speed: 131.40st/s,  "
              f"total loss: {level * 20:.5f}",
              "gold_num =  0  pred_num =  0  right_num =  0",
              f"Dev: time: 4.60s speed: 418.05st/s; acc: {dev:.4f}"]
    return lines


def test_a_loss_blown_up_within_the_epochs_is_divergence_not_each_epoch_a_new_run(
        tmp_path: Path):
    rng = random.Random(3)
    lines: list[str] = []
    for epoch in range(30):
        blown = epoch >= 20
        lines += _ncrf_epoch(epoch, 30000 if blown else 3500, rng,
                             0.08 if blown else 0.93)
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "divergence" and "resolved:" not in a["description"]
               for a in artifact["anomalies_detected"])


def test_the_same_log_whose_loss_holds_raises_no_divergence(tmp_path: Path):
    rng = random.Random(3)
    lines = [line for epoch in range(30) for line in _ncrf_epoch(epoch, 3500, rng, 0.93)]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "divergence"]
    assert artifact["decision"] != "NO-GO"


_PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "public"


def test_a_blow_up_whose_falls_were_single_short_windows_ends_undone(tmp_path: Path):
    # The real log (sealed-61): NCRF++'s CCG supertagger, its summed loss 3.5e3 for fifty
    # epochs, then 3e4-7e4 from epoch 91 to its end, each epoch's short last window (104
    # instances of 500) a fifth of the others; every divergence used to be resolved there.
    log = _PUBLIC / "sealed-61" / ("ncrfpp_ccg_supertag_bilstm_loss_blowup_epoch91_dev_acc_"
                                   "collapse_finished_100.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines())
    assert artifact["decision"] == "NO-GO"
    assert "ended undone" in artifact["summary"]


def test_the_whole_runs_sample_stays_spread_over_the_run():
    sample = WholeRun()
    for value in range(100_000):
        sample.add(float(value))
    assert sample.median() is not None and 40_000 < sample.median() < 60_000
    assert WholeRun().median() is None


# -- Megatron's early fields without a colon; one NaN under a dynamic loss scale ----------

def _megatron_row(step: int, loss: str, scale: float) -> str:
    return (f" iteration {step:8d}/    3000 | elapsed time per iteration (ms): 11052.7 | "
            f"learning rate 9.517E-06 | lm loss {loss} | loss scale {scale} |")


def test_megatron_fields_without_a_colon_are_read():
    records = _records([_megatron_row(400, "6.758929E+00", 64.0)])
    assert records[0].step == 400
    assert records[0].metrics["lm_loss"] == 6.758929
    assert records[0].metrics["loss_scale"] == 64.0
    assert records[0].metrics["learning_rate"] == 9.517e-06


def test_one_nan_under_a_loss_scale_then_a_falling_loss_was_a_skipped_step(tmp_path: Path):
    losses = ["6.76E+00", "6.29E+00", "5.76E+00", "NAN", "5.19E+00", "4.79E+00", "4.45E+00",
              "4.33E+00", "3.98E+00"]
    scales = [64.0, 8.0, 4.0, 4.0, 0.1, 0.1, 0.1, 0.1, 0.2]
    lines = [_megatron_row(400 + 100 * i, loss, scale)
             for i, (loss, scale) in enumerate(zip(losses, scales, strict=True))]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "CONDITIONAL"
    nan = [a for a in artifact["anomalies_detected"] if a["type"] == "nan-inf"]
    assert nan and all("resolved:" in a["description"] for a in nan)


def test_a_second_nan_under_the_loss_scale_stays_open(tmp_path: Path):
    losses = ["6.76E+00", "6.29E+00", "NAN", "5.19E+00", "4.79E+00", "4.45E+00", "NAN",
              "4.33E+00", "3.98E+00", "3.90E+00"]
    lines = [_megatron_row(400 + 100 * i, loss, 4.0) for i, loss in enumerate(losses)]
    assert verdict_of(tmp_path, lines)["decision"] == "NO-GO"


def test_a_nan_without_a_loss_scale_stays_open(tmp_path: Path):
    lines = [f"step={100 * (i + 1)} loss={v}" for i, v in
             enumerate(["6.7", "6.2", "nan", "5.1", "4.7", "4.4", "4.3"])]
    assert verdict_of(tmp_path, lines)["decision"] == "NO-GO"


# -- W&B's footer: the process exited ----------------------------------------------------

def _megatron_excerpt() -> list[str]:
    return ["wandb: 🚀 View run at https://wandb.ai/team/proj/runs/5s8x5mgb",
            *[_megatron_row(i, f"{12.2 - i * 0.1:.6E}", 4096.0) for i in range(1, 61)]]


def test_wandbs_footer_naming_the_run_ends_it_unconfirmed(tmp_path: Path):
    lines = [*_megatron_excerpt(),
             "wandb: 🚀 View run pretrain_30b at: https://wandb.ai/team/proj/runs/5s8x5mgb"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("ENDED", "CONDITIONAL")


def test_wandbs_header_at_start_up_ends_nothing(tmp_path: Path):
    assert verdict_of(tmp_path, _megatron_excerpt())["terminal_state"] == "RUNNING"


# -- One curve per loss name -------------------------------------------------------------

def test_an_epochs_mean_loss_is_not_a_point_of_the_per_step_curve(tmp_path: Path):
    # Time-Series-Library: `iters: 100, epoch: 1 | loss: …` then the epoch's `Train Loss`;
    # a linear model that learned within its first hundred iterations, early-stopped and
    # run five times. Mixed into one curve, the two wandered as one flat series.
    rng = random.Random(5)
    lines: list[str] = []
    for itr in range(5):
        lines.append(f"start training : ETTh1_96_96_NLinear_iter{itr}")
        for epoch in range(1, 11):
            step_loss = 0.37 - 0.003 * epoch + rng.uniform(-0.02, 0.02)
            lines += [f"\titers: 100, epoch: {epoch} | loss: {step_loss:.7f}",
                      f"Epoch: {epoch}, Steps: 132 | Train Loss: "
                      f"{0.41 if epoch == 1 else 0.356 - epoch * 1e-4:.7f} Vali Loss: 0.69 "
                      f"Test Loss: 0.39"]
        lines += [f">>>>>>>testing : ETTh1_96_96_NLinear_iter{itr}", "mse:0.3846, mae:0.3932"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"
                and "resolved:" not in a["description"]]


# -- A detector's per-class validation rows --------------------------------------------------

def test_numbered_classes_under_the_validation_row_are_no_records():
    lines = ["      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size",
             "   398/3999      1.85G    0.03761   0.006081    0.00125          2        320: "
             "100% 8/8 [00:01<00:00,  5.98it/s]",
             "                 Class     Images  Instances          P          R      mAP50   "
             "mAP50-95: 100% 1/1 [00:00<00:00,  4.73it/s]",
             "                   all         30         49      0.942      0.954      0.976  "
             "     0.61",
             *[f"                    {c}         30         10      0.967          1      "
               f"0.995      0.765" for c in (40, 45, 50, 65)]]
    records = _records(lines)
    assert all(r.step is None or r.step < 40 for r in records)
    assert not any("col2" in r.metrics for r in records)


def test_rows_under_a_header_whose_first_column_is_the_class_are_no_records():
    lines = ["label  count  precision  recall", *[f"{c}  {900 + c}  0.9{c}  0.8{c}"
                                               for c in range(10)]]
    assert not any(r.step is not None for r in _records(lines))


# -- From sealed-63 --------------------------------------------------------------------------

def _mmengine_binary(epochs: int, rng: random.Random) -> list[str]:
    """An MMEngine video classifier of two classes stuck at a guess: its loss at ln 2,
    each evaluation one class's share of the set (123 and 139 of 262 clips)."""
    lines = []
    for epoch in range(1, epochs + 1):
        for it in range(20, 360, 20):
            lines.append(f"12/29 19:{epoch:02d}:{it // 10:02d} - mmengine - INFO - Epoch(train)"
                         f"  [{epoch}][{it}/349]  lr: 1.6638e-04  eta: 2:07:40  time: 0.1724  "
                         f"data_time: 0.0038  memory: 7652  grad_norm: 0.2991  loss: "
                         f"{0.693 + rng.uniform(-0.01, 0.01):.4f}  top1_acc: "
                         f"{rng.choice((0.0, 0.3333, 0.6667, 1.0)):.4f}  "
                         f"loss_cls: 0.6926")
        top1 = 0.5038 if epoch == 1 else rng.choice((0.4695, 0.4695, 0.5305))
        lines.append(f"12/29 19:{epoch:02d}:59 - mmengine - INFO - Epoch(val) [{epoch}][88/88]"
                     f"    acc/top1: {top1:.4f}  acc/top5: 1.0000  acc/mean1: 0.5000")
    lines.append("12/29 19:29:13 - mmengine - INFO - the monitored metric did not improve in "
                 "the last 25 records. best score: 0.531. ")
    return lines


def test_a_classifier_at_its_classes_shares_to_an_early_stop_is_no_go(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mmengine_binary(27, random.Random(2)))
    assert artifact["decision"] == "NO-GO"
    assert any("acc/top1" in a["description"] and "same class" in a["description"]
               and a["severity"] == "blocker" for a in artifact["anomalies_detected"])


def test_a_sure_counter_block_the_log_ends_inside_is_read():
    lines = ["################################################################################",
             "                       Learning iteration 7729/100000                     ",
             "",
             "                       Computation: 21816 steps/s (collection: 4.171s, "
             "learning 0.335s)",
             "          Mean value_function loss: 6356390.1750",
             "               Mean surrogate loss: 0.0678",
             "                       Mean reward: -412322.19"]
    records = _records(lines)
    assert records and records[-1].step == 7729
    assert records[-1].metrics["mean_reward"] == -412322.19


def test_an_objective_jumping_from_its_size_to_past_minus_1e8_blew_up(tmp_path: Path):
    lines = [f"VLOG[1] After {62000 + 1000 * i} sequences ({33 + i}.1Hr): Obj(log[Pzx]) = "
             f"{v}   TokenAcc = {acc}%" for i, (v, acc) in enumerate(
                 [("-8.45854", 97.49), ("-8.56525", 97.49), ("-8.71485", 97.49),
                  ("-8.6e+29", 19.01), ("-1e+30", 4.45)])]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert "blown up" in artifact["summary"]


def test_a_slowly_drifting_unbounded_objective_is_no_blow_up(tmp_path: Path):
    values = [-10.0 * 4 ** i for i in range(16)]  # -10 → -1e10, fourfold a print
    lines = [f"step={i + 1} loss={v:.6g}" for i, v in enumerate(values)]
    assert "blown up" not in verdict_of(tmp_path, lines)["summary"]


def _mmcv_epochs(last_epoch: int, total_epochs: int) -> list[str]:
    lines = []
    for epoch in range(last_epoch - 1, last_epoch + 1):
        for it in range(20, 16041, 20):
            left = ((total_epochs - epoch) * 16043 + 16043 - it) * 2.89
            hours, rest = divmod(int(left), 3600)
            days, hours = divmod(hours, 24)
            eta = f"{days} day, {hours}:{rest // 60:02d}:{rest % 60:02d}" if days \
                else f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
            lines.append(f"2021-05-24 12:00:09,521 - mmaction - INFO - Epoch [{epoch}][{it}/"
                         f"16043]\tlr: 3.300e-07, eta: {eta}, time: 2.890, data_time: 0.002, "
                         f"memory: 22811, loss_cls: 0.2440, loss: "
                         f"{1.6 - epoch * 0.01 - it * 1e-6 + (it % 60) * 1e-4:.4f}, "
                         f"grad_norm: 12.8250")
        lines.append(f"2021-05-24 13:46:19,558 - mmaction - INFO - Saving checkpoint at "
                     f"{epoch} epochs")
    return lines


def test_a_run_wide_eta_at_the_last_epochs_last_print_ends_the_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mmcv_epochs(10, 10))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_the_same_log_an_epoch_short_of_its_plan_is_running(tmp_path: Path):
    assert verdict_of(tmp_path, _mmcv_epochs(9, 10))["terminal_state"] == "RUNNING"


def test_a_commented_evaluation_is_read_from_its_first_print():
    lines = []
    for step in range(100, 1100, 100):
        lines.append(f"  epoch 0 step {step} lr 0.001 logloss {0.4 - step / 1e4:.6f} gN 0.56, "
                     f"Wed Jul  3 17:12:50 2019")
        if step % 500 == 0:
            lines.append(f"# Epcho-time 355.16s Eval AUC {0.98 if step == 500 else 0.46}. "
                         f"Best AUC 0.98.")
    records = _records(lines)
    assert [r.metrics["eval_auc"] for r in records if "eval_auc" in r.metrics] == [0.98, 0.46]
    assert all("auc" not in r.metrics for r in records)  # the best so far is not the run's
    assert records[0].metrics["logloss"] == 0.4 - 0.01


def test_a_best_checkpoint_saved_at_its_path_is_the_best():
    events = find_events("[INFO] Best checkpoint saved at ./output/checkpoint-tracking-best.pth")
    assert [(e.kind, e.detail) for e in events] == \
        [(EventKind.BEST_CHECKPOINT, "./output/checkpoint-tracking-best.pth")]


def _ast_epochs(epochs: int) -> list[str]:
    """AST's validation block, a figure a line: its mAP rising while its validation loss,
    computed on sigmoid outputs passed to a loss with logits, sits near ln 2."""
    lines = []
    for epoch in range(1, epochs + 1):
        for it in range(100, 1800, 100):
            lines.append(f"Epoch: [{epoch}][{it}/1733]\tPer Sample Total Time 0.06996\t"
                         f"Per Sample Data Time 0.00351\tTrain Loss "
                         f"{0.7 / (1 + epoch * 20 + it / 100):.4f}\t")
        lines += ["start validation", f"mAP: {0.017 + epoch * 0.013:.6f}",
                  f"AUC: {0.67 + epoch * 0.01:.6f}",
                  f"train_loss: {0.7 / (1 + epoch * 20 + 17):.6f}",
                  f"valid_loss: {0.6960 - epoch * 0.00005:.6f}", "validation finished",
                  f"Epoch-{epoch} lr: 5e-05", f"epoch {epoch} training time: 1698.738"]
    return [*lines, "Training Finished"]


def test_a_validation_loss_far_above_training_with_its_map_at_best_is_a_notice(tmp_path: Path):
    artifact = verdict_of(tmp_path, _ast_epochs(25))
    gaps = [a for a in artifact["anomalies_detected"] if "generalisation gap" in a["description"]]
    assert all(a["severity"] == "low" for a in gaps)
    assert artifact["decision"] == "GO"


def test_a_mean_average_precision_on_a_line_of_its_own_is_read_and_a_heatmap_size_is_not():
    assert [r.metrics for r in _records(["mAP: 0.051291"])] == [{"map": 0.051291}]
    assert not _records(["heatmap: 64"])


def test_jumping_among_a_few_scores_below_the_first_stays_a_finding_not_a_blocker(
        tmp_path: Path):
    # Three exact test accuracies on a 96-image set (19, 25 and 52 images): a model at a
    # class's share, but no binary set's two shares; a finished run keeps it a finding.
    scores = [0.5417, 0.1979, 0.2604, 0.5417, 0.1979, 0.1979, 0.2604, 0.5417, 0.1979, 0.2604]
    lines = [f"Epoch: {i + 1} | train_loss: {2.0 - i * 0.05:.4f} | test_acc: {acc:.4f}"
             for i, acc in enumerate(scores)] + ["Training complete."]
    artifact = verdict_of(tmp_path, lines)
    chance = [a for a in artifact["anomalies_detected"] if "same class" in a["description"]]
    assert chance and all(a["severity"] != "blocker" for a in chance)


# -- From sealed-64 --------------------------------------------------------------------------

def _kaggle(lines: list[tuple[str, str]]) -> list[str]:
    import json as _json
    out = []
    for index, (stream, text) in enumerate(lines):
        element = _json.dumps({"stream_name": stream, "time": 3.5 + index, "data": text + "\n"},
                              separators=(",", ":"))
        out.append(("[" if index == 0 else ",") + element)
    return [*out, "]"]


def test_a_kaggle_kernels_json_log_is_read_as_the_lines_it_holds(tmp_path: Path):
    lines = _kaggle([("stdout", "[setup] CatBoost 1.2.10"), ("stdout", "--- Fold 1/5 ---"),
                     ("stderr", "Traceback (most recent call last):"),
                     ("stderr", '  File "train.py", line 9, in <module>'),
                     ("stderr", "_catboost.CatBoostError: catboost/cuda/targets/querywise_"
                                "targets_impl.h:319: Error: max query size supported on GPU "
                                "is 1023, got 2437")])
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert "max query size" in artifact["summary"]


def test_dockers_json_file_lines_are_unwrapped():
    from babysit.parsing.wrapped_lines import unwrapped
    assert unwrapped('{"log":"epoch 3 loss 0.41\\n","stream":"stdout","time":'
                     '"2024-05-01T10:00:00Z"}') == ["epoch 3 loss 0.41"]
    assert unwrapped('{"loss": 0.41, "epoch": 3}') is None  # a JSON record of the run's own


def _severstal(with_banner: bool) -> list[str]:
    head = ["======== Validation Stat ==========",
            "Four labels ratio (1~4): 0.061,0.020,0.422,0.065", "",
            "Train/Test 12568/1801"] if with_banner else []
    epochs = [f"Epoch {e} :Train_loss:{0.9 - e * 0.02:.3f} Train_dice:0.544 "
              f"Valid_loss:{0.5 - e * 0.008:.3f} Valid_dice:{0.78 + e * 0.004:.3f}"
              for e in range(40)]
    return [*head, *epochs, "", "Final Dice 0.950", "==============Predict==============="]


def test_training_records_after_a_validation_banner_are_the_trainings(tmp_path: Path):
    artifact = verdict_of(tmp_path, _severstal(with_banner=True))
    assert "train_loss" in artifact["final_metrics"]
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


# -- From sealed-65 --------------------------------------------------------------------------

def test_a_searchs_headline_over_its_best_closes_it(tmp_path: Path):
    lines = [f"epoch {e} loss={1.0 / (e + 1):.4f} val_acc={0.5 + e / 100:.3f}"
             for e in range(30)] + ["", "🏆 BEST RESULT", "  val_acc: 0.79"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_a_trainers_bar_closing_after_its_summary_is_no_new_lap(tmp_path: Path):
    lines = []
    for step in range(1, 44):
        lines.append(f"{step * 100 // 43:3d}%|##########| {step}/43 [{step:02d}:00<00:00, "
                     f"78.10s/it]")
        if step % 5 == 0:
            lines.append(f"{{'loss': {0.5 - step / 200:.4f}, 'grad_norm': 0.3, "
                         f"'learning_rate': 1e-06, 'epoch': {step / 43:.2f}}}")
    lines += ["{'train_runtime': 3462.7809, 'train_samples_per_second': 0.404, "
              "'train_steps_per_second': 0.012, 'train_loss': -0.0122, 'epoch': 1.0}",
              "100%|##########| 43/43 [57:42<00:00, 78.10s/it]",
              "100%|##########| 43/43 [57:42<00:00, 80.53s/it]"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["total_steps"] == 43


# -- From sealed-67 --------------------------------------------------------------------------

def test_nccls_warning_of_what_it_works_around_is_no_failure():
    warned = ("ai3:12000:12766 [2] /src/out/ubuntu-22.04/22.04/build/rccl/hipify/src/init.cc:1954 "
              "NCCL WARN MSCCL++: Cannot enable MSCCL++; environment is not MSCCL compatible")
    assert not [e for e in find_events(warned) if e.kind is EventKind.NCCL]
    failed = "RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:784, " \
             "unhandled system error, NCCL version 2.7.8"
    assert [e for e in find_events(failed) if e.kind is EventKind.NCCL]

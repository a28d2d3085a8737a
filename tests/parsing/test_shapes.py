"""Lines read by their shape when no framework parser knows them (issue 23): tables with
a header row, bare columns, boxed key/value blocks, a `nan` in a metric line's place,
evaluation lines, logs that print no step, and completion lines read in context."""

from __future__ import annotations

import math

import pytest

from babysit.model import EventKind, Record
from babysit.parsing.events import find_events
from babysit.parsing.parser import LogParser


def _read(lines: list[str]) -> tuple[LogParser, list[Record]]:
    parser = LogParser()
    return parser, parser.feed_lines(lines)


def _non_finite(records: list[Record]) -> list[Record]:
    return [r for r in records if any(not math.isfinite(v) for v in r.metrics.values())]


# YOLOv5 prints `gpu_mem` (not v8's `GPU_mem`), counts epochs from 0 and draws one bar
# per epoch after the row (ultralytics/yolov5 train.py, `pbar.set_description`).
YOLOV5 = [
    "     Epoch   gpu_mem       box       obj       cls     total    labels  img_size",
    "     0/299     3.62G   0.08364   0.05006   0.03137    0.1651        45       640: "
    "100%|##########| 7/7 [00:05<00:00,  1.35it/s]",
    "               Class     Images     Labels          P          R     mAP@.5 mAP@.5:.95: "
    "100%|##########| 4/4 [00:01<00:00,  2.71it/s]",
    "                 all        128        929      0.613      0.558       0.61      0.402",
    "     1/299     3.62G       nan       nan       nan       nan        45       640: "
    "100%|##########| 7/7 [00:05<00:00,  1.35it/s]",
]


def test_a_yolov5_table_row_with_nan_losses_is_a_nan_and_its_bar_is_one_epochs():
    parser, records = _read(YOLOV5)
    [first, second] = [r for r in records if "box" in r.metrics]
    # (the validation's `all` row under its header is the evaluation's)
    [val] = [r for r in records if "val/map50" in r.metrics]
    assert val.metrics["val/map50"] == 0.61 and val.step is None
    assert first.metrics["box"] == 0.08364 and first.epoch == 1.0 and first.total_epochs == 300
    assert math.isnan(second.metrics["box"]) and math.isnan(second.metrics["total"])
    # The bar's `7/7` counts the batches of one epoch: never the run's planned total.
    assert all(r.target_steps is None for r in records)


def test_bare_columns_are_read_once_their_shape_comes_back_and_a_nan_there_counts():
    lines = [f"{76975 + i} {2.3 - i * 0.01:.3f}" for i in range(5)] + ["76980 nan"]
    _, records = _read(lines)
    [bad] = _non_finite(records)
    assert bad.step == 76980 and math.isnan(bad.metrics["col2"])


def _per_class_array(values: list[str]) -> list[str]:
    # numpy's print of a long array after a sentence (sealed-12's MME domain-adaptation
    # log): the first elements on the sentence's line, seven a row after it, then `]`.
    rows = [" " + " ".join(f"{v:<9}" for v in values[i:i + 7]).rstrip()
            for i in range(5, len(values), 7)]
    head = "Per Class Accuracy Calculated According to the Labelled Target examples is:  ["
    return [head + " ".join(f"{v:<9}" for v in values[:5]).rstrip(), *rows[:-1],
            rows[-1] + "]"]


def test_the_rows_of_an_array_printed_over_lines_are_no_table():
    """Rows of one array's elements are one value, not a table's records: a class absent
    from the labelled set is `nan` there, and no metric went NaN. Printed again and
    again, identical rows included (the parser passes over repeated lines)."""
    values = ["1.", "0.8888889", "1.", "0.44444445", "1."] * 8 + ["nan", "1."]
    lines: list[str] = []
    for it in range(100, 1100, 100):
        lines += [f"S real T sketch Train Ep: {it} \t Loss Classification: 0.16 Method MME",
                  *_per_class_array(values)]
    _, records = _read(lines)
    assert not _non_finite(records)
    assert not any(k.startswith("col") for r in records for k in r.metrics)


def test_the_same_bare_shape_scattered_through_other_text_is_chance_not_a_table():
    # Random bytes decoded as text leave short lines such as `,9` or `7 3` far apart.
    prose = [f"some text that is not a number row, line {i}" for i in range(60)]
    lines = [*prose, "7 3", *prose, ",9", "4 2", *prose, "1 8", *prose, ",5"]
    _, records = _read(lines)
    assert not [r for r in records if r.metrics or r.step is not None]
    # The same rows close together are a table (a hand loop printing `step loss`).
    _, records = _read([*prose, "7 3.5", "8 3.4", "9 3.3", "10 3.2"])
    assert [r.step for r in records if r.metrics] == [9, 10]


def test_a_tab_separated_metrics_file_is_named_by_its_header():
    lines = ["step\tloss\tlr", "10\t2.5\t0.001", "20\t2.4\t0.001", "30\tinf\t0.001"]
    _, records = _read(lines)
    assert [r.step for r in records] == [10, 20, 30]
    assert math.isinf(records[-1].metrics["loss"])


def test_columns_set_apart_by_pipes_without_a_border_are_a_table():
    # sealed-18's LUT network: `epoch | tr_loss | tr_acc | … | time`, a rule, then rows
    lines = ["epoch | tr_loss | tr_acc | va_loss | time", "-" * 44,
             "    1 |   1.540 |  47.36 |   1.638 |   61s",
             "    2 |   1.352 |  54.99 |   nan   |  123s"]
    _, records = _read(lines)
    assert [r.epoch for r in records] == [1.0, 2.0]
    assert records[0].metrics["tr_loss"] == 1.540 and math.isnan(records[1].metrics["va_loss"])


def test_pipes_around_an_empty_cell_are_no_columns():
    _, records = _read(["loss | | acc", "0.5 | | 0.9", "0.4 | | 0.91"])
    assert not any(r.metrics for r in records)


def test_a_fastai_table_counts_epochs_and_reads_its_columns():
    lines = ["epoch     train_loss  valid_loss  accuracy  time",
             "0         0.912       0.602       0.801     00:12",
             "1         0.581       0.497       0.842     00:12"]
    _, records = _read(lines)
    assert [r.metrics["train_loss"] for r in records] == [0.912, 0.581]
    assert records[-1].epoch == 1.0 and "time" not in records[-1].metrics


def test_a_stable_baselines3_block_is_one_record_at_its_timestep():
    block = ["-----------------------------",
             "| rollout/           |      |",
             "|    ep_len_mean     | 200  |",
             "|    ep_rew_mean     | nan  |",
             "| time/              |      |",
             "|    fps             | 1094 |",
             "|    total_timesteps | 2048 |",
             "-----------------------------"]
    _, records = _read(block)
    [record] = records
    assert record.step == 2048
    assert math.isnan(record.metrics["rollout/ep_rew_mean"])


def test_a_nan_where_the_run_prints_a_number_is_reported_even_unnamed():
    lines = ["[12:00:01] 100 | 2.31 | ok", "[12:00:02] 101 | 2.30 | ok",
             "[12:00:03] 102 | nan | ok"]
    _, records = _read(lines)
    [bad] = _non_finite(records)
    assert any(math.isnan(v) for v in bad.metrics.values())


def test_a_one_off_inf_in_a_config_line_or_a_comment_is_not_a_metric():
    lines = ["grad_norm_max: inf", "# loss: inf (what the loss was before the fix)",
             "  max_norm = inf", "step 1 loss 2.3"]
    _, records = _read(lines)
    assert _non_finite(records) == []


def test_an_evaluation_line_feeds_eval_metrics_not_the_training_loss():
    # (a pass's progress lines are a batch's figures beside the running averages: the
    # summary after them is the evaluation)
    lines = ["Epoch: [3]  [ 10/500]  eta: 0:01:00  lr: 0.0001  loss: 0.52 (0.55)",
             "Test:  [ 0/50]  eta: 0:00:49  loss: 3.75 (3.75)  acc1: 91.4 (91.4)  "
             "acc5: 100.0 (100.0)",
             "Test:  [49/50]  eta: 0:00:00  loss: 3.10 (3.62)  acc1: 90.0 (91.0)  "
             "acc5: 98.0 (99.0)",
             "* Acc@1 91.000 Acc@5 99.000 loss 3.620"]
    _, records = _read(lines)
    assert [r.metrics.get("loss") for r in records if "loss" in r.metrics] == [0.52]
    test = records[-1]
    assert test.metrics == {"eval/acc1": 91.0, "eval/acc5": 99.0, "eval/loss": 3.62}
    assert test.step == records[0].step  # the eval's `0/50` is not a training step


def test_a_stdout_only_hf_trainer_log_counts_records_and_ends_on_its_summary():
    lines = [f"{{'loss': {2.0 - i * 0.1:.2f}, 'learning_rate': 1e-05, "
             f"'epoch': {0.1 * (i + 1):.2f}}}" for i in range(6)]
    lines += ["{'eval_loss': 1.5, 'eval_runtime': 2.0, 'epoch': 0.6}",
              "{'train_runtime': 120.5, 'train_samples_per_second': 4.1, "
              "'train_steps_per_second': 0.5, 'train_loss': 1.7, 'epoch': 0.6}"]
    parser, records = _read(lines)
    assert [r.step for r in records if "loss" in r.metrics] == [1, 2, 3, 4, 5, 6]
    assert parser.progress_unit == "record"
    summary = records[-1]
    assert summary.metrics == {}  # averages over the run, not a step of it
    assert [e.detail for e in summary.events] == ["summary"]


def test_reading_counts_what_was_understood():
    parser, _ = _read(["Loading the model", "step 1 loss 2.0", "step 2 loss 1.9",
                       "some chatter here"])
    assert (parser.lines_seen, parser.lines_read) == (4, 2)
    assert parser.step_found and parser.metric_names == {"loss"}


def test_completion_words_in_context():
    def kinds(line: str) -> list[EventKind]:
        return [e.kind for e in find_events(line)]

    assert kinds("Epoch 3/10 done") == [EventKind.NEW_STAGE]
    assert kinds("Finished training epoch 3/10") == [EventKind.NEW_STAGE]
    assert kinds("Stage 1 training done, switching to stage 2") == [EventKind.NEW_STAGE]
    assert kinds('sample: "the model said: Training completed, thanks"') == []
    assert kinds("Training completed.") == [EventKind.COMPLETED]
    assert kinds("Epoch 10/10 done") == [EventKind.COMPLETED]
    assert [e.detail for e in find_events("Total training time: 1:02:03 (0.31 s / it)")] == [
        "summary"]
    assert [e.detail for e in find_events("Training time 0:13:00")] == ["summary"]


def test_c_printf_minus_nan_is_nan():
    _, records = _read(["step 1 | loss 2.31 | norm 0.9", "step 2 | loss -nan | norm -nan"])
    [bad] = _non_finite(records)
    assert bad.step == 2


def test_a_csv_metrics_file_with_empty_cells_reads_what_each_row_has():
    lines = ["epoch,step,train_loss,val_loss", "0,49,0.63,", "0,99,0.19,", "0,99,,0.05",
             "1,149,0.31,"]
    _, records = _read(lines)
    assert [r.step for r in records] == [49, 99, 99, 149]
    assert records[2].metrics == {"val_loss": 0.05}


def test_settings_paths_and_notes_that_name_failures_raise_nothing():
    """Issue 26: a timeout being set, a path with failure words in it, a JSON note that
    says "nan" are not the failures they name."""
    assert find_events("Setting NCCL timeout to 1800 seconds") == ()
    assert [e.kind for e in find_events(
        "saving checkpoint to /runs/Traceback_CUDA out of memory/ckpt-10")] == [
        EventKind.CHECKPOINT_SAVED]
    assert [e.kind for e in find_events(
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, "
        "unhandled system error")] == [EventKind.NCCL]
    _, records = _read(['{"step": 3, "loss": 2.1, "note": "nan", "status": "Killed"}'])
    assert records[0].metrics == {"loss": 2.1}
    _, records = _read(['{"step": 3, "loss": "nan"}'])
    assert math.isnan(records[0].metrics["loss"])


def test_a_nan_in_a_one_off_metric_line_is_kept_where_an_inf_setting_is_not():
    # A NaN is never a configured value; a one-off line without a step still reports it.
    lines = ["max_grad_norm: inf",
             "2024-05-01 10:00:00 INFO (1/2) Epoch 1, batch 900, tot_loss[loss=nan, acc=0.01, "
             "over 1200.00 frames], batch size: 4, lr: 1.2e-03"]
    _, records = _read(lines)
    [bad] = _non_finite(records)
    assert math.isnan(bad.metrics["loss"]) and "max_grad_norm" not in bad.metrics


@pytest.mark.parametrize("header", [
    "epoch train loss valid loss accuracy_thresh f2_opt",
    "epoch training loss val loss top5_acc",
])
def test_a_spaced_header_names_the_columns_of_a_narrower_row(header: str):
    # fastai's rendered table writes `train_loss` as `train loss`.
    width = len(header.split()) - 2
    row = " ".join(["0", "nan", "nan"] + ["0.5"] * (width - 3))
    _, records = _read([header, row])
    [bad] = _non_finite(records)
    names = {k for k, v in bad.metrics.items() if math.isnan(v)}
    assert names == {header.split()[1] + "_loss", header.split()[3] + "_loss"}


def test_a_count_of_zero_comes_with_the_nan_means_of_its_line():
    # darknet: the means over a scale's boxes are -nan when no box was assigned to it.
    lines = [f"Region {r} Avg IOU: {v}, Class: {v}, Obj: {v}, No Obj: 0.43, count: {c}"
             for r, v, c in [(82, "0.31", 5), (94, "0.28", 3), (82, "-nan", 0)]]
    _, records = _read(lines)
    [bad] = _non_finite(records)
    assert bad.metrics["count"] == 0 and math.isnan(bad.metrics["class"])


def test_the_lines_after_a_printed_array_are_read_again():
    # sealed-5's ICTEDNet: a per-class IoU array, then `Hours: 16` and `Done`: the run's end.
    values = ["0.96368781", "0.71773089", "0.87336742"] * 7
    lines = [f"Epoch: [{e}/520] Iter:[9/10], Loss: {1.3 - e / 1000:.6f}, acc: 0.79"
             for e in range(510, 520)]
    lines += ["Loss: 0.887, MeanIU:  0.6256, Best_mIoU:  0.6349",
              "[" + " ".join(values[:6]), *(" " + " ".join(values[i:i + 6])
                                            for i in range(6, 18, 6)),
              " " + " ".join(values[18:]) + "]", "Hours: 16", "Done"]
    _, records = _read(lines)
    assert any(e.kind is EventKind.COMPLETED for r in records for e in r.events)


def test_a_printed_matrix_all_nan_is_a_model_computing_nan(tmp_path):
    """Julia's display of a model's output after training (sealed-9's Flux model zoo):
    a `2×10 CuArray` header, then rows that are NaN everywhere. No loss was printed; the
    model is broken all the same."""
    from tests.rules.test_loss_rules import verdict_of

    lines = ["[ Info: Epoch 1", "[ Info: Epoch 2", "2×10 CuArrays.CuArray{Float32,2,Nothing}:",
             "  ".join(["NaN"] * 10), "  ".join(["NaN"] * 10)]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO"
    assert "nan-inf" in {a["type"] for a in data["anomalies_detected"]}


def test_a_row_of_nan_inside_a_finite_array_is_no_nan():
    values = ["0.5", "0.25", "1."] * 4 + ["nan"] * 7 + ["0.5"] * 3
    _, records = _read(["step 1 loss 0.5", *_per_class_array(values), "step 2 loss 0.4"])
    assert not _non_finite(records)

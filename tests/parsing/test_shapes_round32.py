"""Shapes read and judged since the thirty-second session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.events import find_events
from babysit.parsing.parser import LogParser
from babysit.rules.eval_trends import within_counting_noise
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]):
    parser = LogParser()
    return [r for r in parser.feed_lines(lines) + parser.finish() if r.metrics]


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
             "Epoch 1, metrics {'Recall@1': 0.4000000059604645, 'NDCG@10': 0.61983}",
             "Epoch 50, metrics {'Recall@1': 0.30000001192092896, 'NDCG@10': 0.6314474}",
             "Epoch 100, metrics {'Recall@1': 0.20000000298023224, 'NDCG@10': 0.6185484}", "",
             "Test, metrics {'Recall@1': 0.10000000149011612, 'NDCG@10': 0.6053019}",
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

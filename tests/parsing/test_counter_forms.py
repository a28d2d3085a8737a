"""Counters and names in the forms widely used code prints them (issue 23: read any log,
not a catalogue): a name qualified by the counter it was measured at, a value or a
counter in brackets after its name, a boosting library's round and possessive names,
an epoch-only log. Each line is the shape a well-known program prints; the
NaN variant must be read as the same metric's, at the same counter."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from babysit.parsing.parser import LogParser
from tests.core.test_endings import once


def _records(lines: list[str]) -> list[tuple[int | None, float | None, dict[str, float]]]:
    parser = LogParser()
    return [(r.step, r.epoch, dict(r.metrics))
            for r in parser.feed_lines(lines) + parser.finish() if r.metrics]


@pytest.mark.parametrize(("template", "name"), [
    # deeplearning.ai's course notebooks
    ("Cost after iteration {step}: {value}", "cost"),
    # the TensorFlow Udacity course; word2vec's basic tutorial (a space before the colon)
    ("Minibatch loss at step {step}: {value}", "minibatch_loss"),
    ("Average loss at step {step} : {value}", "average_loss"),
    # a hand loop's `print(f"Loss at epoch …")` style, with `=`
    ("loss for step {step} = {value}", "loss"),
])
def test_a_name_measured_at_a_counter_is_the_metric_at_that_step(template: str, name: str):
    lines = [template.format(step=s, value=v)
             for s, v in ((100, "0.693147"), (200, "0.512345"), (300, "nan"))]
    records = _records(lines)
    assert [(step, list(metrics)) for step, _, metrics in records] == \
        [(100, [name]), (200, [name]), (300, [name])]
    assert records[1][2][name] == pytest.approx(0.512345)
    assert math.isnan(records[2][2][name])


def test_values_and_counters_in_brackets_after_their_names():
    records = _records(["Iteration[5] Loss[2.4012] lr[0.001]",
                        "Iteration[6] Loss[2.3011] lr[0.001]",
                        "Iteration[7] Loss[nan] lr[0.001]"])
    assert [step for step, _, _ in records] == [5, 6, 7]
    assert records[0][2] == {"loss": 2.4012, "lr": 0.001}
    assert math.isnan(records[2][2]["loss"])


def test_a_bracketed_counter_beside_an_epoch_is_the_epochs_batch_not_the_run_plan():
    # MindFormers' callback: `step:[  2/ 535]` counts batches of the epoch before it.
    parser = LogParser()
    parser.feed_lines(["{ Epoch:[  1/  5], step:[    2/  535], loss: 2.248, lr: 1.25e-07",
                       "{ Epoch:[  1/  5], step:[    4/  535], loss: 2.603, lr: 3.75e-07"])
    assert parser.target != 535


def test_a_named_step_outranks_an_inner_loops_bracketed_counter():
    parser = LogParser()
    [record] = parser.feed_lines(["| E6 iter[ 14/ 15] | [Loss] 0.25 | [step]   104 |"])
    assert record.step == 104


@pytest.mark.parametrize("word", ["Episode", "Round", "Generation", "Update"])
def test_an_outer_loop_counted_by_other_names_is_the_step_and_its_plan(word: str):
    # reinforcement learning counts episodes and updates, federated learning rounds,
    # evolutionary search generations: `Episode 8/10 | Loss: 1.0`
    parser = LogParser()
    records = parser.feed_lines([f"{word} {n}/10 | Deliveries: 7 | Loss: {1 / n:.4f}"
                                 for n in (1, 2, 3)])
    assert [(r.step, r.target_steps) for r in records] == [(1, 10), (2, 10), (3, 10)]
    assert all("episode" not in r.metrics for r in records)


def test_boosting_rounds_and_possessive_names():
    # LightGBM: `[N]<TAB>valid_0's l2: …`; XGBoost: `[N]<TAB>train-rmse:…`
    records = _records(["[10]\ttraining's auc: 0.81\tvalid_1's auc: 0.71",
                        "[11]\ttraining's auc: 0.82\tvalid_1's auc: 0.72",
                        "[12]\tvalid_0's l2: 0.183"])
    assert [step for step, _, _ in records] == [10, 11, 12]
    assert records[0][2] == {"training/auc": 0.81, "valid_1/auc": 0.71}
    assert records[2][2] == {"valid_0/l2": 0.183}


def test_an_epoch_only_log_says_its_epochs_are_the_progress(tmp_path: Path):
    lines = [f"epoch: {e} | train loss: {2.4 - e / 50:.4f} | val loss: {2.5 - e / 50:.4f}"
             for e in range(1, 31)]
    parser = LogParser()
    parser.feed_lines(lines)
    assert parser.reading().progress == "epoch"
    artifact = once(tmp_path, "\n".join([*lines, "Training complete."]) + "\n")
    assert artifact["reading"]["progress"] == "epoch"
    assert artifact["decision"] == "GO", artifact["summary"]


def test_spacy_3_table_counts_its_steps_in_its_hash_column():
    # spaCy 3's `spacy train` table: `E` the epoch, `#` the step, names of several words.
    lines = ["E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE ",
             "---  ------  ------------  --------  ------  ------  ------  ------",
             "  0       0          0.00     49.75    0.31    0.17    1.67    0.00",
             "  0     200         30.64   2108.01   39.52   48.26   33.46    0.40",
             "  1     400         55.11    563.62   62.81   64.20   61.48    0.63"]
    records = _records(lines)
    assert [(step, epoch) for step, epoch, _ in records] == [(0, 0.0), (200, 0.0), (400, 1.0)]
    assert records[2][2]["loss_ner"] == 563.62


def test_a_qualifier_in_parentheses_is_a_word_of_the_name():
    records = _records(["Eval Acc (total): 0.8812", "Loss (val): 0.61, Time (s): 3.2"])
    assert [metrics for _, _, metrics in records] == [
        {"eval_acc_total": 0.8812}, {"loss_val": 0.61, "time_s": 3.2}]


def test_a_counter_word_in_capitals_is_the_step():
    # A hand-written PyTorch loop's progress line (`ITER 14500 TRAINING (phase 1).
    # loss_vae: …`): the capitalised word counts iterations as `iter` does.
    lines = [f"ITER {i} TRAINING (phase 1). loss_vae: 0.{3 - i // 500}51; loss_recon: 0.2"
             f"{i // 500}; Grad_norm: 1.0{i // 500}e+00 " for i in (0, 500, 1000)]
    assert [step for step, _, _ in _records(lines)] == [0, 500, 1000]
    assert _records(lines)[1][2]["loss_vae"] == 0.251


def test_several_names_before_one_colon_take_the_values_in_order():
    # Python's `print("Valid Loss, AUC:", loss, auc)`.
    assert _records(["Valid Loss, AUC: 0.5332 0.6699"])[0][2] == {"valid_loss": 0.5332,
                                                                 "auc": 0.6699}
    # A name with a number in it is a counter, and a count that does not pair up is
    # another shape.
    assert "epoch_3" not in _records(["epoch 3, loss: 0.25 0.3"])[0][2]
    assert _records(["Loss, acc: 0.5"])[0][2] == {"acc": 0.5}

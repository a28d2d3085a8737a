"""Finished runs read as still running, by the shape of their lines (sealed-17): a value
led by its output's index, a measure named by its split, the next epoch named by its
number alone before its records, and a solver's `done solving`."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.completion_words import says_finished
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(*lines: str):
    parser = LogParser()
    return [record for line in lines for record in parser.feed_lines([line])]


# --- a value led by the index of the output it was measured on ----------------------------

def _onert_run(losses: list[float]) -> list[str]:
    planned = len(losses)
    return ["== training parameter ==", "- learning_rate   = 0.01", "========================",
            *(f"Epoch {e}/{planned} - time: 12.5ms/step - loss: [0] {loss:.4f}"
              for e, loss in enumerate(losses, start=1))]


def test_a_loss_led_by_its_output_index_is_read():
    record, = _records("Epoch 2/4 - time: 12.5ms/step - loss: [0] 3.2500")
    assert (record.epoch, record.total_epochs, record.metrics["loss"]) == (2, 4, 3.25)


def test_a_run_of_indexed_losses_that_reaches_its_last_epoch_is_succeeded(tmp_path: Path):
    verdict = verdict_of(tmp_path, _onert_run([4.0, 3.1, 2.6, 2.2, 2.0]))
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_an_indexed_loss_that_never_moves_is_not_learning(tmp_path: Path):
    verdict = verdict_of(tmp_path, _onert_run([512.0625] * 5))
    assert verdict["terminal_state"] == "SUCCEEDED" and verdict["decision"] == "NO-GO"
    assert "not-learning" in {a["type"] for a in verdict["anomalies_detected"]}


def test_a_list_after_a_name_is_no_indexed_value():
    # a configuration's list of sizes is not a metric's value
    assert _records("hidden_sizes: [0] 128, layers: 3") == []


# --- a measure named by its split --------------------------------------------------------

def _q3_run(epochs: int, planned: int) -> list[str]:
    return ["... training model (batch_size = 20)",
            *(f"epoch {e:2d}/{planned}. Q3_train: {60 + e / 10:.3f}%, Q3_test: {58 + e / 12:.3f}%"
              for e in range(1, epochs + 1))]


def test_a_measure_named_by_its_split_is_read_with_its_epoch():
    record, = _records("epoch  3/50. Q3_train: 63.5%, Q3_test: 61.2%")
    assert (record.epoch, record.total_epochs) == (3, 50)
    assert record.metrics["q3_train"] == 63.5


def test_a_count_of_a_split_is_no_measure():
    assert _records("epoch 1/5 n_train: 2000, n_test: 500") == []


def test_measures_by_split_to_the_last_epoch_then_done_is_succeeded(tmp_path: Path):
    verdict = verdict_of(tmp_path, [*_q3_run(40, 40), "", "Done!", "", "real    5m18.709s"])
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_measures_by_split_short_of_the_plan_is_running(tmp_path: Path):
    assert verdict_of(tmp_path, _q3_run(30, 40))["terminal_state"] == "RUNNING"


# --- the next epoch named by its number alone, before its records -------------------------

def _paddle_epochs(epochs: int, planned: int) -> list[str]:
    # the configuration's dump names the epochs too, as PaddleViT's yacs dump does
    lines = ["TRAIN:", "  BASE_LR: 0.0001", f"  NUM_EPOCHS: {planned}",
             "2022-05-06 09:40:00,001 Start training from epoch 1."]
    for e in range(1, epochs + 1):
        lines += [f"2022-05-06 09:4{e % 10}:00,001 Now training epoch {e}. LR={0.0001 / e:.6f}",
                  *(f"2022-05-06 09:4{e % 10}:10,001 Epoch[{e:03d}/{planned:03d}], "
                    f"Step[{s:04d}/0040], Avg Loss: {1 / e:.4f}, Avg Acc: 0.80"
                    for s in (0, 20)),
                  f"2022-05-06 09:4{e % 10}:50,001 ----- Epoch[{e:03d}/{planned:03d}], "
                  f"Train Loss: {1 / e:.4f}, Train Acc: 0.81, time: 12.30"]
    return lines


def test_the_last_epoch_summed_up_after_a_header_naming_each_epoch_ends_the_run(
        tmp_path: Path):
    verdict = verdict_of(tmp_path, _paddle_epochs(12, 12))
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_an_epoch_short_of_the_plan_after_a_header_naming_each_epoch_is_running(
        tmp_path: Path):
    assert verdict_of(tmp_path, _paddle_epochs(11, 12))["terminal_state"] == "RUNNING"


def test_the_last_epoch_begun_but_not_summed_up_is_running(tmp_path: Path):
    lines = _paddle_epochs(12, 12)[:-2]  # its first batches only
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# --- a solver's own word that it is done ---------------------------------------------------

@pytest.mark.parametrize("line", ["done solving", "Solving finished."])
def test_a_solver_saying_it_is_done_says_training_is_over(line: str):
    assert says_finished(line)


def test_a_caffe_run_that_snapshots_at_its_end_and_is_done_solving_is_succeeded(
        tmp_path: Path):
    lines = []
    for it in range(100, 2001, 100):
        lines += [f"I0401 08:05:55.118290  5674 solver.cpp:218] Iteration {it} "
                  f"(2.9 iter/s, 6.7s/20 iters), loss = {1 / it ** 0.3:.4f}",
                  f"I0401 08:05:55.118351  5674 sgd_solver.cpp:105] Iteration {it}, lr = 0.001"]
    lines += ["speed: 0.324s / iter",
              "Wrote snapshot to: /out/vgg16_faster_rcnn_iter_2000.caffemodel", "done solving"]
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


# --- the best value named once the loop is over --------------------------------------------

def _epoch_lines(epochs: int) -> list[str]:
    return [f"epoch {e:3d}  train_loss {0.2 - e / 500:.4f}  val_loss {0.19 + e / 900:.4f}  "
            f"P 0.40  R 0.70  F1 0.51" for e in range(1, epochs + 1)]


def test_the_best_value_named_after_the_last_epoch_closes_the_run(tmp_path: Path):
    lines = [*_epoch_lines(12), "", "best val F1 (@thr 0.5): 0.612", "",
             "best F1=0.640 @ thr=0.70  (count MAE=1.2  P=0.66  R=0.62)",
             "checkpoint -> /runs/ckpt/model.pt"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_a_best_value_named_after_every_epoch_is_no_end(tmp_path: Path):
    lines = []
    for line in _epoch_lines(12):
        lines += [line, "best val F1: 0.51"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_a_best_value_is_no_training_record():
    parser = LogParser()
    for line in _epoch_lines(4):
        parser.feed_lines([line])
    records = parser.feed_lines(["best F1=0.640 @ thr=0.70  (count MAE=1.2  P=0.66  R=0.62)"])
    assert all(record.step is None for record in records)

"""Shapes read since the fifteenth session, each on lines written in the real shape of
a public log."""

from __future__ import annotations

from babysit.model import EventKind
from babysit.parsing.parser import LogParser


def _records(lines: list[str]) -> list[tuple]:
    return [(r.step, r.target_steps, r.epoch, dict(r.metrics))
            for r in LogParser().feed_lines(lines)]


def test_a_counter_after_its_split_word_is_the_step_of_the_plan():
    # The course template of many student runs: `[ Train | 001/100 ] loss = …`.
    got = _records(["[ Train | 001/100 ] loss = 1.71352, acc = 0.38213",
                    "[ Valid | 001/100 ] loss = 1.65302, acc = 0.37931",
                    "[ Train | 002/100 ] loss = 1.40217, acc = 0.49022"])
    assert [(s, t) for s, t, _, _ in got] == [(1, 100), (1, 100), (2, 100)]
    assert got[0][3] == {"loss": 1.71352, "acc": 0.38213}
    assert got[1][3] == {"eval/loss": 1.65302, "eval/acc": 0.37931}
    # the training line after the validation's is the training's, same names or not
    assert got[2][3] == {"loss": 1.40217, "acc": 0.49022}


def test_a_counter_after_a_split_word_without_brackets():
    assert [(s, t) for s, t, _, _ in _records(["Train | 001/100 | loss 0.52",
                                               "Train | 002/100 | loss 0.47"])] \
        == [(1, 100), (2, 100)]


def test_an_evaluation_s_own_batch_counter_is_still_no_step():
    assert _records(["Test: [ 0/50] loss: 0.35"]) == [(None, None, None, {"eval/loss": 0.35})]


def test_keras_headers_stand_where_their_bars_begin():
    # `Epoch 2/3` opens the second epoch: one done, where its bar's `1 + n/total` starts.
    got = _records(["Epoch 1/3",
                    "60000/60000 [==============================] - 5s 80us/step - loss: 0.5",
                    "Epoch 2/3",
                    "60000/60000 [==============================] - 5s 80us/step - loss: 0.4"])
    assert [epoch for _, _, epoch, _ in got] == [0.0, 1.0, 1.0, 2.0]


def test_a_one_epoch_fit_in_an_outer_loop_places_no_epoch():
    got = _records(["epoch 2", "Epoch 1/1"])
    assert got and got[-1][2] is None


def test_yolov5_s_older_validation_header_names_its_columns():
    # YOLOv5 before v7.0 (and YOLOv7): `Labels` for `Instances`, `mAP@.5 mAP@.5:.95`.
    got = _records([
        "     Epoch   gpu_mem       box       obj       cls    labels  img_size",
        "               Class     Images     Labels          P          R     mAP@.5 "
        "mAP@.5:.95: 100%|██████████| 56/56 [00:28<00:00,  1.98it/s]",
        "                 all       5297      59814      0.141    0.00838    0.00246   0.000472"])
    assert got[-1][3] == {"val/p": 0.141, "val/r": 0.00838, "val/map50": 0.00246,
                          "val/map50-95": 0.000472}


def test_icefall_s_small_grad_scale_is_a_loss_scale_reading():
    records = LogParser().feed_lines([
        "2024-01-14 01:03:00,826 WARNING [train.py:1057] (2/4) Grad scale is small: "
        "1.2924697071141057e-26"])
    assert any(e.kind is EventKind.LOSS_SCALE and e.detail == "1.2924697071141057e-26"
               for r in records for e in r.events)


def test_a_bar_of_the_epochs_loop_counts_epochs_not_steps():
    # The Hugging Face examples' `trange(epochs, desc="Epoch")` (sealed-27's RoBERTa run).
    # (its rate is epochs a second, no throughput: tests/parsing/test_shapes_round33.py)
    got = _records(["Epoch:  20%|██▍         | 1/5 [34:31<2:18:06, 2071.54s/it]"])
    assert got == [(None, None, 1.0, {})]


def test_converting_examples_to_features_is_a_data_pass():
    assert _records(["convert examples to features: 28it [00:02, 11.96it/s]"]) == []


def test_global_steps_by_name_are_the_step():
    got = _records(["12/21/2022 19:15:41 - INFO - __main__ -   train acc: 0.259, dev acc: 0.286, "
                    "loss: nan, global steps: 200"])
    assert got[0][0] == 200

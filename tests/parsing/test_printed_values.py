"""Lines babysit read nothing from (issue 23), read now: Julia's `@show` of Tracker values
and its console logger's boxes, rows that lead with their counter, sentences that say
several figures. Each shape quotes the sealed-9 log it comes from."""

from __future__ import annotations

import math
from pathlib import Path

from babysit.parsing.counter_rows import read_counter_row
from babysit.parsing.is_sentences import parse_is_sentences, parse_run_on_sentences
from babysit.parsing.julia_log_blocks import JuliaLogBlocks
from babysit.parsing.parser import LogParser
from babysit.parsing.shown_values import shown_pairs
from babysit.parsing.text import clean
from babysit.rules.objective_names import objective_key
from tests.core.test_endings import once


def _records(lines: list[str]) -> list[tuple[int | None, dict[str, float]]]:
    parser = LogParser()
    return [(r.step, r.metrics) for r in parser.feed_lines(lines) if r.metrics]


# --- value forms: Julia's Float32, NaN32, Tracker's `(tracked)` -------------------------

def test_julia_float32_and_tracker_values_read_as_plain_numbers():
    assert clean("loss = 0.5f0, lr = 1.0f-5") == "loss = 0.5e0, lr = 1.0e-5"
    assert clean("loss = NaN32, grad = -Inf16") == "loss = NaN, grad = -Inf"
    assert clean("loss(x, y) = 0.29602579662457984 (tracked)") == "loss(x, y) = 0.29602579662457984"
    assert clean("x = Float16(0.5)") == "x = 0.5"
    assert clean("commit 3f20 at 1f") == "commit 3f20 at 1f"  # no point: no Float32


# --- @show expressions (julia_flux_tracker_show_loss_identical_every_iteration_…) -------

def test_a_shown_tuple_is_unzipped_into_pairs_named_by_what_they_call():
    line = "    (i, loss(dataset[1]...)) = (3, 0.29602579662457984 (tracked))"
    assert shown_pairs(clean(line)).strip() == "i = 3, loss = 0.29602579662457984"
    assert shown_pairs("loss(dataset[1]...) = 0.2") == "loss = 0.2"
    assert shown_pairs("model(x) = [0.0 0.0; 1.46 0.0]") == "model(x) = [0.0 0.0; 1.46 0.0]"


def test_julia_show_lines_give_the_loss_at_each_iteration():
    lines = ["    loss(dataset[1]...) = 0.2001447729236289 (tracked)"] + [
        f"    (i, loss(dataset[1]...)) = ({i}, 0.29602579662457984 (tracked))"
        for i in range(1, 11)]
    records = _records(lines)
    # the loss before the loop (the first record) and the ten in it, each at its own `i`
    assert [step for step, _ in records] == [1, *range(1, 11)]
    assert records[-1][1]["loss"] == 0.29602579662457984


def test_a_julia_loss_identical_on_every_iteration_is_not_learning(tmp_path: Path):
    # julia_flux_tracker_show_loss_identical_every_iteration_1_to_10_not_training.log
    lines = ["    loss(dataset[1]...) = 0.2001447729236289 (tracked)"] + [
        f"    (i, loss(dataset[1]...)) = ({i}, 0.29602579662457984 (tracked))"
        for i in range(1, 11)]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert "not-learning" in {a["type"] for a in data["anomalies_detected"]}, data["summary"]


def test_julia_show_of_a_nan32_loss_is_a_nan():
    records = _records([f"(i, loss(x, y)) = ({i}, {v})" for i, v in
                        ((1, "0.5f0"), (2, "0.4f0"), (3, "NaN32"))])
    assert math.isnan(records[-1][1]["loss"]) and records[-1][0] == 3


# --- Julia's console logger boxes -------------------------------------------------------

_BOX = ["┌ Info: Epoch 2", "│   loss = NaN32", "│   accuracy = 0.1", "└ @ Main ~/train.jl:42"]


def test_a_console_logger_box_is_one_line():
    lines, joined = JuliaLogBlocks().join(["[ Info: start", *_BOX, "done"])
    assert lines == ["[ Info: start", "Info: Epoch 2, loss = NaN32, accuracy = 0.1", "done"]
    assert joined == 3


def test_a_box_left_open_keeps_its_lines():
    lines, joined = JuliaLogBlocks().join(_BOX[:3])
    assert (lines, joined) == (_BOX[:3], 0)


def test_a_box_of_epoch_and_nan_loss_is_one_record_at_that_epoch():
    parser = LogParser()
    records = [r for r in parser.feed_lines([*_BOX]) if r.metrics]
    assert len(records) == 1 and records[0].epoch == 2.0
    assert math.isnan(records[0].metrics["loss"])


def test_an_info_box_keeps_the_argument_on_its_closing_line():
    # Info-level records show no source: the last argument is on the `└` line itself
    # (`@info "Training" iter=120 loss=NaN` in Julia's REPL or a script's stderr).
    box = ["┌ Info: Training", "│   iter = 120", "└   loss = NaN"]
    lines, joined = JuliaLogBlocks().join(box)
    assert lines == ["Info: Training, iter = 120, loss = NaN"] and joined == 2
    records = [r for r in LogParser().feed_lines(box) if r.metrics]
    assert len(records) == 1 and records[0].step == 120
    assert math.isnan(records[0].metrics["loss"])


# --- rows that lead with their counter --------------------------------------------------

def test_build_nanogpt_log_rows_name_each_value_by_the_word_before_it():
    # nanogpt_style_arabic_step_train_lines_loss_spikes_to_init_11_at_1145_and_4767_val_flat_5
    shape, parsed = read_counter_row("4767 train 11.574224") or ("", None)
    assert shape == "# train #" and parsed is not None
    assert (parsed.step, parsed.metrics) == (4767, {"train": 11.574224})
    assert objective_key(["train"], whole_only=True) == "train"
    assert objective_key(["val"], whole_only=True) is None


def test_char_rnn_tutorial_rows_give_the_plan_and_the_nan_loss():
    # pytorch_tutorial_char_rnn_iter_pct_elapsed_loss_guess_lines_nan_from_35pct_all_russian
    found = read_counter_row("35000 35% (1m 4s) nan Nam / Russian ✗ (Korean)")
    assert found is not None
    shape, parsed = found
    assert shape == "# #% ~ #"
    assert (parsed.step, parsed.target) == (35000, 100000)
    assert math.isnan(parsed.metrics["col4"])


def test_a_counter_row_is_read_only_once_its_shape_came_back():
    records = _records(["5000 5% (0m 12s) 2.4177 Coelho / Portuguese ✓",
                        "10000 10% (0m 21s) 2.5862 Desrochers / Dutch ✗ (French)",
                        "35000 35% (1m 4s) nan Nam / Russian ✗ (Korean)"])
    assert [step for step, _ in records] == [10000, 35000]


def test_prose_that_starts_with_a_number_is_no_row():
    assert read_counter_row("3 files found in data") is None
    assert read_counter_row("2023 was a good year") is None


def test_the_char_rnn_tutorial_going_nan_is_no_go(tmp_path: Path):
    rows = [f"{i * 5000} {i * 5}% (0m {i * 9}s) {1.5 + (i % 3) * 0.4:.4f} Name / Guess ✗ (Truth)"
            for i in range(1, 7)]
    rows += [f"{i * 5000} {i * 5}% (1m {i}s) nan Nam / Russian ✗ (Korean)" for i in range(7, 11)]
    data = once(tmp_path, "\n".join(rows) + "\n")
    assert data["decision"] == "NO-GO", data["summary"]
    assert "nan-inf" in {a["type"] for a in data["anomalies_detected"]}


# --- sentences with several figures (qlearning_game_total_rewards_identical_3_8_…) ------

def test_a_sentence_with_two_figures_and_an_episode_counter():
    parsed = parse_run_on_sentences(
        "Total rewards in episode 73 is 3.799999999999999 total number of steps are 3626")
    assert parsed is not None
    # the total of steps is a count, not a measure
    assert parsed.metrics == {"total_rewards": 3.799999999999999}


def test_and_is_no_part_of_a_name():
    parsed = parse_run_on_sentences("Epoch 3 loss is 0.4 and acc is 0.9")
    assert parsed is not None and parsed.metrics == {"loss": 0.4, "acc": 0.9}
    assert parsed.epoch == 3.0


def test_a_framework_sentence_line_is_left_to_its_framework():
    # BigDL's DistriOptimizer (bigdl_distrioptimizer_loss_infinity.log): `Loss is Infinity.`
    line = ("[Epoch 64 740096/1281167][Iteration 45459][Wall Clock 197340.7s] Train 1792 in "
            "4.0seconds. Throughput is 447.2 records/second. Loss is Infinity. Current "
            "learning rate is 0.046281366472703075.")
    assert parse_is_sentences(line) is None
    records = _records([line])
    assert records and math.isinf(records[-1][1]["loss"])


def test_dl4j_score_lines_are_its_loss_at_their_iteration():
    # sealed-2's dl4j_bilstm_yelp_score_iteration_4_evaluations_training_done.log: once a
    # counter after a preposition is read (`Score at iteration 400 is 1.2`), DL4J's
    # `score` must be read as what it is, the loss, not a return that has to rise
    line = ("06:43:54.168 [main] INFO org.deeplearning4j.optimize.listeners."
            "ScoreIterationListener - Score at iteration 400 is 1.2044959534688522")
    records = _records([line])
    assert records == [(400, {"loss": 1.2044959534688522})]


def test_a_model_summary_or_a_data_frame_row_is_no_counter_row():
    # sealed-3's yolov7_nohup_cr_ansi_300_epochs_completed.log, sealed-5's
    # made_with_ml_ray_train_notebook_10_checkpoints_total_run_time.log
    assert read_counter_row(" 25                -1  1         0  models.common.MP   []") is None
    assert read_counter_row("1      1  0.0001    0.497796  0.454631  1695099501  True  False") \
        is None


def test_either_of_two_values_is_no_value():
    # TensorFlow's CheckNumerics message (sealed-2's tf_object_detection_checknumerics_…)
    assert parse_run_on_sentences("LossTensor is inf or nan. : Tensor had NaN values") is None


def test_an_array_output_all_nan_is_a_nan_value():
    assert clean("model(x) = Float32[NaN, NaN] (tracked)") == "model(x) = NaN"
    assert clean("out = [NaN32 NaN32; NaN32 NaN32]") == "out = NaN"
    # per-class figures with a NaN for an absent class are routine: left as they are
    assert clean("iou: [0.5, nan, 0.3]") == "iou: [0.5, nan, 0.3]"


def test_a_julia_model_whose_output_went_nan_is_no_go(tmp_path: Path):
    lines = [f"(i, loss(x, y)) = ({i}, {0.7 - i * 0.05:.4f}f0)" for i in range(1, 6)]
    lines += [f"(i, loss(x, y)) = ({i}, NaN32)" for i in range(6, 9)]
    lines += ["model(x) = Float32[NaN, NaN, NaN] (tracked)"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["decision"] == "NO-GO", data["summary"]
    assert "nan-inf" in {a["type"] for a in data["anomalies_detected"]}

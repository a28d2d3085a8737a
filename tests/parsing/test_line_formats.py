"""Each line format, one behaviour per test. Recorded real logs are covered in
test_recorded_logs.py; these pin the exact shapes each parser accepts."""

from __future__ import annotations

import math

import pytest

from babysit.model import EventKind
from babysit.parsing.parser import LogParser


def parse(*lines: str):
    parser = LogParser()
    records = [parser.feed(line) for line in lines]
    return parser, [r for r in records if r is not None]


def test_hf_dict_with_float_values_gives_metrics_and_epoch():
    _, [record] = parse("{'loss': 2.3456, 'grad_norm': 1.23, 'learning_rate': 4.5e-05, "
                        "'epoch': 0.12}")
    assert record.fmt == "hf-trainer"
    assert record.metrics == {"loss": 2.3456, "grad_norm": 1.23, "learning_rate": 4.5e-05}
    assert record.epoch == pytest.approx(0.12)


def test_hf_dict_with_string_values_from_transformers_5_parses_the_same():
    _, [record] = parse("{'loss': '2.3456', 'grad_norm': 'nan', 'learning_rate': '4.5e-05', "
                        "'epoch': '0.12'}")
    assert record.metrics["loss"] == 2.3456
    assert math.isnan(record.metrics["grad_norm"])


def test_hf_dict_inherits_the_step_of_the_progress_bar_before_it():
    _, records = parse(" 12%|█▏        | 5/40 [00:01<00:07,  4.78it/s]",
                       "{'loss': 2.1, 'epoch': 0.1}")
    assert records[-1].step == 5
    assert records[-1].target_steps == 40


def test_hf_bar_and_dict_glued_on_one_line_are_both_read():
    _, [record] = parse(" 12%|█▏        | 5/40 [00:01<00:07,  4.78it/s]{'loss': 2.1}")
    assert (record.step, record.target_steps, record.metrics["loss"]) == (5, 40, 2.1)
    assert record.metrics["it/s"] == pytest.approx(4.78)


def test_shorter_bar_after_the_training_bar_is_treated_as_evaluation():
    parser, records = parse(" 50%|█████     | 20/40 [00:05<00:05,  4.0it/s]",
                            " 60%|██████    | 3/5 [00:00<00:00, 30.0it/s]")
    assert parser.step == 20
    assert records[-1].step == 20


def test_tqdm_postfix_metrics_and_seconds_per_iteration_rate():
    _, [record] = parse("train: 45%|████▌     | 450/1000 [10:00<12:00,  2.50s/it, loss=0.52, "
                        "lr=1e-3]")
    assert (record.step, record.target_steps) == (450, 1000)
    assert record.metrics["loss"] == 0.52
    assert record.metrics["it/s"] == pytest.approx(0.4)


def test_lightning_tqdm_bar_counts_global_steps_across_epochs():
    _, [record] = parse("Epoch 2:  45%|████▌     | 45/100 [00:01<00:01, 30.12it/s, v_num=0, "
                        "train_loss=0.123]")
    assert record.fmt == "lightning"
    assert record.step == 245
    assert record.metrics == {"train_loss": 0.123, "it/s": 30.12}


def test_lightning_validation_bar_does_not_move_the_step():
    parser, records = parse("Epoch 0: 100%|██████████| 10/10 [00:01<00:00, 9.0it/s]",
                            "Validation DataLoader 0:  50%|█████     | 5/10 [00:00<00:00, 50it/s]")
    assert parser.step == 10
    assert len(records) == 1


def test_keras_epoch_header_and_bar_give_global_step_and_target():
    _, records = parse("Epoch 3/10",
                       "32/32 ━━━━━━━━━━━━━━━━━━━━ 1s 10ms/step - accuracy: 0.5000 - "
                       "loss: 1.2000 - val_accuracy: 0.6000 - val_loss: 1.1000")
    bar = records[-1]
    assert (bar.step, bar.target_steps) == (96, 320)
    assert bar.metrics["val_loss"] == 1.1


def test_keras_last_bar_of_last_epoch_marks_completion():
    _, records = parse("Epoch 2/2", "8/8 - 0s - 3ms/step - loss: 0.3000")
    assert any(e.kind is EventKind.COMPLETED for e in records[-1].events)


def test_json_line_nested_objects_flatten_with_slashes():
    _, [record] = parse('{"step": 10, "train": {"loss": 2.3, "lr": 0.001}, "note": "x"}')
    assert record.step == 10
    assert record.metrics == {"train/loss": 2.3, "train/lr": 0.001}


def test_json_line_with_lists_and_strings_keeps_only_numbers():
    _, [record] = parse('{"step": 2, "loss": 1.5, "tags": [1, 2], "phase": "train", '
                        '"ok": true, "lr": "3e-4"}')
    assert record.metrics == {"loss": 1.5, "lr": 3e-4}


def test_json_line_with_nan_as_json_dumps_writes_it():
    _, [record] = parse('{"step": 3, "loss": NaN}')
    assert math.isnan(record.metrics["loss"])


def test_half_written_json_line_is_ignored_not_misread():
    _, records = parse('{"step": 10, "loss": 2.3, "lr"')
    assert all("lr" not in r.metrics for r in records)


def test_key_value_line_with_step_of_total():
    _, [record] = parse("Step 1200/10000 | loss=0.342 | lr=1e-4 | grad_norm=0.8 | 142 samples/s")
    assert (record.step, record.target_steps) == (1200, 10000)
    assert record.metrics == {"loss": 0.342, "lr": 1e-4, "grad_norm": 0.8, "samples/s": 142.0}


def test_plain_log_chatter_with_colons_is_not_taken_for_metrics():
    _, records = parse("2024-01-01 12:00:00 INFO Loading: 3 files", "Downloading: 100")
    assert records == []


def test_nanogpt_iteration_and_eval_lines():
    _, records = parse("iter 100: loss 2.3456, time 123.45ms, mfu 12.34%",
                       "step 500: train loss 1.2345, val loss 1.3456")
    assert records[0].fmt == "nanogpt"
    assert records[0].metrics["loss"] == 2.3456
    assert records[0].metrics["steps_per_second"] == pytest.approx(1000 / 123.45)
    assert records[1].step == 500 and records[1].metrics["val_loss"] == 1.3456


def test_epoch_step_tutorial_format_counts_earlier_epochs():
    _, [record] = parse("Epoch [2/10], Step [100/600], Loss: 0.2345")
    assert (record.step, record.target_steps) == (700, 6000)
    assert record.metrics == {"loss": 0.2345}


def test_megatron_iteration_line():
    _, [record] = parse(
        " iteration      100/  500000 | consumed samples:        51200 | elapsed time per "
        "iteration (ms): 1234.5 | learning rate: 1.500E-04 | global batch size:   512 | "
        "lm loss: 7.234567E+00 | loss scale: 1.0 | grad norm: 2.345 | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |")
    assert (record.fmt, record.step, record.target_steps) == ("megatron", 100, 500000)
    assert record.metrics["lm_loss"] == pytest.approx(7.234567)
    assert record.metrics["grad_norm"] == 2.345


def test_torchtitan_line_with_ansi_colours_and_thousands_separators():
    _, [record] = parse("\x1b[31mstep:  1  \x1b[32mloss: 12.2345  \x1b[33mmemory:  1.23GiB"
                        "(1.23%)  \x1b[34mtps: 1,234  \x1b[36mtflops: 12.34  \x1b[35mmfu: "
                        "1.23%\x1b[39m")
    assert (record.fmt, record.step) == ("torchtitan", 1)
    assert record.metrics["tps"] == 1234.0
    assert record.metrics["memory_gib"] == 1.23


def test_rank_prefix_is_stripped_and_kept():
    _, [record] = parse("[rank3]: step=5 loss=1.5")
    assert record.rank == 3 and record.step == 5


def test_traceback_closes_with_exception_event():
    _, records = parse("Traceback (most recent call last):",
                       '  File "train.py", line 3, in <module>',
                       "    main()",
                       "ValueError: shapes (3,4) and (5,6) not aligned")
    kinds = [e.kind for r in records for e in r.events]
    assert kinds == [EventKind.TRACEBACK_START, EventKind.EXCEPTION]
    assert records[-1].events[0].detail.startswith("ValueError: shapes")


@pytest.mark.parametrize("line", ["_Epoch 3: 969 / 10000_", "**Epoch 3: 969 / 10000**",
                                  "*Epoch 3: 969 / 10000*  "])
def test_a_line_in_markdown_emphasis_is_read_as_its_text(line: str):
    # A log kept in a notebook's Markdown (sealed-8's Nielsen MNIST network): `_Epoch` hid
    # the epoch's word from every reader.
    parser = LogParser()
    records = parser.feed_lines(["Epoch 2: 950 / 10000", line])
    assert [r.epoch for r in records if r.metrics][-1] == 3.0


def test_a_bracketed_ep_counter_with_its_total_is_the_epoch():
    # thgnn's final fit (sealed-15): `[Ep 003/20] loss=0.1889 train_auc=0.5147 lr=5.00e-05`.
    _, [record] = parse("[Ep 003/20] loss=0.1889 train_auc=0.5147 lr=5.00e-05 | 2.4s")
    assert (record.epoch, record.total_epochs) == (3.0, 20)
    assert record.metrics["train_auc"] == 0.5147


def test_ep_without_its_total_in_a_bracket_is_no_epoch():
    # `Ep 3` alone may count episodes: only the bracketed `[Ep N/M]` names the epochs.
    _, records = parse("Ep 3 loss=0.25 reward=1.5")
    assert all(r.epoch is None for r in records)

"""An evaluation printed as a count right out of the set's size, one line per epoch (the
`network.py` of Nielsen's book, copied into many numpy loops): sealed-8's
nielsen_numpy_mnist_sgd_lr3_correct_969_of_10000_every_epoch_time_ran.log prints
`_Epoch 7: 969 / 10000_` (markdown around it, a tab after it)."""

from __future__ import annotations

from babysit.parsing.correct_counts import parse_correct_count
from babysit.parsing.parser import LogParser


def test_a_count_right_is_read_as_the_epoch_and_its_accuracy():
    parsed = parse_correct_count("_Epoch 7: 969 / 10000_\t\t")
    assert parsed is not None
    assert parsed.epoch == 7.0
    assert parsed.metrics == {"eval_accuracy": 0.0969}
    assert parse_correct_count("Epoch 0: 9129 / 10000") is not None


def test_a_progress_counter_with_more_on_its_line_is_not_a_count_right():
    # fairseq's `epoch 003:  5 / 356 loss=9.44`: a batch counter, and a loss after it.
    assert parse_correct_count("Epoch 3: 5 / 356 loss=9.44") is None
    assert parse_correct_count("Epoch 3: 400 / 356") is None  # past the total: no count right
    assert parse_correct_count("Epoch 3 complete") is None


def test_the_parser_reads_the_lines_as_evaluations_per_epoch():
    records = LogParser().feed_lines([f"_Epoch {e}: 969 / 10000_\t\t" for e in range(1, 4)])
    read = [(r.epoch, r.metrics.get("eval_accuracy")) for r in records if r.metrics]
    assert read == [(1.0, 0.0969), (2.0, 0.0969), (3.0, 0.0969)]

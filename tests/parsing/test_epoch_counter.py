"""A counter beside an epoch number that counts one epoch's batches is never the plan."""

from __future__ import annotations

from babysit.parsing.epoch_counter import EpochCounter
from babysit.parsing.parser import LogParser


def _parse(lines: list[str]) -> LogParser:
    parser = LogParser()
    parser.feed_lines(lines)
    return parser


def test_an_epoch_that_spans_more_than_a_global_counter_allows_is_one_epochs() -> None:
    counter = EpochCounter()
    assert not counter.observe(4.0, 300)
    assert not counter.observe(4.0, 350)  # 50 steps: a global epoch may take 100
    assert counter.observe(4.0, 500)  # 200 steps inside epoch 4, when 3 epochs fit in 300


def test_a_counter_that_goes_back_as_the_epoch_moves_on_is_one_epochs() -> None:
    counter = EpochCounter()
    assert not counter.observe(1.0, 90)
    assert counter.observe(2.0, 10)


def test_a_global_counter_and_fractional_epochs_are_left_alone() -> None:
    counter = EpochCounter()
    for epoch, step in ((3, 2000), (3, 2100), (4, 2800), (4, 3000), (5, 3600)):
        assert not counter.observe(float(epoch), step)
    assert not EpochCounter().observe(2.37, 100)


def test_an_inner_counter_that_ends_its_epoch_is_no_plan_reached() -> None:
    lines = [f"2024-01-02 03:04:{i:02d},000 epoch 5 - iter {n}/900 - loss 0.{40 + i}"
             for i, n in enumerate(range(300, 901, 150))]
    parser = _parse(lines)
    assert parser.step == 900
    assert parser.target is None


def test_a_global_counter_beside_its_epoch_keeps_its_plan() -> None:
    lines = [f"epoch {1 + n // 100} - iter {n}/1000 - loss 0.{90 - n // 20}"
             for n in range(20, 400, 20)]
    assert _parse(lines).target == 1000


def test_a_dev_line_after_a_timestamp_is_an_evaluation() -> None:
    parser = LogParser()
    records = parser.feed_lines([
        "2022-12-13 02:38:05,346 epoch 6 - iter 1750/1750 - loss 0.12924214 - lr: 0.000032",
        "2022-12-13 02:38:07,613 DEV : loss 0.17740997672080994 - f1-score (micro avg)  0.65",
    ])
    assert all("loss" not in r.metrics for r in records[1:])


def test_a_counter_that_starts_again_with_the_next_epoch_withdraws_its_total() -> None:
    lines = [f"epoch {e} - iter {i}/300 - loss 0.{50 - e * 3 - i // 100}"
             for e in (1, 2) for i in (100, 200, 300)]
    records = LogParser().feed_lines(lines)
    assert records[2].target_steps == 300  # one epoch alone cannot tell
    assert records[3].target_withdrawn and records[-1].target_steps is None


def test_the_batches_of_an_epoch_between_pipes_place_the_run() -> None:
    # PyTorch's word_language_model example prints the epoch, then the batch of that
    # epoch by its unit (lines written for this test in that shape).
    lines = [f"| epoch {e:3d} | {b:5d}/ 2983 batches | lr 20.00 | ms/batch 45.85 | "
             f"loss {7.6 - 0.3 * e - 0.0004 * b:5.2f} | ppl 900.00"
             for e in (1, 2) for b in range(200, 2983, 200)]
    parser = _parse(lines)
    assert parser.step == 2983 + 2800
    assert parser.target is None  # the batches of one epoch are no plan

"""The counts a plan names (babysit/parsing/round_count.py): few, so that a live run seldom
stops on one by chance."""

from __future__ import annotations

from babysit.parsing.round_count import completed, round_units, under_way


def test_round_counts_are_one_two_two_and_a_half_or_five_times_a_power_of_ten_from_a_hundred():
    assert [n for n in (25, 50, 99, 100, 150, 200, 250, 300, 500, 1000, 2000, 2500, 5000)
            if round_units(n)] == [100, 200, 250, 500, 1000, 2000, 2500, 5000]


def test_a_counter_from_zero_names_the_unit_under_way():
    assert completed(99.0, 0.0) == 100
    assert completed(100.0, 1.0) == 100
    assert completed(99.5, 0.0) is None


def test_a_trailing_ellipsis_is_work_under_way():
    assert under_way("Evaluating...")
    assert under_way("Saving checkpoint\u2026  ")
    assert not under_way("Saving checkpoint at epoch 100")

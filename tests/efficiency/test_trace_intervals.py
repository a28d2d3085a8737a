"""The busy-time arithmetic: overlapping intervals count once, windows clip them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from babysit.efficiency.trace_intervals import covered, covered_each, merge


def test_overlapping_and_touching_intervals_merge_into_one():
    assert merge([(30, 60), (10, 40), (60, 70), (90, 95)]) == [(10, 70), (90, 95)]


def test_an_interval_inside_another_adds_nothing():
    assert merge([(0, 100), (20, 30)]) == [(0, 100)]


def test_coverage_is_clipped_to_the_window():
    merged = merge([(0, 10), (20, 30), (40, 50)])
    assert covered(merged, 5, 45) == 5 + 10 + 5
    assert covered(merged, 10, 20) == 0
    assert covered(merged, 60, 70) == 0
    assert covered([], 0, 10) == 0


_interval = st.tuples(st.integers(0, 60), st.integers(0, 20)).map(lambda p: (p[0], p[0] + p[1]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_interval, max_size=12), _interval)
def test_coverage_matches_counting_unit_slots(intervals, window):
    # Integer endpoints: a unit slot [t, t+1) is busy when any interval holds it.
    busy = {t for start, end in intervals for t in range(start, end)}
    expected = sum(1 for t in range(window[0], window[1]) if t in busy)
    assert covered(merge(intervals), *window) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(_interval, max_size=12), st.lists(_interval, max_size=8))
def test_one_walk_over_sorted_windows_matches_each_window_alone(intervals, windows):
    merged, ordered = merge(intervals), sorted(windows)  # overlapping windows too
    assert covered_each(merged, ordered) == [covered(merged, *w) for w in ordered]

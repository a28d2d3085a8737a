"""The polling cadence of references/common-issues.md, "How often does babysit look?"."""

from __future__ import annotations

from dataclasses import replace

import pytest

from babysit.config import PollSettings
from babysit.core.backoff import PollOutcome, next_interval

QUIET = PollOutcome()
POLL = PollSettings()


def test_quiet_polls_multiply_by_one_and_a_half_up_to_the_cap():
    interval, seen = 30.0, []
    for _ in range(8):
        interval = next_interval(interval, QUIET, POLL)
        seen.append(round(interval, 2))
    assert seen == [45.0, 67.5, 101.25, 151.88, 227.81, 300.0, 300.0, 300.0]


@pytest.mark.parametrize("outcome", [
    PollOutcome(anomaly=True),
    PollOutcome(loss_change=0.06),
    PollOutcome(new_epoch=True),
    PollOutcome(state_changed=True),
])
def test_each_reset_condition_goes_back_to_the_initial_interval(outcome: PollOutcome):
    assert next_interval(200.0, outcome, POLL) == 30.0


def test_loss_change_of_five_percent_or_less_keeps_backing_off():
    assert next_interval(30.0, PollOutcome(loss_change=0.05), POLL) == 45.0


def test_no_backoff_keeps_the_interval_fixed():
    fixed = replace(POLL, backoff=False, interval=10.0)
    assert next_interval(10.0, QUIET, fixed) == 10.0
    assert next_interval(10.0, PollOutcome(anomaly=True), fixed) == 10.0


def test_schedule_walks_its_list_while_healthy_and_restarts_after_an_anomaly():
    schedule = replace(POLL, schedule=(600.0, 1200.0, 1800.0, 3600.0))
    seen, interval = [], 600.0
    for outcome in [QUIET, QUIET, QUIET, QUIET, PollOutcome(anomaly=True), QUIET]:
        interval = next_interval(interval, outcome, schedule)
        seen.append(interval)
    assert seen == [1200.0, 1800.0, 3600.0, 3600.0, 600.0, 1200.0]


def test_reviewer_wait_brings_the_next_poll_forward():
    assert next_interval(200.0, PollOutcome(look_sooner=True), POLL) == 30.0


def test_durations_and_schedules_parse_as_people_write_them():
    from babysit.durations import parse_duration, parse_schedule

    assert [parse_duration(t) for t in ("90", "45s", "10m", "1.5h", "2d")] == [
        90, 45, 600, 5400, 172800]
    assert parse_schedule("10m,20m,30m,60m") == (600, 1200, 1800, 3600)
    with pytest.raises(ValueError, match="must not decrease"):
        parse_schedule("30m,10m")
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration("soon")

"""The typed request a watch command line becomes (babysit/watch_request.py)."""

from __future__ import annotations

import pytest

from babysit.watch_request import RequestError, WatchRequest


def test_the_kinds_flags_are_kept_apart_from_the_shared_options():
    asked = WatchRequest.from_flags({"target": ["a.log", "b.log"], "once": True,
                                     "json_output": True, "pid": None, "tracking_uri": None,
                                     "namespace": "ml"})
    assert asked.target == ("a.log", "b.log") and asked.once and asked.json_output
    assert dict(asked.kind_values) == {"pid": None, "tracking_uri": None, "namespace": "ml"}


@pytest.mark.parametrize("flags, flag", [
    ({"timeout": "soon"}, "--timeout"),
    ({"schedule": "10m,x"}, "--schedule"),
    ({"total_steps": 0}, "--total-steps"),
    ({"judge_timeout": 0.0}, "--judge-timeout"),
    ({"precision": "fp64"}, "--precision"),
])
def test_a_value_that_cannot_work_names_its_flag(flags: dict, flag: str):
    with pytest.raises(RequestError) as raised:
        WatchRequest.from_flags(flags)
    assert raised.value.flag == flag


def test_a_schedule_sets_the_first_interval_and_the_cap():
    poll = WatchRequest.from_flags({"schedule": "10m,20m,60m"}).poll_overrides()
    assert (poll["interval"], poll["max_interval"]) == (600.0, 3600.0)
    assert poll["schedule"] == (600.0, 1200.0, 3600.0)


def test_the_command_that_watches_again_stops_the_way_the_caller_did():
    asked = WatchRequest.from_flags({"json_output": True, "until_event": True,
                                     "timeout": "100s", "gpu": "h100-sxm", "interval": 2.5,
                                     "notify": ["slack://secret"], "run_id": "r1"})
    args = asked.mode_args()
    assert args[:2] == ["--until-event", "--json"]
    assert args[2:4] == ["--timeout", "100s"] and "--gpu" in args and "2.5" in args
    assert not any("slack" in a or a == "r1" for a in args)

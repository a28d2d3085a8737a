"""A launch the log shows after a failure begins once it prints more than the start-up
its first launch printed (babysit/parsing/launches.py): a rerun whose log stops at its
start-up has shown nothing of its own, and the failure before it is how the run ended;
one that goes on (training, or a line its first launch never printed) is the run the log
holds. The lines are the shape of sealed-14's DDRNet paste, rebuilt small: a CUDA error
in the first iteration, the shell's prompt with the same command run again under
`CUDA_LAUNCH_BLOCKING=1`, and only its start-up."""

from __future__ import annotations

from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.parser import LogParser
from tests.core.test_endings import once

_START = "Found 120 train images.\nFound 20 val images.\n"


def _iteration(n: int) -> str:
    return f"Epoch: [1/50] Iter: [{n}/12] LR: 0.00010000 Loss: {7.5 - n / 10:.8f}\n"


_CRASH = ("Traceback (most recent call last):\n"
          "  File \"tools/train.py\", line 97, in main\n"
          "    scaler.scale(loss).backward()\n"
          "RuntimeError: CUDA error: an illegal memory access was encountered\n"
          "(seg) ann@box:~/seg$ CUDA_LAUNCH_BLOCKING=1 python tools/train.py --cfg a.yaml\n")
_FIRST_LAUNCH = _START + _iteration(1) + _iteration(2) + _CRASH


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


def _open_types(data: dict) -> set[str]:
    return {a["type"] for a in data["anomalies_detected"] if "resolved:" not in a["description"]}


def test_a_rerun_that_printed_only_its_start_up_leaves_the_run_failed(tmp_path: Path):
    data = once(tmp_path, _FIRST_LAUNCH + _START)
    assert _verdict(data) == ("NO-GO", "FAILED")
    assert {"crash", "cuda-error"} <= _open_types(data)


def test_a_rerun_that_trains_is_the_run_going_on(tmp_path: Path):
    data = once(tmp_path, _FIRST_LAUNCH + _START + _iteration(1) + _iteration(2))
    assert _verdict(data) == ("CONDITIONAL", "RUNNING")
    assert "cuda-error" not in _open_types(data)


def test_a_rerun_past_the_start_up_its_first_launch_printed_is_the_run_going_on(
        tmp_path: Path):
    data = once(tmp_path, _FIRST_LAUNCH + _START + "Running initial evaluation...\n")
    assert _verdict(data) == ("CONDITIONAL", "RUNNING")


def test_the_launch_begins_at_the_first_line_past_its_start_up():
    parser = LogParser()
    records = parser.feed_lines((_FIRST_LAUNCH + _START + _iteration(1)).splitlines())
    launched = [(r.step, e.line) for r in records for e in r.events
                if e.kind is EventKind.LAUNCHED]
    # (the event names the start-up line the launch began with)
    assert [line for _, line in launched] == ["Found 120 train images."]


def test_no_launch_begins_while_only_the_start_up_came_again():
    records = LogParser().feed_lines((_FIRST_LAUNCH + _START).splitlines())
    assert not [e for r in records for e in r.events if e.kind is EventKind.LAUNCHED]

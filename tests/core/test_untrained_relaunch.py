"""A launch the log shows after a failure (its start-up printed again) that never trained
before the log stopped does not replace the failure: the run FAILED of it, and what the
failure raised stands (babysit/core/lifecycle.py, `_relaunch_never_trained`). One that
trains is the run going on. The lines are the shape of sealed-14's DDRNet paste, rebuilt
small: a CUDA error in the first iteration, the shell's prompt with the same command run
again under `CUDA_LAUNCH_BLOCKING=1`, and only its start-up."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_endings import once

_START = "Found 120 train images.\nFound 20 val images.\n"


def _iteration(n: int) -> str:
    return f"Epoch: [1/50] Iter: [{n}/12] LR: 0.00010000 Loss: {7.5 - n / 10:.8f}\n"


_CRASH = ("Traceback (most recent call last):\n"
          "  File \"tools/train.py\", line 97, in main\n"
          "    scaler.scale(loss).backward()\n"
          "RuntimeError: CUDA error: an illegal memory access was encountered\n"
          "(seg) ann@box:~/seg$ CUDA_LAUNCH_BLOCKING=1 python tools/train.py --cfg a.yaml\n")


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


def test_a_relaunch_that_printed_only_its_start_up_leaves_the_run_failed(tmp_path: Path):
    data = once(tmp_path, _START + _iteration(1) + _iteration(2) + _CRASH + _START)
    assert _verdict(data) == ("NO-GO", "FAILED")
    open_types = {a["type"] for a in data["anomalies_detected"]
                  if "resolved:" not in a["description"]}
    assert {"crash", "cuda-error"} <= open_types


def test_a_relaunch_that_trains_is_the_run_going_on(tmp_path: Path):
    data = once(tmp_path, _START + _iteration(1) + _iteration(2) + _CRASH + _START
                + _iteration(1) + _iteration(2) + _iteration(3))
    assert _verdict(data) == ("CONDITIONAL", "RUNNING")

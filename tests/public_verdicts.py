"""The public logs' written expectations and how a verdict is held to them, shared by
the test of each log read at once (tests/test_public_logs.py) and replayed live
(tests/test_public_logs_live.py): two files, so that two workers share the ~300 verdicts."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

PUBLIC = FIXTURES / "logs" / "public"
EXPECTED: dict[str, dict[str, Any]] = json.loads((PUBLIC / "expected.json").read_text())
# Where a trend rule (rather than one line) fires depends on its window: the first step
# is checked for anomalies a single line reveals.
_ONE_LINE = {"nan-inf", "oom", "crash", "cuda-error", "nccl", "checkpoint-failure"}


def cases(expected: dict[str, dict[str, Any]], key: str = "known_failure") -> list[Any]:
    return [pytest.param(name, marks=pytest.mark.xfail(reason=e[key], strict=True))
            if e.get(key) else name for name, e in sorted(expected.items())
            if key == "known_failure" or not e.get("known_failure")]


def fresh_copy(tmp_path: Path, name: str) -> Path:
    log = tmp_path / name
    shutil.copyfile(PUBLIC / name, log)
    now = time.time()
    os.utime(log, (now, now))  # a log written just now: its age on disk is no evidence
    return log


def _check_insisted(data: dict[str, Any], expect: dict[str, Any], live: bool) -> None:
    """An issue-23 entry: the decision and state, the anomaly types it insists on, no
    open high or blocker on a healthy run, and the step when it names one."""
    assert data["decision"] == expect["decision"], data["summary"]
    if not live:
        assert data["terminal_state"] == expect["terminal_state"], data["summary"]
    types = {a["type"] for a in data["anomalies_detected"]}
    stopped_early = live and data["decision"] == "NO-GO"
    if not stopped_early:
        assert set(expect["must_flag"]) <= types, data["anomalies_detected"]
    if expect.get("healthy"):
        assert not [a for a in data["anomalies_detected"] if a["severity"] in ("high", "blocker")
                    and "resolved:" not in a["description"] and a["type"] != "stalled"]


def check(data: dict[str, Any], expect: dict[str, Any], live: bool = False) -> None:
    if "must_flag" in expect:
        _check_insisted(data, expect, live)
        return
    assert data["decision"] == expect["decision"], data["summary"]
    if not live:
        assert data["terminal_state"] == expect["terminal_state"], data["summary"]
    types = {a["type"] for a in data["anomalies_detected"] if a["type"] != "stalled"}
    stopped_early = live and any(a["severity"] == "blocker" and "resolved:" not in
                                 a["description"] for a in data["anomalies_detected"])
    if stopped_early:  # the watch ends at the first blocker; the rest is never read
        assert types and types <= set(expect["anomalies"]), data["anomalies_detected"]
    else:
        assert types == set(expect["anomalies"]), data["anomalies_detected"]
    if not live:
        assert data["total_steps"] == expect["last_step"]
    elif not stopped_early and expect["last_step"] is not None:
        # A watch stops when the run ends; lines written after that are not waited for.
        assert expect["last_step"] * 0.95 <= data["total_steps"] <= expect["last_step"]
    if expect["target_steps"] is not None:
        assert data["target_steps"] == expect["target_steps"]
    first = expect["first_anomaly_step"]
    if expect["anomalies"] and expect["anomalies"][0] in _ONE_LINE and not live:
        steps = [a["step"] for a in data["anomalies_detected"]
                 if a["type"] in expect["anomalies"]]
        assert steps[0] == first

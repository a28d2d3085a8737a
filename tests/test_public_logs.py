"""Real logs other people posted (issue threads, committed training logs), each judged
against the verdict decided by reading it before babysit ever ran on it. Sources and
cuts: tests/fixtures/logs/public/SOURCES.md; verdicts and the reasoning behind them:
expected.json (a few were revised after a second reading, each with its reason)."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.targets.log_file import LocalLogTarget
from tests.conftest import FIXTURES, FakeClock, artifact_in

PUBLIC = FIXTURES / "logs" / "public"
EXPECTED: dict[str, dict[str, Any]] = json.loads((PUBLIC / "expected.json").read_text())
# Where a trend rule (rather than one line) fires depends on its window: the first step
# is checked for anomalies a single line reveals.
_ONE_LINE = {"nan-inf", "oom", "crash", "cuda-error", "nccl", "checkpoint-failure"}


def test_every_public_log_has_an_expectation_and_a_source():
    logs = sorted(p.name for p in PUBLIC.glob("*.log"))
    assert logs == sorted(EXPECTED)
    sources = (PUBLIC / "SOURCES.md").read_text(encoding="utf-8")
    assert all(name in sources for name in logs)


def _copy(tmp_path: Path, name: str) -> Path:
    log = tmp_path / name
    shutil.copyfile(PUBLIC / name, log)
    now = time.time()
    os.utime(log, (now, now))  # a log written just now: its age on disk is no evidence
    return log


def _check(data: dict[str, Any], expect: dict[str, Any], live: bool = False) -> None:
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


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_once_verdict_on_a_public_log(tmp_path: Path, name: str):
    log = _copy(tmp_path, name)
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path),
                NullObserver(), clock=FakeClock())
    _check(artifact_in(tmp_path), EXPECTED[name])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_live_replay_of_a_public_log_in_uneven_pieces(tmp_path: Path, name: str):
    """The same log written in 7 uneven pieces, cut mid-line and mid-character, one per
    poll, and then the run goes quiet: the same decision as reading it at once."""
    source = (PUBLIC / name).read_bytes()
    cuts = sorted({len(source) * k // 7 + 3 * k for k in range(1, 7)})
    pieces = [source[a:b] for a, b in zip([0, *cuts], [*cuts, len(source)], strict=True)]
    log = tmp_path / name
    log.write_bytes(pieces[0])
    rest = iter(pieces[1:])

    def grow(_: FakeClock) -> None:
        with log.open("ab") as handle:
            handle.write(next(rest, b""))

    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), max_polls=len(pieces) + 3),
                         out_dir=tmp_path), NullObserver(), clock=FakeClock(on_sleep=grow))
    _check(artifact_in(tmp_path), EXPECTED[name], live=True)

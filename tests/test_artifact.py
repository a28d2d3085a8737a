"""The artifact: schema-valid, NaN-safe, written atomically."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from babysit.artifact import ARTIFACT_NAME, verdict_to_dict, write_artifact
from babysit.model import (
    Anomaly,
    AnomalyType,
    Confidence,
    Decision,
    Severity,
    TerminalState,
    Verdict,
)
from tests.conftest import validate_artifact


def make_verdict(**changes) -> Verdict:
    base = dict(
        run_id="r1", target="./train.log", target_type="local-log",
        terminal_state=TerminalState.RUNNING, decision=Decision.NO_GO,
        confidence=Confidence.HIGH, summary="NO-GO — nan", total_steps=349, target_steps=5000,
        final_metrics={"loss": float("nan"), "lr": 3e-4, "x": float("-inf")},
        best_checkpoint=None,
        anomalies=(Anomaly(AnomalyType.NAN_INF, Severity.BLOCKER, 349, "loss=nan"),),
        findings=(), next_commands=(), actions=(), duration_seconds=12.5, stop_reason="nan",
    )
    base.update(changes)
    return Verdict(**base)  # type: ignore[arg-type]


def test_artifact_matches_the_schema_and_spells_nan_as_strings(tmp_path: Path):
    data = verdict_to_dict(make_verdict(), datetime(2026, 1, 1, tzinfo=timezone.utc))
    path = write_artifact(data, tmp_path)
    loaded = validate_artifact(path)
    assert loaded["final_metrics"] == {"loss": "nan", "lr": 3e-4, "x": "-inf"}
    assert loaded["timestamp"] == "2026-01-01T00:00:00Z"
    assert loaded["anomalies_detected"][0]["action_taken"] == "none"


def test_write_replaces_atomically_and_leaves_no_temp_files(tmp_path: Path):
    write_artifact({"a": 1}, tmp_path)
    write_artifact({"a": 2}, tmp_path)
    assert json.loads((tmp_path / ARTIFACT_NAME).read_text()) == {"a": 2}
    assert os.listdir(tmp_path) == [ARTIFACT_NAME]


def test_failed_write_keeps_the_previous_artifact(tmp_path: Path):
    write_artifact({"a": 1}, tmp_path)
    with pytest.raises(ValueError):
        write_artifact({"a": float("nan")}, tmp_path)  # JSON has no NaN: refused
    assert json.loads((tmp_path / ARTIFACT_NAME).read_text()) == {"a": 1}
    assert os.listdir(tmp_path) == [ARTIFACT_NAME]


def test_artifact_is_readable_by_other_tools(tmp_path: Path):
    path = write_artifact({"a": 1}, tmp_path)
    assert path.stat().st_mode & 0o044 == 0o044

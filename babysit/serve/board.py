"""One run as the dashboard shows it, kept up to date by the watch's reports.

Measured values (the step, the metrics and their curves, GPU telemetry), estimates (the
efficiency figures, with their status) and interpretation (anomalies, health, the
verdict) are kept in separate fields; a value the run did not report stays missing."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from babysit.artifact import json_number
from babysit.core.reports import PollReport, SummaryReport
from babysit.model import Anomaly, Severity, Verdict, utc_text

_HEALTH = {Severity.BLOCKER: "critical", Severity.HIGH: "warning", Severity.MEDIUM: "notice",
           Severity.LOW: "notice"}


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _iso(moment: datetime) -> str:
    return utc_text(moment)


class RunBoard:
    def __init__(self, target: str, kind: str, run_id: str) -> None:
        self._lock = threading.Lock()
        self._entry: dict[str, Any] = {
            "id": run_id, "target": target, "kind": kind, "url": None,
            "babysit_pid": os.getpid(), "started_at": _iso(datetime.now(timezone.utc)),
            "updated_at": None, "state": "RUNNING", "health": "ok",
            "step": None, "target_steps": None, "epoch": None, "eta_seconds": None,
            "latest": {}, "series": {}, "gpu": None, "efficiency": None,
            "anomalies": [], "actions": [], "awaiting_approval": [], "status": [],
            "verdict": None,
        }
        self._anomalies: dict[tuple[str, int | None, str], dict[str, Any]] = {}

    # --- from the watch ------------------------------------------------------------------

    def report(self, report: PollReport) -> None:
        with self._lock:
            entry = self._entry
            entry.update({
                "updated_at": _iso(report.time), "state": report.state.value,
                "step": report.step, "target_steps": report.target_steps,
                "epoch": report.epoch, "eta_seconds": report.eta_seconds,
                # A metric's value is written as in the artifact and the JSON events:
                # "nan"/"inf"/"-inf" when non-finite (the series' values are plot points:
                # a gap there, its step in `nonfinite`).
                "latest": {k: json_number(v) for k, v in report.metrics.items()},
                "gpu": report.gpu.as_json() if report.gpu else None,
                "efficiency": report.efficiency.to_json() if report.efficiency else None,
                "status": list(report.status),
            })
            if report.url:
                entry["url"] = report.url
            if report.history is not None:
                entry["series"] = {name: _series(points)
                                   for name, points in report.history.items()}
            for anomaly in report.new_anomalies:
                self._add(anomaly)

    def anomaly(self, anomaly: Anomaly) -> None:
        with self._lock:
            self._add(anomaly)

    def summary(self, report: SummaryReport) -> None:
        with self._lock:
            for anomaly in (*report.open_anomalies, *report.resolved_anomalies):
                self._add(anomaly)
            self._entry["state"] = report.state.value
            self._health()

    def final(self, verdict: Verdict, artifact: Mapping[str, Any]) -> None:
        with self._lock:
            for anomaly in verdict.anomalies:
                self._add(anomaly)
            self._entry.update({
                "state": verdict.terminal_state.value,
                "actions": list(artifact.get("actions", [])),
                "awaiting_approval": [a["reason"] for a in artifact.get("actions", [])
                                      if a.get("status") == "needs-approval"],
                "verdict": dict(artifact),
            })
            self._health()

    def _add(self, anomaly: Anomaly) -> None:
        key = (anomaly.type.value, anomaly.step, anomaly.key)
        self._anomalies[key] = {
            "type": anomaly.type.value, "severity": anomaly.severity.value,
            "step": anomaly.step, "description": anomaly.description,
            "action_taken": anomaly.action_taken, "resolved": anomaly.resolved}
        self._entry["anomalies"] = list(self._anomalies.values())
        self._health()

    def _health(self) -> None:
        open_ = [a for a in self._anomalies.values() if not a["resolved"]]
        worst = max((Severity(a["severity"]) for a in open_), key=lambda s: s.rank,
                    default=None)
        self._entry["health"] = "ok" if worst is None else _HEALTH[worst]

    # --- for the API ----------------------------------------------------------------------

    def entry(self) -> dict[str, Any]:
        """A copy that later reports do not change."""
        with self._lock:
            entry = dict(self._entry)
            entry["series"] = {k: dict(v) for k, v in self._entry["series"].items()}
            entry["anomalies"] = [dict(a) for a in self._entry["anomalies"]]
            return entry


def _series(points: list[tuple[int, float]]) -> dict[str, list[Any]]:
    """Steps and values for a chart; a non-finite value is null there and its step is
    listed in `nonfinite`, so a NaN is marked, not drawn as a number."""
    return {"steps": [s for s, _ in points], "values": [_number(v) for _, v in points],
            "nonfinite": [s for s, v in points if not math.isfinite(v)]}

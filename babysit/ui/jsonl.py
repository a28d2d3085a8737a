"""Agent output: one JSON object per line on stdout, nothing else there.

Events: baseline, poll, anomaly, summary, final (see references/artifact.md). Each
carries `event` and `time`; an agent can act on these lines alone."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import IO, Any

from babysit.artifact import json_number
from babysit.core.reports import OutputClosed, PollReport, SummaryReport
from babysit.model import Anomaly, Verdict, utc_text
from babysit.ui.streams import GuardedStream


def _numbers(metrics: Mapping[str, float]) -> dict[str, float | str]:
    return {k: json_number(v) for k, v in metrics.items()}


def _anomaly(anomaly: Anomaly) -> dict[str, Any]:
    return {"type": anomaly.type.value, "severity": anomaly.severity.value,
            "step": anomaly.step, "description": anomaly.description,
            "action_taken": anomaly.action_taken, "resolved": anomaly.resolved}


def poll_event(kind: str, report: PollReport) -> dict[str, Any]:
    return {
        "event": kind,
        "time": utc_text(report.time),
        "target": report.target,
        "poll": report.poll,
        "state": report.state.value,
        "step": report.step,
        "target_steps": report.target_steps,
        "epoch": report.epoch,
        "metrics": _numbers(report.metrics),
        "throughput": ({"value": json_number(report.throughput[0]), "unit": report.throughput[1]}
                       if report.throughput else None),
        "gpu": report.gpu.as_json() if report.gpu else None,
        "eta_seconds": None if report.eta_seconds is None else round(report.eta_seconds, 1),
        "next_poll_seconds": report.next_poll_seconds,
        "new_lines": report.new_lines,
        "formats": list(report.formats),
        "notices": list(report.notices),
        "new_anomalies": [_anomaly(a) for a in report.new_anomalies],
        "status": list(report.status),  # a cloud service's own description of the run
        "efficiency": report.efficiency.to_json() if report.efficiency is not None else None,
        "reading": report.reading.to_json() if report.reading is not None else None,
    }


class JsonObserver:
    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = GuardedStream(stream)

    def _write(self, payload: Mapping[str, Any]) -> None:
        self.stream.write(json.dumps(payload, allow_nan=False, ensure_ascii=False) + "\n")
        self.stream.flush()

    def baseline(self, report: PollReport) -> None:
        self._write(poll_event("baseline", report))

    def poll(self, report: PollReport) -> None:
        self._write(poll_event("poll", report))

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None:
        self._write({"event": "anomaly", "time": utc_text(report.time),
                     "target": report.target, **_anomaly(anomaly)})

    def summary(self, report: SummaryReport) -> None:
        self._write({
            "event": "summary",
            "time": utc_text(report.time),
            "target": report.target,
            "reason": report.reason,
            "polls": report.polls,
            "watched_seconds": round(report.watched_seconds, 3),
            "state": report.state.value,
            "step": report.step,
            "target_steps": report.target_steps,
            "steps_per_second": report.steps_per_second,
            "metrics": _numbers(report.metrics),
            "open_anomalies": [_anomaly(a) for a in report.open_anomalies],
            "resolved_anomalies": len(report.resolved_anomalies),
            "checkpoint": report.checkpoint,
        })

    def notice(self, text: str) -> None:
        pass  # notices travel inside the poll events

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None:
        if self.stream.closed_reason is not None:
            return
        with contextlib.suppress(OutputClosed):
            self._final(verdict, artifact, artifact_path)

    def _final(self, verdict: Verdict, artifact: Mapping[str, object],
               artifact_path: str | None) -> None:
        self._write({"event": "final", "time": artifact.get("timestamp"),
                     "artifact_path": artifact_path, "stop_reason": verdict.stop_reason,
                     "artifact": dict(artifact)})

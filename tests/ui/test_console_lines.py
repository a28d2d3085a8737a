"""Lines of the summary and the final block, as a person reads them: every figure with
its unit, every anomaly named, no placeholder standing alone."""

from __future__ import annotations

import io
import re
from datetime import datetime, timezone

from babysit.core.efficiency_meter import Efficiency
from babysit.core.reports import SummaryReport
from babysit.model import Anomaly, AnomalyType, Severity, TerminalState
from babysit.ui.console import ConsoleObserver, efficiency_lines


def summary_text(**fields: object) -> str:
    report = SummaryReport(**{  # type: ignore[arg-type]
        "time": datetime(2026, 12, 1, tzinfo=timezone.utc), "target": "train.log", "polls": 5,
        "watched_seconds": 150.0, "state": TerminalState.RUNNING, "step": 120,
        "target_steps": 300, "steps_per_second": 1.5, "metrics": {"loss": 2.1},
        "open_anomalies": (), "resolved_anomalies": (), "checkpoint": None, "formats": (),
        "reason": "every 5 polls", **fields})
    out = io.StringIO()
    ConsoleObserver(out, color=False).summary(report)
    return out.getvalue()


def test_resolved_anomalies_are_named_not_only_counted():
    spike = Anomaly(AnomalyType.LOSS_SPIKE, Severity.HIGH, 80, "loss spike", resolved=True)
    assert "Resolved: loss-spike@80 (high)" in summary_text(resolved_anomalies=(spike,))


def test_an_mfu_the_run_printed_in_percent_keeps_its_percent_sign():
    text = summary_text(metrics={"loss": 2.1, "mfu": 16.91, "train/mfu": 0.17})
    assert "mfu=16.91%" in text
    assert "train/mfu=0.17" in text and "train/mfu=0.17%" not in text  # a tracker's: a ratio


def test_efficiency_with_nothing_measured_says_why_on_its_own_line():
    lines = efficiency_lines(Efficiency("unavailable", reason="no GPU type (pass --gpu)"))
    assert lines == ["Efficiency: MFU unavailable: no GPU type (pass --gpu)"]
    assert not any(line.rstrip().endswith("—") for line in lines)


def _coloured_summary(monkeypatch, no_color: str | None) -> str:
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich writes escapes as to a terminal
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    spike = Anomaly(AnomalyType.LOSS_SPIKE, Severity.HIGH, 80, "loss spike")
    report = SummaryReport(
        time=datetime(2026, 12, 1, tzinfo=timezone.utc), target="train.log", polls=5,
        watched_seconds=150.0, state=TerminalState.RUNNING, step=120, target_steps=300,
        steps_per_second=1.5, metrics={"loss": 2.1}, open_anomalies=(spike,),
        resolved_anomalies=(), checkpoint=None, formats=(), reason="every 5 polls")
    out = io.StringIO()
    ConsoleObserver(out).summary(report)  # colour left to the environment, as the CLI does
    return out.getvalue()


def test_no_color_in_the_environment_turns_the_colours_off(monkeypatch):
    # no-color.org: NO_COLOR set to anything non-empty; bold and dim may stay.
    assert re.search(r"\x1b\[[0-9;]*3\dm", _coloured_summary(monkeypatch, None))
    assert not re.search(r"\x1b\[[0-9;]*3\dm", _coloured_summary(monkeypatch, "1"))

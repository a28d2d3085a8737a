"""Human output: the seed's one-line progress reports, anomaly lines, summaries and
the final block, through rich (colour on a terminal, plain text in a pipe).

Every piece of text that came from the watched run goes through `Text`, never markup,
so a log line containing `[bold]` is printed as written."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping
from typing import IO

from rich.console import Console
from rich.text import Text

from babysit.artifact import ARTIFACT_NAME, STUB_NAME
from babysit.core.efficiency_meter import Efficiency
from babysit.core.reports import OutputClosed, PollReport, SummaryReport
from babysit.metric_names import key_metrics
from babysit.model import Anomaly, Decision, Severity, TerminalState, Verdict
from babysit.sanitise import outbound
from babysit.ui.streams import GuardedStream
from babysit.units import format_duration, format_interval, format_value

_SEVERITY_STYLE = {
    Severity.BLOCKER: "bold red",
    Severity.HIGH: "red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
}
_DECISION_STYLE = {Decision.GO: "bold green", Decision.NO_GO: "bold red",
                   Decision.CONDITIONAL: "bold yellow"}
_INDENT = " " * 11


def progress_line(report: PollReport) -> str:
    """`Step 1200/10000 (12%) | loss=0.342 | lr=1e-4 | grad_norm=0.8 | 142 samples/s`"""
    parts: list[str] = []
    if report.step is not None:
        unit = "Record" if report.reading is not None and report.reading.progress == "record" \
            else "Step"
        head = f"{unit} {report.step}"
        if report.target_steps:
            head += f"/{report.target_steps}"
            if report.percent is not None:
                head += f" ({report.percent:.1f}%)" if report.percent < 10 else \
                    f" ({report.percent:.0f}%)"
        elif report.epoch is not None and report.total_epochs:
            # No planned steps, but the epochs are counted against a plan: say where the
            # run stands in it (`Step 200, epoch 5/10`), not a bare step.
            head += f", epoch {format_value(report.epoch)}/{report.total_epochs}"
        parts.append(head)
    elif report.epoch is not None:
        parts.append(f"Epoch {format_value(report.epoch)}")
    else:
        parts.append("no step seen yet")
    for pair in (report.loss, report.lr, report.grad_norm):
        if pair is not None:
            parts.append(f"{pair[0]}={format_value(pair[1])}")
    if report.throughput is not None:
        value, unit = report.throughput
        parts.append(f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}")
    efficiency = report.efficiency
    if efficiency is not None and efficiency.mfu is not None and \
            report.no_progress_for is None:
        parts.append(efficiency.short())
    return " | ".join(parts)


def efficiency_lines(efficiency: Efficiency | None, gpu_util: float | None = None) -> list[str]:
    """The summary's and the final block's efficiency figures, with their inputs."""
    if efficiency is None:
        return []
    parts = []
    if efficiency.mfu is not None:
        parts.append(efficiency.short())
    if efficiency.tokens_per_second is not None:
        parts.append(f"{efficiency.tokens_per_second:,.0f} tokens/s")
    if efficiency.goodput is not None:
        parts.append(f"goodput {100 * efficiency.goodput:.0f}% of the time watched")
    if not parts and efficiency.status == "unavailable" and not efficiency.reason.startswith(
            "no GPU type"):
        # (nor that the FLOPs per token are unknown, when no token was counted either: a
        # run that is no language model would read it in every summary)
        return []
    if not parts:  # nothing measured: the reason is the line, not a dash and a second line
        lines = [f"Efficiency: MFU unavailable: {efficiency.reason}"]
    else:
        lines = ["Efficiency: " + " | ".join(parts)]
    inputs = efficiency.inputs
    if efficiency.mfu is not None:
        lines.append(f"  MFU estimate: {inputs.get('formula')} FLOPs/token, "
                     f"{inputs.get('gpus')} × {inputs.get('peak_tflops_per_gpu'):g} TFLOP/s "
                     f"({inputs.get('peak_source')})"
                     + (f"; leaves out {efficiency.leaves_out}" if efficiency.leaves_out else ""))
        if gpu_util is not None:
            lines.append(f"  GPU utilisation {gpu_util:.0f}% is not MFU: it counts the time a "
                         f"kernel runs, not the useful FLOPs it does")
    elif parts:
        lines.append(f"  MFU unavailable: {efficiency.reason}")
    if efficiency.log_mfu is not None:
        lines.append(f"  the run's own MFU: {100 * efficiency.log_mfu:.3g}%")
    if efficiency.disagreement:
        lines.append(f"  note: {efficiency.disagreement}")
    return lines


def status_line(report: PollReport) -> str:
    """`ETA: ~1h 23m | next poll in 45s` (GPU figures join here when known)."""
    parts: list[str] = []
    if report.gpu:
        parts.append(report.gpu.text)
    if report.state is not TerminalState.RUNNING:
        parts.append(f"State: {report.state.value}")
    elif report.no_progress_for is not None:
        parts.append(f"no progress for {format_duration(report.no_progress_for)} "
                     f"(rate and ETA unknown)")
    elif report.eta_seconds is not None:
        parts.append(f"ETA: ~{format_duration(report.eta_seconds)}")
    if report.next_poll_seconds is not None and report.reads_as_written:
        # (a local log's lines are read as written: the interval is only the report's)
        parts.append(f"next report in {format_interval(report.next_poll_seconds)}, "
                     f"new lines read as written")
    elif report.next_poll_seconds is not None:
        parts.append(f"next poll in {format_interval(report.next_poll_seconds)}")
    line = " | ".join(parts)
    if report.interval_note:
        line += f"  ← {report.interval_note}"
    return line


class ConsoleObserver:
    def __init__(self, stream: IO[str] | None = None, prefix: str = "",
                 color: bool | None = None) -> None:
        self.stream = GuardedStream(stream)
        self.console = Console(file=self.stream, highlight=False, soft_wrap=True,  # type: ignore[arg-type]
                               # None leaves NO_COLOR (no-color.org) to rich: a False
                               # here would override the user's setting
                               force_terminal=color, no_color=True if color is False else None)
        self.prefix = prefix
        self._service_status: tuple[str, ...] = ()  # the last full block a service gave
        self._subject = ""  # what the target is, in words (a process's command line)
        self._efficiency: Efficiency | None = None  # the latest figures, for the final block
        self._gpu_util: float | None = None

    def _stamp(self, report_time: object) -> Text:
        clock = getattr(report_time, "strftime", None)
        stamp = clock("%H:%M:%S") if clock else "--:--:--"
        text = Text(f"{self.prefix} " if self.prefix else "")
        text.append(f"[{stamp}] ", style="dim")
        return text

    def baseline(self, report: PollReport) -> None:
        if report.status:
            self._service_block(report)
            return
        line = self._stamp(report.time)
        formats = ", ".join(report.formats) if report.formats else "not recognised yet"
        self._subject = report.subject
        what = f"{report.target} — {report.subject}" if report.subject else report.target
        line.append(f"Watching {what} (log format: {formats})")
        self.console.print(line)
        if report.reading is not None and report.reading.lines:
            self.console.print(Text(f"{_INDENT}Read: {report.reading.describe()}", style="dim"))
        self._progress(report)

    def poll(self, report: PollReport) -> None:
        if report.headline:
            self._service_line(report)
            return
        self._progress(report)

    def _service_block(self, report: PollReport) -> None:
        """A cloud run's full report: the service's own lines, then what its logs said."""
        self._service_status = report.status
        line = self._stamp(report.time)
        line.append(report.status[0])
        self.console.print(line)
        for text in report.status[1:]:
            self.console.print(Text(_INDENT + text))
        self._service_tail(report)

    def _service_line(self, report: PollReport) -> None:
        """`[10:02:00] Tasks: 1 SUCCEEDED, 1 RUNNING (model-training — 12m elapsed) — OK`"""
        self._service_status = report.status or self._service_status
        first_line, *more = report.headline.split("\n")
        line = self._stamp(report.time)
        line.append(first_line)
        if report.new_anomalies:
            first = report.new_anomalies[0]
            line.append(f" — ANOMALY: {first.type.value}", style=_SEVERITY_STYLE[first.severity])
        else:
            line.append(" — OK", style="green")
        self.console.print(line)
        for text in more:
            self.console.print(Text(_INDENT + text))
        self._service_tail(report)

    def _service_tail(self, report: PollReport) -> None:
        self._remember(report)
        if report.step is not None or report.loss is not None:
            self.console.print(Text(_INDENT + "Recent logs: " + progress_line(report)))
        status = status_line(report)
        if status:
            self.console.print(Text(_INDENT + status, style="dim"))

    def _remember(self, report: PollReport) -> None:
        self._efficiency = report.efficiency or self._efficiency
        util = report.gpu.util_percent if report.gpu else None
        self._gpu_util = float(util) if util is not None else self._gpu_util

    def _progress(self, report: PollReport) -> None:
        self._remember(report)
        line = self._stamp(report.time)
        line.append(progress_line(report))
        self.console.print(line)
        status = status_line(report)
        if status:
            self.console.print(Text(_INDENT + status, style="dim"))

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None:
        line = self._stamp(report.time)
        where = f" at step {anomaly.step}" if anomaly.step is not None else ""
        line.append(f"ANOMALY ({anomaly.severity.value}) {anomaly.type.value}{where}: ",
                    style=_SEVERITY_STYLE[anomaly.severity])
        line.append(anomaly.description)
        self.console.print(line)

    def notice(self, text: str) -> None:
        self.console.print(Text(f"{self.prefix + ' ' if self.prefix else ''}note: {text}",
                                style="cyan"))

    def summary(self, report: SummaryReport) -> None:
        if report.reason == "stopping":
            return  # the final block follows immediately
        polls = f"{report.polls} poll" + ("s" if report.polls != 1 else "")
        self.console.print(Text(f"── summary after {polls}, "
                                f"{format_duration(report.watched_seconds)} watched ──",
                                style="bold"))
        steps = "?" if report.step is None else str(report.step)
        if report.target_steps:
            steps += f"/{report.target_steps}"
        rate = (f", {report.steps_per_second:.3g} steps/s" if report.steps_per_second else "")
        for text in self._service_status:
            self.console.print(Text(f"  {text}"))
        self.console.print(Text(f"  State: {report.state.value} | Step {steps}{rate}"))
        if report.metrics:
            self.console.print(Text("  Metrics: " + _metrics_text(report.metrics)))
        if report.checkpoint:
            self.console.print(Text(f"  Last checkpoint: {report.checkpoint}"))
        for line in efficiency_lines(report.efficiency, self._gpu_util):
            self.console.print(Text(f"  {line}"))
        if report.open_anomalies:
            self.console.print(Text("  Open anomalies: " + "; ".join(
                _short(a) for a in report.open_anomalies), style="yellow"))
        if report.resolved_anomalies:
            self.console.print(Text("  Resolved: " + "; ".join(
                _short(a) for a in report.resolved_anomalies), style="dim"))

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None:
        if self.stream.closed_reason is not None:
            return  # nobody is reading any more; the verdict file has it all
        with contextlib.suppress(OutputClosed):
            self._final(verdict, artifact_path)

    def _final(self, verdict: Verdict, artifact_path: str | None) -> None:
        out = self.console
        if verdict.unreachable is not None:
            self._unreadable(verdict, artifact_path)
            return
        title = _TITLES[verdict.terminal_state]
        finished = verdict.terminal_state is TerminalState.SUCCEEDED
        if finished and verdict.decision is not Decision.GO:
            # The loop ran to its end, but what it delivers is held back: "Complete" above
            # a NO-GO reads as a success.
            title = (_FINISHED_NO_GO if verdict.decision is Decision.NO_GO
                     else _FINISHED_CONDITIONAL)
        out.print()
        out.print(Text(title, style="bold"))
        out.print(Text("=" * len(title)))
        subject = f" — {self._subject}" if self._subject else ""
        out.print(Text(f"Target: {verdict.target}{subject}"))
        out.print(Text(f"Terminal state: {verdict.terminal_state.value}"))
        steps = "unknown" if verdict.total_steps is None else str(verdict.total_steps)
        total = "?" if verdict.target_steps is None else str(verdict.target_steps)
        reading = verdict.reading
        if reading is not None and reading.progress == "record":
            out.print(Text(f"Records counted: {steps} (the log prints no step)"))
        elif reading is not None and reading.progress == "epoch" and verdict.total_steps is None:
            out.print(Text("Steps completed: none printed (the log counts its epochs)"))
        else:
            out.print(Text(f"Steps completed: {steps}/{total}"))
        if reading is not None and reading.lines:
            out.print(Text(f"Log read: {reading.describe()}"))
        shown = key_metrics(verdict.final_metrics, 10)
        out.print(Text("Final metrics: " + (_metrics_text(shown) or "none")))
        out.print(Text(f"Best checkpoint: {verdict.best_checkpoint or 'none'}"))
        for text in efficiency_lines(self._efficiency, self._gpu_util):
            out.print(Text(text))
        decision = Text("Decision: ")
        decision.append(verdict.decision.value, style=_DECISION_STYLE[verdict.decision])
        out.print(decision)
        out.print(Text(f"Confidence: {verdict.confidence.value}"))
        out.print(Text(f"Reason for stopping: {verdict.stop_reason}"))
        out.print(Text(verdict.summary))
        for finding in verdict.findings:
            line = Text(f"  {finding.id} ")
            line.append(finding.severity.value, style=_SEVERITY_STYLE[finding.severity])
            line.append(f" {finding.title}\n      fix: {finding.fix}")
            out.print(line)
        if verdict.next_commands:
            out.print(Text("Next:"))
            for command in verdict.next_commands:
                out.print(Text(f"  $ {command}"))
        if artifact_path:
            out.print(Text(_written(artifact_path), style="dim"))

    def _unreadable(self, verdict: Verdict, artifact_path: str | None) -> None:
        """Nothing is known about the run: say why once, and what to check."""
        out = self.console
        out.print()
        title = "Babysit could not read the target"
        out.print(Text(title, style="bold"))
        out.print(Text("=" * len(title)))
        out.print(Text(f"Target: {verdict.target}"))
        out.print(Text(f"Problem: {verdict.unreachable}", style="red"))
        decision = Text("Decision: ")
        decision.append(verdict.decision.value, style=_DECISION_STYLE[verdict.decision])
        decision.append(" (nothing is known about the run)")
        out.print(decision)
        for finding in verdict.findings:
            out.print(Text(f"  fix: {finding.fix}"))
        if artifact_path:
            out.print(Text(_written(artifact_path), style="dim"))


def _written(artifact_path: str) -> str:
    # The out-dir is the user's text, yet may carry an escape (a pasted name): the one
    # outbound pass, like every other path babysit prints.
    artifact_path = outbound(artifact_path)
    if os.path.basename(artifact_path) == STUB_NAME:
        return (f"Verdict written to {artifact_path} ({ARTIFACT_NAME} beside it holds the "
                f"verdict on another target: kept)")
    return f"Verdict written to {artifact_path}"


_TITLES = {
    TerminalState.SUCCEEDED: "Training Complete",
    TerminalState.FAILED: "Training Failed",
    TerminalState.CANCELLED: "Training Cancelled",
    TerminalState.TIMEOUT: "Training Timed Out",
    TerminalState.RUNNING: "Babysit stopped (run not finished)",
    TerminalState.ENDED: "Run ended — outcome not confirmed",
}


_FINISHED_NO_GO = "Training Finished — result not usable (NO-GO)"
_FINISHED_CONDITIONAL = "Training Finished — result in doubt (CONDITIONAL)"


def _short(anomaly: Anomaly) -> str:
    where = f"@{anomaly.step}" if anomaly.step is not None else ""
    return f"{anomaly.type.value}{where} ({anomaly.severity.value})"


def _metrics_text(metrics: Mapping[str, float], limit: int = 12) -> str:
    items = list(metrics.items())[:limit]
    return ", ".join(f"{k}={format_value(v)}{'%' if _in_percent(k, v) else ''}"
                     for k, v in items)


def _in_percent(name: str, value: float) -> bool:
    """A metric the run printed in percent (`mfu 16.91%`, `gpu_util_percent`), so that
    `mfu=169.1` is not read as a ratio; core.efficiency_meter reads `mfu` the same way."""
    bare = name.rsplit("/", 1)[-1].lower()
    return math.isfinite(value) and ((bare == "mfu" and "/" not in name)
                                     or bare.endswith(("_percent", "_pct")))

"""Notifications through apprise (`--notify URL`): anomalies of a chosen severity, a
proposal waiting for approval, and the final verdict, with the evidence.

A failing notifier is reported and never stops the watch. The same anomaly type is sent
at most once per `repeat_seconds`. Nothing secret leaves: notification URLs are shown
only by scheme and host, command lines are not sent, and log lines are scrubbed of
anything that looks like a credential."""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from babysit.core.reports import Observer, PollReport, SummaryReport
from babysit.model import Anomaly, Severity, Verdict
from babysit.sanitise import outbound
from babysit.units import format_value

_SEVERITIES = {s.value: s for s in Severity}


def safe_url(url: str) -> str:
    """Only the scheme (`slack://`): the rest of a notification URL, host included, is
    often the token itself (`pbul://TOKEN`, `tgram://BOTID:TOKEN/…`)."""
    match = re.match(r"^([a-z0-9+]+)://", url, re.IGNORECASE)
    return f"{match.group(1)}://…" if match else "an unparsable URL"


Sender = Callable[[Sequence[str], str, str, str], bool]  # (urls, title, body, kind) -> ok


def apprise_send(urls: Sequence[str], title: str, body: str, kind: str) -> bool:
    import apprise

    notifier = apprise.Apprise()
    for url in urls:
        notifier.add(url)
    notify_type = {"failure": apprise.NotifyType.FAILURE,
                   "warning": apprise.NotifyType.WARNING}.get(kind, apprise.NotifyType.INFO)
    return bool(notifier.notify(title=title, body=body, notify_type=notify_type))


@dataclass(frozen=True)
class NotifyPolicy:
    urls: tuple[str, ...]
    min_severity: Severity = Severity.HIGH
    repeat_seconds: float = 3600.0
    deadline_seconds: float = 10.0  # the most babysit waits, at its end, for notifiers


class NotifyingObserver:
    """Wraps the real observer; forwards everything, and notifies on what matters."""

    def __init__(self, inner: Observer, policy: NotifyPolicy, *, log_path: str | None = None,
                 send: Sender = apprise_send, now: Callable[[], float] = time.monotonic) -> None:
        self.inner = inner
        self.policy = policy
        self.log_path = log_path
        self.send = send
        self.now = now
        self._sent: dict[str, float] = {}
        self.failures = 0
        self._courier = Courier(policy.urls, send)

    def baseline(self, report: PollReport) -> None:
        if self.log_path is None and report.log_path is not None:
            self.log_path = existing(report.log_path)
        self.inner.baseline(report)

    def poll(self, report: PollReport) -> None:
        self._report_failures()
        self.inner.poll(report)

    def summary(self, report: SummaryReport) -> None:
        self.inner.summary(report)

    def notice(self, text: str) -> None:
        self.inner.notice(text)

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None:
        self.inner.anomaly(anomaly, report)
        if anomaly.severity.rank < self.policy.min_severity.rank:
            return
        last = self._sent.get(anomaly.type.value)
        if last is not None and self.now() - last < self.policy.repeat_seconds:
            return
        self._sent[anomaly.type.value] = self.now()
        where = f" at step {anomaly.step}" if anomaly.step is not None else ""
        body = [f"{anomaly.severity.value.upper()} {anomaly.type.value}{where}: "
                f"{outbound(anomaly.description)}", f"Run: {report.target}"]
        if report.step is not None:
            body.append(f"Step: {report.step}" + (f"/{report.target_steps}"
                                                  if report.target_steps else ""))
        body += self._metrics(report.metrics) + self._log_tail()
        kind = "failure" if anomaly.severity is Severity.BLOCKER else "warning"
        self._deliver(f"babysit: {anomaly.type.value}{where} in {report.target}",
                      "\n".join(body), kind)

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None:
        self.inner.final(verdict, artifact, artifact_path)
        waiting = [a for a in verdict.actions if a.status.value == "needs-approval"]
        body = [outbound(verdict.summary), f"Terminal state: {verdict.terminal_state.value}",
                f"Steps: {verdict.total_steps}" + (f"/{verdict.target_steps}"
                                                  if verdict.target_steps else "")]
        body += [f"Needs your approval: {outbound(a.reason)}" for a in waiting]
        body += [f"{f.id} {f.severity.value}: {outbound(f.title)} — {outbound(f.fix)}"
                 for f in verdict.findings[:5]]
        body += self._metrics(verdict.final_metrics)
        if artifact_path:
            body.append(f"Verdict file: {artifact_path}")
        kind = "failure" if verdict.decision.value == "NO-GO" else (
            "warning" if verdict.decision.value == "CONDITIONAL" else "info")
        title = (f"babysit: approval needed for {verdict.target}" if waiting else
                 f"babysit: {verdict.decision.value} for {verdict.target}")
        self._deliver(title, "\n".join(body) + "\n" + "\n".join(self._log_tail()), kind)
        self.close()

    def _metrics(self, metrics: Mapping[str, float]) -> list[str]:
        from babysit.metric_names import key_metrics

        shown = key_metrics(metrics, 6)
        return [("Metrics: " + ", ".join(f"{k}={format_value(v)}" for k, v in shown.items()))
                ] if shown else []

    def _log_tail(self, lines: int = 15) -> list[str]:
        if self.log_path is None:
            return []
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(0, 2)
                size = handle.tell()
                handle.seek(max(0, size - 8192))
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return []
        tail = [line.rstrip() for line in text.replace("\r", "\n").splitlines() if line.strip()]
        return ["Last log lines:", *(outbound(line)[:300] for line in tail[-lines:])]

    def _deliver(self, title: str, body: str, kind: str) -> None:
        """Hand the message to the courier; the watch never waits for a notifier."""
        self._courier.post(title, body, kind)
        self._report_failures()

    def _report_failures(self) -> None:
        for detail in self._courier.take_failures():
            self.failures += 1
            where = ", ".join(safe_url(u) for u in self.policy.urls)
            self.inner.notice(f"notification to {where} failed ({detail}); babysit carries on")

    def close(self, deadline: float | None = None) -> None:
        """Give pending notifications until the deadline, then leave them behind."""
        left = self._courier.drain(self.policy.deadline_seconds if deadline is None
                                   else deadline)
        self._report_failures()
        if left:
            self.inner.notice(f"{left} notification(s) still being sent after "
                              f"{self.policy.deadline_seconds:g}s: not waited for")


class Courier:
    """Sends notifications one by one on a daemon thread, each under the policy's overall
    deadline, so a notifier that hangs (a server trickling its answer a byte a second)
    delays nothing and cannot keep babysit from exiting."""

    def __init__(self, urls: Sequence[str], send: Sender) -> None:
        self._urls = tuple(urls)
        self._send = send
        self._queue: queue.Queue[tuple[str, str, str]] = queue.Queue()
        self._failures: list[str] = []
        self._lock = threading.Lock()
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self._thread = threading.Thread(target=self._run, name="babysit-notify", daemon=True)
        self._thread.start()

    def post(self, title: str, body: str, kind: str) -> None:
        with self._lock:
            self._pending += 1
        self._queue.put((title, body, kind))

    def _run(self) -> None:
        while True:
            title, body, kind = self._queue.get()
            try:
                ok = self._send(self._urls, title, body, kind)
                detail = "delivery failed"
            except Exception as error:  # a notifier must never stop the watch
                ok, detail = False, type(error).__name__
            with self._lock:
                if not ok:
                    self._failures.append(detail)
                self._pending -= 1
                self._idle.notify_all()

    def take_failures(self) -> list[str]:
        with self._lock:
            failures, self._failures = self._failures, []
        return failures

    def drain(self, timeout: float) -> int:
        """Wait up to `timeout` seconds for what was posted; returns how many are left."""
        end = time.monotonic() + timeout
        with self._lock:
            while self._pending and time.monotonic() < end:
                self._idle.wait(max(0.0, end - time.monotonic()))
            return self._pending


def parse_severity(text: str) -> Severity:
    try:
        return _SEVERITIES[text.lower()]
    except KeyError as error:
        raise ValueError(f"{text!r}: choose blocker, high, medium or low") from error


def existing(path: str | None) -> str | None:
    return path if path and Path(path).is_file() else None

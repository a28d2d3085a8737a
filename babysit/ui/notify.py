"""Notifications through apprise (`--notify URL`): anomalies of a chosen severity, a
proposal waiting for approval, and the final verdict, with the evidence.

A failing notifier is reported and never stops the watch. The same anomaly type is sent
at most once per `repeat_seconds`. Nothing secret leaves: notification URLs are shown
only by scheme and host, command lines are not sent, and log lines are scrubbed of
anything that looks like a credential."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from babysit.core.reports import Observer, PollReport, SummaryReport
from babysit.model import Anomaly, Severity, Verdict
from babysit.units import format_value

_CREDENTIAL = re.compile(
    r"(?i)\b([A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Z0-9_]*)\s*[=:]\s*\S+"
    r"|\b(?:hf|sk|ghp|gho|xox[abp]|glpat)[-_][A-Za-z0-9_\-]{8,}"
    r"|\b[0-9a-f]{40}\b")
_SEVERITIES = {s.value: s for s in Severity}


def scrub(text: str) -> str:
    """Credential-looking pieces of text replaced by REDACTED."""
    return _CREDENTIAL.sub(lambda m: f"{m.group(1)}=REDACTED" if m.group(1) else "REDACTED",
                           text)


def safe_url(url: str) -> str:
    """`scheme://host` only: the rest of a notification URL is often a token."""
    match = re.match(r"^([a-z0-9+]+)://(?:[^@/]*@)?([^/:?#]*)", url, re.IGNORECASE)
    return f"{match.group(1)}://{match.group(2)}" if match else "an unparsable URL"


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

    def baseline(self, report: PollReport) -> None:
        if self.log_path is None and report.log_path is not None:
            self.log_path = existing(report.log_path)
        self.inner.baseline(report)

    def poll(self, report: PollReport) -> None:
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
                f"{scrub(anomaly.description)}", f"Run: {report.target}"]
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
        body = [scrub(verdict.summary), f"Terminal state: {verdict.terminal_state.value}",
                f"Steps: {verdict.total_steps}" + (f"/{verdict.target_steps}"
                                                  if verdict.target_steps else "")]
        body += [f"Needs your approval: {scrub(a.reason)}" for a in waiting]
        body += [f"{f.id} {f.severity.value}: {scrub(f.title)} — {scrub(f.fix)}"
                 for f in verdict.findings[:5]]
        body += self._metrics(verdict.final_metrics)
        if artifact_path:
            body.append(f"Verdict file: {artifact_path}")
        kind = "failure" if verdict.decision.value == "NO-GO" else (
            "warning" if verdict.decision.value == "CONDITIONAL" else "info")
        title = (f"babysit: approval needed for {verdict.target}" if waiting else
                 f"babysit: {verdict.decision.value} for {verdict.target}")
        self._deliver(title, "\n".join(body) + "\n" + "\n".join(self._log_tail()), kind)

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
        return ["Last log lines:", *(scrub(line)[:300] for line in tail[-lines:])]

    def _deliver(self, title: str, body: str, kind: str) -> None:
        try:
            ok = self.send(self.policy.urls, title, body, kind)
        except Exception as error:  # a notifier must never stop the watch
            ok = False
            detail = f"{type(error).__name__}"
        else:
            detail = "delivery failed"
        if not ok:
            self.failures += 1
            where = ", ".join(safe_url(u) for u in self.policy.urls)
            self.inner.notice(f"notification to {where} failed ({detail}); babysit carries on")


def parse_severity(text: str) -> Severity:
    try:
        return _SEVERITIES[text.lower()]
    except KeyError as error:
        raise ValueError(f"{text!r}: choose blocker, high, medium or low") from error


def existing(path: str | None) -> str | None:
    return path if path and Path(path).is_file() else None

"""The watch's observer that keeps a run's board up to date and publishes it for
`babysit serve`; it passes every report on to the observer it wraps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from babysit.core.reports import LiveView, Observer, PollReport, SummaryReport
from babysit.model import Anomaly, Verdict
from babysit.safe_files import UnsafeFile
from babysit.serve import registry
from babysit.serve.board import RunBoard


class BoardObserver:
    def __init__(self, inner: Observer, board: RunBoard, publish: bool = True) -> None:
        self.inner = inner
        self.board = board
        self._publish = publish

    def _published(self) -> None:
        if self._publish:
            try:
                registry.publish(self.board.entry())
            except (OSError, UnsafeFile) as error:
                # A read-only or untrusted runtime dir: the own page still works.
                self._publish = False
                self.inner.notice(f"babysit serve will not list this session: {error}")

    def baseline(self, report: PollReport) -> None:
        self.board.report(report)
        self._published()
        self.inner.baseline(report)

    def poll(self, report: PollReport) -> None:
        self.board.report(report)
        self._published()
        self.inner.poll(report)

    def between(self, report: PollReport) -> None:
        """A read between reports: the page shows it; the printed stream waits for its
        report."""
        self.board.report(report)
        self._published()
        if isinstance(self.inner, LiveView):
            self.inner.between(report)

    def anomaly(self, anomaly: Anomaly, report: PollReport) -> None:
        self.board.anomaly(anomaly)
        self.inner.anomaly(anomaly, report)

    def summary(self, report: SummaryReport) -> None:
        self.board.summary(report)
        self.inner.summary(report)

    def notice(self, text: str) -> None:
        self.inner.notice(text)

    def final(self, verdict: Verdict, artifact: Mapping[str, Any],
              artifact_path: str | None) -> None:
        self.board.final(verdict, artifact)
        self._published()
        self.inner.final(verdict, artifact, artifact_path)

"""The metric curves of a run, kept small: every metric's (step, value) points, halved by
min/max buckets when they pass a limit, so a million-step run costs what a few thousand
points cost — with the extremes and every point an anomaly was raised at kept exactly."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

_LIMIT = 2000  # points per metric before halving


class MetricCurves:
    def __init__(self, limit: int = _LIMIT) -> None:
        self.limit = max(16, limit)
        self._points: dict[str, list[tuple[int, float]]] = {}
        self._pinned: set[int] = set()  # steps of anomalies: never merged away

    def add(self, step: int, metrics: Mapping[str, float]) -> None:
        for name, value in metrics.items():
            points = self._points.setdefault(name, [])
            if points and points[-1][0] == step:
                points[-1] = (step, value)
                continue
            points.append((step, value))
            if len(points) > self.limit:
                self._points[name] = self._halve(points)

    def pin(self, step: int | None) -> None:
        if step is not None:
            self._pinned.add(step)

    def _halve(self, points: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """Each pair of neighbouring buckets of four keeps its lowest and highest point
        (in step order), the non-finite ones and the pinned ones; the newest stays."""
        kept: list[tuple[int, float]] = []
        body, newest = points[:-1], points[-1]
        for start in range(0, len(body), 4):
            bucket = body[start:start + 4]
            special = [p for p in bucket if p[0] in self._pinned or not math.isfinite(p[1])]
            finite = [p for p in bucket if math.isfinite(p[1])]
            chosen = set(special)
            if finite:
                chosen.add(min(finite, key=lambda p: p[1]))
                chosen.add(max(finite, key=lambda p: p[1]))
            kept.extend(sorted(chosen))
        kept.append(newest)
        return kept

    def series(self, names: Iterable[str] | None = None) -> dict[str, list[tuple[int, float]]]:
        """A copy of the curves (all of them, or the ones named)."""
        wanted = self._points if names is None else {n: self._points[n] for n in names
                                                     if n in self._points}
        return {name: list(points) for name, points in wanted.items()}

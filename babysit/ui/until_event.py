"""`--until-event`: silent while all is quiet, then only the verdict."""

from __future__ import annotations

from collections.abc import Mapping

from babysit.core.reports import NullObserver, Observer
from babysit.model import Verdict


class UntilEventObserver(NullObserver):
    """Says nothing while all is quiet; passes on only the final verdict, so an agent
    spends nothing on polls where nothing happened."""

    def __init__(self, inner: Observer) -> None:
        self.inner = inner

    def final(self, verdict: Verdict, artifact: Mapping[str, object],
              artifact_path: str | None) -> None:
        self.inner.final(verdict, artifact, artifact_path)

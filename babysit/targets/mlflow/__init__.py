"""MLflow runs: the kind's declaration (cheap to import; the client is imported only when
a run is opened)."""

from __future__ import annotations

from babysit.targets.base import Target
from babysit.targets.common.fallback import FALLBACK_LOG, with_fallback
from babysit.targets.kinds import KindOption, Request, TargetKind

TRACKING_URI = KindOption("--tracking-uri", "MLflow tracking server (default: "
                          "$MLFLOW_TRACKING_URI).", metavar="URI")


def _open(request: Request) -> Target:
    from babysit.targets.mlflow.run import MlflowTarget

    return with_fallback(lambda: MlflowTarget(request.value, request.option("tracking_uri")),
                         request, "MLflow")


KIND = TargetKind(
    name="mlflow", title="MLflow run", flag="--mlflow", metavar="RUN_ID",
    help="Watch this MLflow run (its run id), through the tracking server's REST API.",
    open=_open, example="babysit --mlflow 3f2a…c9 --tracking-uri http://mlflow:5000",
    extra="mlflow", options=(TRACKING_URI, FALLBACK_LOG))

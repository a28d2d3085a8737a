"""Vertex AI pipeline jobs and custom training jobs: the kinds' declarations (cheap to
import; the Google client libraries are imported only when a job is opened)."""

from __future__ import annotations

from typing import Any

from babysit.targets.base import Target, TargetError
from babysit.targets.kinds import Chooser, KindOption, KindUsageError, Request, TargetKind

PROJECT = KindOption("--project", "Google Cloud project (default: the gcloud / application "
                     "default credentials' project).", metavar="PROJECT")
REGION = KindOption("--region", "Region of the job (default: the one in a resource name, "
                    "else gcloud's ai/region, else us-central1).", metavar="REGION",
                    parse=lambda text: _check_region(str(text)))
API_ENDPOINT = KindOption("--api-endpoint", "Vertex AI endpoint, HOST[:PORT] (regional, "
                          "private / PSC); http://HOST:PORT means an emulator (plain HTTP, "
                          "no credentials).", metavar="HOST")
LOGGING_ENDPOINT = KindOption("--logging-endpoint", "Cloud Logging endpoint (default: "
                              "Google's; an emulator's own endpoint with an http:// "
                              "--api-endpoint).", metavar="HOST")
_OPTIONS = (PROJECT, REGION, API_ENDPOINT, LOGGING_ENDPOINT)
# The spec polls cloud jobs every 60 s and calls one stuck after 3 quiet intervals.
_DEFAULTS: dict[str, dict[str, Any]] = {"poll": {"interval": 60.0},
                                        "rules": {"stall_polls": 3}}


def _check_region(text: str) -> str:
    from babysit.targets.vertex.names import check_region

    return check_region(text)


def _prepare(collection: str):  # type: ignore[no-untyped-def]
    def prepare(request: Request, choose: Chooser) -> Request:
        """Pin a display name to one job's resource name before the watch starts (so
        the re-watch command names it); a name that matches several is a usage error.
        Errors reaching the service are left to opening, which reports them (exit 4)."""
        from babysit.targets.base import TargetUnavailable
        from babysit.targets.vertex.resolve import resolve, service_for

        try:
            service, reference = service_for(request, collection)
            if reference.ref is not None and not reference.maybe_id:
                return request
            ref = resolve(service, reference, collection)
        except (TargetError, TargetUnavailable):
            return request
        return Request(request.kind, ref.name, request.log,
                       {k: v for k, v in request.options.items() if k not in ("project",
                                                                               "region")})
    return prepare


def _opener(collection: str):  # type: ignore[no-untyped-def]
    def open_job(request: Request) -> Target:
        from babysit.targets.vertex.resolve import resolve, service_for

        try:
            service, reference = service_for(request, collection)
            ref = resolve(service, reference, collection)
        except KindUsageError as error:
            raise TargetError(str(error)) from error
        if collection == "customJobs":
            from babysit.targets.vertex.custom_job import CustomJobTarget

            return CustomJobTarget(ref, service)
        from babysit.targets.vertex.pipeline import PipelineTarget

        return PipelineTarget(ref, service)
    return open_job


PIPELINE_KIND = TargetKind(
    name="vertex-pipeline", title="Vertex AI pipeline job", flag="--vertex-pipeline",
    metavar="JOB",
    help="Watch a Vertex AI pipeline job (its ID, resource name or display name): pipeline "
         "and task states, the running task's logs, ERROR entries.",
    open=_opener("pipelineJobs"), prepare=_prepare("pipelineJobs"),
    example="babysit --vertex-pipeline my-llm-pipeline --project my-proj --interval 120",
    extra="vertex", options=_OPTIONS, defaults=_DEFAULTS, group="Vertex AI")

TRAINING_KIND = TargetKind(
    name="vertex-training", title="Vertex AI custom job", flag="--vertex-training",
    metavar="JOB",
    help="Watch a Vertex AI custom training job (its numeric ID, resource name or display "
         "name): state, machines, and every replica's log parsed like a local one.",
    open=_opener("customJobs"), prepare=_prepare("customJobs"),
    example="babysit --vertex-training 9876543210 --project my-proj --region europe-west4",
    extra="vertex", options=_OPTIONS, defaults=_DEFAULTS, group="Vertex AI")

KINDS = (PIPELINE_KIND, TRAINING_KIND)

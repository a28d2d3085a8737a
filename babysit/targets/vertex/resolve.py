"""From what the user typed to one Vertex AI job: by resource name, by ID, or by display
name (listed newest first)."""

from __future__ import annotations

from typing import Any

from babysit.targets.base import TargetError
from babysit.targets.kinds import KindUsageError, Request
from babysit.targets.vertex.describe import enum_name, short_state
from babysit.targets.vertex.gcloud_config import gcloud_region
from babysit.targets.vertex.names import (
    CUSTOM_JOBS,
    DEFAULT_REGION,
    JobRef,
    display_filter,
    read_reference,
)
from babysit.targets.vertex.service import VertexService

_ENDED = ("SUCCEEDED", "FAILED", "CANCELLED", "EXPIRED", "PARTIALLY_SUCCEEDED")
_LISTED = 10


def service_for(request: Request, collection: str) -> tuple[VertexService, Any]:
    """The service for a request, and the request read (a KindUsageError when it
    cannot be a job reference)."""
    # A flag first; gcloud's own ai/region as `gcloud ai …` would use; else us-central1.
    flag = request.option("region")
    region = flag or gcloud_region()
    try:
        reference = read_reference(request.value, collection, request.option("project"),
                                   region or DEFAULT_REGION)
    except ValueError as error:
        if "no project" not in str(error):
            raise KindUsageError(str(error)) from error
        reference = None  # the credentials may name a default project
    ref = reference.ref if reference is not None else None
    if ref is not None and flag is not None and request.value.startswith("projects/") \
            and flag != ref.region:
        raise KindUsageError(f"--region {flag} disagrees with the resource name "
                             f"({ref.region})")
    service = VertexService((request.option("project") or ref.project) if ref is not None
                            and request.value.startswith("projects/")
                            else request.option("project"),
                            ref.region if ref is not None else region or DEFAULT_REGION,
                            request.option("api_endpoint"), request.option("logging_endpoint"))
    if reference is None:
        try:
            reference = read_reference(request.value, collection, service.project,
                                       service.region)
        except ValueError as error:
            raise KindUsageError(str(error)) from error
    return service, reference


def resolve(service: VertexService, reference: Any, collection: str) -> JobRef:
    """Raises KindUsageError when a display name matches several jobs still to choose
    between, TargetError when it matches none or the service cannot be read."""
    custom = collection == CUSTOM_JOBS
    if reference.ref is not None and not reference.maybe_id:
        return reference.ref  # type: ignore[no-any-return]
    if reference.ref is not None:
        getter = service.jobs.get_custom_job if custom else service.pipelines.get_pipeline_job
        if service.find(getter, f"job {reference.ref.name}", name=reference.ref.name) is not None:
            return reference.ref  # type: ignore[no-any-return]
    name = reference.display_name
    parent = f"projects/{service.project}/locations/{service.region}"
    lister = service.jobs.list_custom_jobs if custom else service.pipelines.list_pipeline_jobs
    request: dict[str, Any] = {"parent": parent, "filter": display_filter(name),
                               "page_size": 50}
    if not custom:
        request["order_by"] = "create_time desc"
    pager = service.call(lambda **kw: list(lister(request=kw["request"], retry=kw["retry"],
                                                  timeout=kw["timeout"])),
                         f"listing jobs named {name!r}", request=request)
    jobs = sorted(pager, key=lambda j: j.create_time, reverse=True)
    what = "custom job" if custom else "pipeline job"
    if not jobs:
        raise TargetError(f"no {what} named {name!r} in project {service.project}, "
                          f"{service.region} (check --project and --region)")
    chosen = jobs
    if len(jobs) > 1:
        # A recurring pipeline keeps its display name: the one still going is meant.
        chosen = [j for j in jobs if short_state(enum_name(j.state)) not in _ENDED]
    if len(chosen) != 1:
        # One line: the message takes the outbound pass whole (a newline shows as `\n`).
        rows = "; ".join(f"{_with_id(j.name, service.project)} "
                         f"{short_state(enum_name(j.state))} created "
                         f"{j.create_time:%Y-%m-%d %H:%M}" for j in jobs[:_LISTED])
        flag = "--vertex-training" if custom else "--vertex-pipeline"
        raise KindUsageError(f"{len(jobs)} {what}s are named {name!r}: {rows}; watch one by "
                             f"its resource name: {flag} projects/…/{collection}/ID")
    parts = _with_id(chosen[0].name, service.project).split("/")
    try:
        return JobRef(parts[1], parts[3], collection, parts[5])
    except (ValueError, IndexError) as error:
        raise TargetError(f"the service named the job {chosen[0].name!r}, which is not a "
                          f"Vertex AI job name ({error})") from error


def _with_id(name: str, project: str) -> str:
    """A listed job's name with the project as asked for: the service answers with the
    project's number, and the ID the user knows is what babysit prints and proposes."""
    parts = name.split("/")
    if len(parts) == 6 and parts[1].isdecimal():
        parts[1] = project
    return "/".join(parts)

"""Which Vertex AI job the user means: a numeric ID, a job ID, a full resource name or a
display name, and the project and region it lives in. Pure: no requests here."""

from __future__ import annotations

from dataclasses import dataclass

from babysit import lazy_re

CUSTOM_JOBS = "customJobs"
PIPELINE_JOBS = "pipelineJobs"
DEFAULT_REGION = "us-central1"

_RESOURCE = lazy_re.compile(r"^projects/(?P<project>[^/\s]+)/locations/(?P<region>[^/\s]+)/"
                            r"(?P<collection>customJobs|pipelineJobs)/(?P<job>[^/\s]+)$")
# A job's own ID: digits for custom jobs; pipeline jobs get generated names such as
# `my-pipeline-20261130100000` (lower case, digits, dashes).
_JOB_ID = {CUSTOM_JOBS: lazy_re.compile(r"^[0-9]{1,40}$"),
           PIPELINE_JOBS: lazy_re.compile(r"^[a-z0-9][a-z0-9-]{0,127}$")}
_REGION = lazy_re.compile(r"^[a-z]+(?:-[a-z]+)*[0-9]*$")
# A project ID (6 to 30: a lower-case letter, then letters, digits, dashes, not ending
# in a dash), a project number, or a legacy domain-scoped ID (`example.com:my-project`).
_PROJECT = lazy_re.compile(r"^(?:(?:[a-z0-9][a-z0-9.\-]{0,62}:)?[a-z][a-z0-9\-]{4,28}[a-z0-9]"
                           r"|[0-9]{1,20})$")


@dataclass(frozen=True)
class JobRef:
    project: str
    region: str
    collection: str  # customJobs or pipelineJobs
    job_id: str

    def __post_init__(self) -> None:
        """Each part matched against its documented grammar: the parts end up in the
        commands babysit proposes (a cancel command that is Python code, gcloud flags),
        so a part that is not what it claims to be is refused here. Raises ValueError."""
        if self.collection not in _JOB_ID:
            raise ValueError(f"{self.collection!r} is not customJobs or pipelineJobs")
        if not _PROJECT.fullmatch(self.project):
            raise ValueError(f"{self.project!r} is not a Google Cloud project ID or number")
        check_region(self.region)
        if not _JOB_ID[self.collection].fullmatch(self.job_id):
            kind = "a custom job ID (digits)" if self.collection == CUSTOM_JOBS else \
                "a pipeline job ID (lower-case letters, digits and dashes)"
            raise ValueError(f"{self.job_id!r} is not {kind}")

    @property
    def name(self) -> str:
        return f"projects/{self.project}/locations/{self.region}/{self.collection}/{self.job_id}"

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"


@dataclass(frozen=True)
class Reference:
    """What the user typed, read: a job known by name (`ref`), or a display name to look up."""

    ref: JobRef | None
    display_name: str | None = None
    maybe_id: bool = False  # a pipeline job ID and a display name look alike: try both


def read_reference(value: str, collection: str, project: str | None, region: str) -> Reference:
    """Raises ValueError with a sentence for the user."""
    value = value.strip()
    match = _RESOURCE.match(value)
    if match is not None:
        if match["collection"] != collection:
            wanted = "--vertex-training" if match["collection"] == CUSTOM_JOBS \
                else "--vertex-pipeline"
            raise ValueError(f"{value} is a {match['collection'][:-1]}: watch it with {wanted}")
        # Vertex AI writes the project *number* in the names it makes (console, gcloud,
        # the API's own answers): with --project's ID beside it, neither says they differ.
        if project is not None and project != match["project"] \
                and project.isdecimal() == match["project"].isdecimal():
            raise ValueError(f"--project {project!r} disagrees with the resource name "
                             f"({match['project']!r})")
        return Reference(JobRef(match["project"], match["region"], collection, match["job"]))
    if value.startswith("projects/"):
        raise ValueError(f"{value!r} is not a Vertex AI job name: expected "
                         f"projects/P/locations/R/{collection}/ID")
    if not value or "\n" in value or len(value) > 128:
        raise ValueError("a job ID or display name is 1 to 128 characters on one line")
    if project is None:
        raise ValueError("no project: pass --project or set one with `gcloud config set "
                         "project …`")
    if not _PROJECT.fullmatch(project):
        raise ValueError(f"--project {project!r} is not a Google Cloud project ID or number")
    if _JOB_ID[collection].match(value):
        ref = JobRef(project, region, collection, value)
        # Custom job IDs are numeric and never a display name worth trying.
        return Reference(ref, display_name=value if collection == PIPELINE_JOBS else None,
                         maybe_id=collection == PIPELINE_JOBS)
    return Reference(None, display_name=value)


def check_region(region: str) -> str:
    if not _REGION.fullmatch(region):
        raise ValueError(f"{region!r} is not a region (e.g. us-central1, europe-west4)")
    return region


def display_filter(display_name: str) -> str:
    """The list filter that matches a display name exactly (quotes escaped)."""
    escaped = display_name.replace("\\", "\\\\").replace('"', '\\"')
    return f'display_name="{escaped}"'

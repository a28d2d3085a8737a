"""The connection to Vertex AI and Cloud Logging: credentials, endpoints, and what each
kind of failure means for a watch.

The `aiplatform_v1` clients are used over REST (one request per `get`, unlike the
high-level SDK), and both libraries are imported only here, when a Vertex target opens.
An endpoint written `http://…` is an emulator: plain HTTP with anonymous credentials,
as Google's own emulators are used. Transient faults (429, 5xx, deadlines, a dropped
connection) are retried by google-api-core within a deadline, then reported as
connectivity, never as evidence about the job.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from babysit.redact import clip
from babysit.targets.base import TargetError, TargetUnavailable
from babysit.targets.kinds import require_extra
from babysit.targets.vertex import TRAINING_KIND
from babysit.targets.vertex.names import DEFAULT_REGION

T = TypeVar("T")

_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
AUTH_HELP = ("authenticate with `gcloud auth application-default login`, or point "
             "GOOGLE_APPLICATION_CREDENTIALS at a service account key, or run where workload "
             "identity provides credentials")
VIEWER_ROLE = "roles/aiplatform.viewer (Vertex AI Viewer)"
LOGS_ROLE = "roles/logging.viewer (Logs Viewer)"


def missing_extra() -> TargetError:
    return require_extra(TRAINING_KIND, "watching Vertex AI")  # both Vertex kinds: [vertex]


class VertexService:
    """Clients for one project and region, made on first use."""

    def __init__(self, project: str | None, region: str = DEFAULT_REGION,
                 api_endpoint: str | None = None, logging_endpoint: str | None = None, *,
                 timeout: float = 30.0, retry_seconds: float = 60.0) -> None:
        try:
            import google.auth
            import google.auth.exceptions
            from google.api_core import exceptions, retry
            from google.auth.credentials import AnonymousCredentials
        except ImportError as error:
            raise missing_extra() from error
        # proto-plus warns on every enum number it has no name for (a value newer than
        # the installed library); babysit says so itself, once, in words (describe.py).
        warnings.filterwarnings("ignore", message=r"Unrecognized \w+ enum value",
                                category=UserWarning)
        self.region = region
        self.api_endpoint = api_endpoint or f"{region}-aiplatform.googleapis.com"
        self.emulator = self.api_endpoint.startswith("http://")
        # An emulator usually serves both APIs; a real endpoint has its own logging host.
        self.logging_endpoint = logging_endpoint or (self.api_endpoint if self.emulator
                                                     else None)
        self.timeout = timeout
        self._retry = retry.Retry(
            predicate=retry.if_exception_type(
                exceptions.TooManyRequests, exceptions.ServiceUnavailable,
                exceptions.InternalServerError, exceptions.BadGateway,
                exceptions.GatewayTimeout, exceptions.DeadlineExceeded),
            initial=1.0, maximum=10.0, multiplier=2.0, timeout=retry_seconds)
        if self.emulator or (self.logging_endpoint or "").startswith("http://"):
            self.credentials: Any = AnonymousCredentials()  # type: ignore[no-untyped-call]
            found_project = None
        else:
            try:
                self.credentials, found_project = google.auth.default(scopes=[_SCOPE])
            except google.auth.exceptions.DefaultCredentialsError as error:
                raise TargetError(f"no Google Cloud credentials: {AUTH_HELP}") from error
        project = project or found_project or os.environ.get("GOOGLE_CLOUD_PROJECT") \
            or os.environ.get("CLOUDSDK_CORE_PROJECT")
        if not project:
            raise TargetError("no Google Cloud project: pass --project, or set one with "
                              "`gcloud config set project PROJECT`")
        self.project: str = project
        self._jobs: Any = None
        self._pipelines: Any = None
        self._logging: Any = None

    # --- clients ------------------------------------------------------------------------

    def _options(self) -> Any:
        from google.api_core.client_options import ClientOptions

        return ClientOptions(api_endpoint=self.api_endpoint)

    @property
    def jobs(self) -> Any:
        if self._jobs is None:
            from google.cloud.aiplatform_v1 import JobServiceClient

            self._jobs = JobServiceClient(credentials=self.credentials, transport="rest",
                                          client_options=self._options())
        return self._jobs

    @property
    def pipelines(self) -> Any:
        if self._pipelines is None:
            from google.cloud.aiplatform_v1 import PipelineServiceClient

            self._pipelines = PipelineServiceClient(credentials=self.credentials,
                                                    transport="rest",
                                                    client_options=self._options())
        return self._pipelines

    @property
    def logging(self) -> Any:
        if self._logging is None:
            try:
                from google.cloud import logging as cloud_logging
            except ImportError as error:
                raise missing_extra() from error
            # The JSON connection of google-cloud-logging takes the endpoint as its base
            # URL (`logging_v2/_http.py`: `API_BASE_URL = api_endpoint`), so a bare
            # HOST[:PORT], as documented for the flag, needs its scheme put in front.
            options = ({"api_endpoint": logging_url(self.logging_endpoint)}
                       if self.logging_endpoint else None)
            self._logging = cloud_logging.Client(  # type: ignore[no-untyped-call]
                project=self.project,
                credentials=self.credentials, _use_grpc=False, client_options=options)
        return self._logging

    # --- calls --------------------------------------------------------------------------

    def call(self, method: Callable[..., T], what: str, **request: Any) -> T:
        """One API call with retries and a deadline; failures mapped to what they mean."""
        return self.guard(lambda: method(**request, retry=self._retry, timeout=self.timeout),
                          what, VIEWER_ROLE)

    def find(self, method: Callable[..., T], what: str, **request: Any) -> T | None:
        """Like `call`, but a resource that does not exist is None, not an error."""
        from google.api_core import exceptions

        def attempt() -> T | None:
            try:
                return method(**request, retry=self._retry, timeout=self.timeout)
            except exceptions.NotFound:
                return None

        return self.guard(attempt, what, VIEWER_ROLE)

    def guard(self, action: Callable[[], T], what: str, role: str) -> T:
        from google.api_core import exceptions

        try:
            return action()
        except exceptions.NotFound as error:
            raise TargetError(f"{what}: not found (check --project, --region and the job "
                              f"ID): {_message(error)}") from error
        except exceptions.Forbidden as error:  # PermissionDenied, or a bare HTTP 403
            raise TargetError(f"{what}: permission denied — the account needs {role} on "
                              f"project {self.project}: {_message(error)}") from error
        except exceptions.Unauthorized as error:  # Unauthenticated, or a bare HTTP 401
            raise TargetError(f"{what}: the credentials were refused: {AUTH_HELP}") from error
        except exceptions.RetryError as error:
            raise TargetUnavailable(f"{what}: Vertex AI kept failing: "
                                    f"{_message(error.cause) if error.cause else error}") \
                from error
        except (exceptions.TooManyRequests, exceptions.ServerError,
                exceptions.DeadlineExceeded) as error:
            raise TargetUnavailable(f"{what}: {_message(error)}") from error
        except exceptions.GoogleAPICallError as error:
            raise TargetError(f"{what}: {_message(error)}") from error
        except Exception as error:
            from google.auth import exceptions as auth_exceptions

            if isinstance(error, (auth_exceptions.RefreshError,
                                  auth_exceptions.DefaultCredentialsError)):
                raise TargetError(f"{what}: the credentials could not be used ({error}): "
                                  f"{AUTH_HELP}") from error
            if _is_transport(error):
                host = (self.logging_endpoint or "logging.googleapis.com") \
                    if role == LOGS_ROLE else self.api_endpoint
                raise TargetUnavailable(f"{what}: cannot reach {host}: "
                                        f"{type(error).__name__}") from error
            raise

    def close(self) -> None:
        for client in (self._jobs, self._pipelines):
            transport = getattr(client, "transport", None)
            if transport is not None:
                transport.close()


def logging_url(endpoint: str) -> str:
    """`HOST[:PORT]` → `https://HOST[:PORT]`; an `http://` or `https://` URL is kept."""
    return endpoint if endpoint.startswith(("http://", "https://")) else f"https://{endpoint}"


def _message(error: BaseException) -> str:
    text = getattr(error, "message", None) or str(error)
    code = getattr(error, "code", None)
    first = clip(str(text).splitlines()[0], 300) if text else type(error).__name__
    return f"HTTP {int(code)} {first}" if isinstance(code, int) else first


def _is_transport(error: BaseException) -> bool:
    """A dropped connection, a refused one, a read timeout: nothing the job did."""
    import requests
    from google.auth import exceptions as auth_exceptions

    return isinstance(error, (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                              auth_exceptions.TransportError, ConnectionError, TimeoutError))

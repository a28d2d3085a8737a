"""The connection to the cluster: configuration, the official client's APIs, a timeout
on every request, and what each kind of failure means for a watch.

Responses are read as the API server's JSON (`_preload_content=False`), not through the
client's generated models: a watch needs a few fields, and the models refuse objects
with fields they do not know (newer servers, CRDs). 401/403/404 are the user's to fix
(TargetError, naming the RBAC verbs needed); a refused or dropped connection, a timeout,
429 and 5xx are connectivity (TargetUnavailable), never evidence about the job.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from babysit.redact import clip
from babysit.targets.base import TargetError, TargetUnavailable
from babysit.targets.k8s import KIND
from babysit.targets.k8s.names import check_namespace
from babysit.targets.kinds import require_extra

TIMEOUT = (5.0, 20.0)  # (connect, read) seconds, on every request
RBAC_HELP = ("the account needs get, list and watch on {resource}, pods, pods/log and "
             "events in namespace {namespace} (check with `kubectl auth can-i list pods "
             "-n {namespace}`)")
AUTH_HELP = ("the cluster refused the credentials: log in again or refresh the "
             "kubeconfig's token (`kubectl get pods` should work with the same context)")
_IN_CLUSTER_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def missing_extra() -> TargetError:
    return require_extra(KIND, "watching Kubernetes")


class KubeService:
    """The clients of one cluster and namespace, made when a job is opened.

    `api_client` lets a caller bring its own configured client (tests, embedding)."""

    def __init__(self, *, kubeconfig: str | None = None, context: str | None = None,
                 namespace: str | None = None, api_client: Any = None,
                 timeout: tuple[float, float] = TIMEOUT) -> None:
        try:
            from kubernetes import client  # type: ignore[import-untyped]
        except ImportError as error:
            raise missing_extra() from error
        self.timeout = timeout
        found_namespace = None
        # The cluster babysit reads is the one its proposed kubectl commands must name:
        # the kubeconfig and context given, or the context that was current at start.
        self.kubeconfig = os.path.abspath(kubeconfig) if kubeconfig else None
        self.context = context
        if api_client is None:
            api_client, found_namespace, used = _configured(kubeconfig, context)
            self.context = context or used
        self.api_client = api_client
        self.host = str(getattr(api_client.configuration, "host", "") or "the API server")
        chosen = namespace or found_namespace or "default"
        try:
            self.namespace: str = check_namespace(chosen)
        except ValueError as error:  # the kubeconfig's own namespace is outside text
            raise TargetError(f"the kubeconfig's namespace: {error}; pass -n NS") from error
        self.batch = client.BatchV1Api(api_client)
        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)

    def read(self, method: Callable[..., Any], what: str, resource: str, *args: Any,
             **kwargs: Any) -> Any:
        """One request (JSON answer), failures mapped to what they mean."""
        data = self._call(method, what, resource, *args, **kwargs)
        try:
            return json.loads(data)
        except ValueError as error:
            raise TargetUnavailable(f"{what}: the API server's answer is not JSON") from error

    def text(self, method: Callable[..., Any], what: str, resource: str, *args: Any,
             **kwargs: Any) -> str:
        """One request whose answer is text (a container's log)."""
        return self._call(method, what, resource, *args, **kwargs).decode("utf-8", "replace")

    def _call(self, method: Callable[..., Any], what: str, resource: str, *args: Any,
              **kwargs: Any) -> bytes:
        from kubernetes.client.exceptions import ApiException  # type: ignore[import-untyped]
        from urllib3.exceptions import HTTPError

        try:
            response = method(*args, _preload_content=False, _request_timeout=self.timeout,
                              **kwargs)
            return bytes(response.data)
        except ApiException as error:
            raise self._api_error(error, what, resource) from error
        except (HTTPError, OSError) as error:  # refused, reset, timed out, no route
            raise TargetUnavailable(f"{what}: cannot reach {self.host}: "
                                    f"{type(error).__name__}") from error

    def _api_error(self, error: Any, what: str, resource: str) -> Exception:
        status = int(getattr(error, "status", 0) or 0)
        message = _message(error)
        if status == 401:
            return TargetError(f"{what}: HTTP 401 — {AUTH_HELP}")
        if status == 403:
            return TargetError(f"{what}: permission denied (HTTP 403: {message}) — "
                               + RBAC_HELP.format(resource=resource, namespace=self.namespace))
        if status == 404:
            return NotFound(f"{what}: not found in namespace {self.namespace} (check "
                            f"--namespace and the name): {message}")
        if status == 429 or status >= 500 or status == 0:
            return TargetUnavailable(f"{what}: the API server answered HTTP {status or '?'} "
                                     f"{message}".rstrip())
        return TargetError(f"{what}: HTTP {status} {message}".rstrip())

    def close(self) -> None:
        close = getattr(self.api_client, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):  # closing a pool must not hide the verdict
                close()


class NotFound(TargetError):
    """The object does not exist (a 404)."""


def _message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body.strip():
        try:
            found = json.loads(body).get("message")
        except (ValueError, AttributeError):
            found = body.strip()
        if found:
            return clip(str(found).splitlines()[0], 300)
    return str(getattr(error, "reason", "") or "").strip()


def _configured(kubeconfig: str | None,
                context: str | None) -> tuple[Any, str | None, str | None]:
    """An API client from a kubeconfig (the flag, $KUBECONFIG, ~/.kube/config) or, in a pod
    with none of them, from its service account; the namespace it names; the name of the
    context used (None in a pod)."""
    from kubernetes import client, config

    path = kubeconfig or os.environ.get("KUBECONFIG") or None
    default = Path.home() / ".kube" / "config"
    in_cluster = (path is None and not default.exists()
                  and bool(os.environ.get("KUBERNETES_SERVICE_HOST")))
    configuration = client.Configuration()
    namespace: str | None = None
    used: str | None = None
    try:
        if in_cluster:
            config.load_incluster_config(client_configuration=configuration)
            if _IN_CLUSTER_NAMESPACE.exists():
                namespace = _IN_CLUSTER_NAMESPACE.read_text(encoding="utf-8").strip() or None
        else:
            # $KUBECONFIG may list several files: the client merges them.
            config.load_kube_config(config_file=path, context=context,
                                    client_configuration=configuration, persist_config=False)
            contexts, active = config.list_kube_config_contexts(config_file=path)
            chosen = next((c for c in contexts if c.get("name") == context), None) \
                if context else active
            namespace = ((chosen or {}).get("context") or {}).get("namespace")
            name = (chosen or {}).get("name")
            used = name if isinstance(name, str) else None
    except config.ConfigException as error:
        where = path or str(default)
        raise TargetError(f"no usable Kubernetes configuration ({where}): {error} — pass "
                          f"--kubeconfig FILE (and --context NAME), or run where `kubectl "
                          f"get pods` works") from error
    except OSError as error:
        raise TargetError(f"cannot read the kubeconfig {path or default}: "
                          f"{getattr(error, 'strerror', None) or error}") from error
    configuration.retries = 1  # one quick retry of a dropped connection; the loop backs off
    return client.ApiClient(configuration), namespace, used

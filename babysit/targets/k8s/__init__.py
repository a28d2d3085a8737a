"""Kubernetes Jobs and Kubeflow PyTorchJobs: the kind's declaration (cheap to import; the
`kubernetes` client is imported only when a job is opened)."""

from __future__ import annotations

from typing import Any

from babysit.targets.base import Target, TargetError
from babysit.targets.kinds import Chooser, KindOption, KindUsageError, Request, TargetKind

NAMESPACE = KindOption("--namespace", "Namespace of the job (default: the kubeconfig "
                       "context's namespace, or `default`).", metavar="NS",
                       parse=lambda text: _check_namespace(str(text)), short="-n")
KUBECONFIG = KindOption("--kubeconfig", "Kubeconfig file (default: $KUBECONFIG or "
                        "~/.kube/config; in a pod without one, its service account).",
                        metavar="FILE",
                        parse=lambda text: _check_text(str(text), "--kubeconfig"))
CONTEXT = KindOption("--context", "Kubeconfig context to use (default: the current one).",
                     metavar="NAME", parse=lambda text: _check_text(str(text), "--context"))
# Kubernetes answers reads at once and for free (no per-read quota, unlike Cloud
# Logging's), and a crash-looping pod restarts within 10 s-5 min: every 30 s sees each
# restart and OOM kill while staying far below what an API server is sized for. Logs are
# served as written, so four quiet polls (2 min) are already a real silence.
_DEFAULTS: dict[str, dict[str, Any]] = {"poll": {"interval": 30.0},
                                        "rules": {"stall_polls": 4}}


def _check_namespace(text: str) -> str:
    from babysit.targets.k8s.names import check_namespace

    return check_namespace(text)


def _check_text(text: str, flag: str) -> str:
    from babysit.targets.k8s.names import check_text_option

    return check_text_option(text, flag)


def _prepare(request: Request, choose: Chooser) -> Request:
    """Check `job/NAME` / `pytorchjob/NAME` / `trainjob/NAME` before the watch starts and
    write it in full (so the re-watch command names the kind); a bad reference is a usage
    error."""
    from babysit.targets.k8s.names import parse_reference

    ref = parse_reference(request.value)
    return Request(request.kind, f"{ref.kind}/{ref.name}", request.log, request.options)


def _open(request: Request) -> Target:
    from babysit.targets.k8s.api import KubeService
    from babysit.targets.k8s.job import open_job
    from babysit.targets.k8s.names import parse_reference

    try:
        reference = parse_reference(request.value)
    except KindUsageError as error:
        raise TargetError(str(error)) from error
    service = KubeService(kubeconfig=request.option("kubeconfig"),
                          context=request.option("context"),
                          namespace=request.option("namespace"))
    return open_job(reference, service)


KIND = TargetKind(
    name="k8s", title="Kubernetes job", flag="--k8s", metavar="KIND/NAME",
    help="Watch a Kubernetes Job (job/NAME, or a bare NAME), a Kubeflow PyTorchJob "
         "(pytorchjob/NAME) or a Kubeflow Trainer TrainJob (trainjob/NAME): its conditions, "
         "its pods' states, restarts and events, and "
         "every pod's log parsed like a local one.",
    open=_open, prepare=_prepare,
    example="babysit --k8s pytorchjob/llama-ft -n research",
    extra="k8s", options=(NAMESPACE, KUBECONFIG, CONTEXT), defaults=_DEFAULTS,
    group="Kubernetes")

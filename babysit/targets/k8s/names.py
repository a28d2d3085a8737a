"""What the user typed: `job/NAME`, `pytorchjob/NAME`, `trainjob/NAME` or a bare NAME
(a Job), and where each kind lives in the API."""

from __future__ import annotations

from dataclasses import dataclass

from babysit import lazy_re
from babysit.targets.kinds import KindUsageError

_KINDS = {"job": "job", "jobs": "job", "job.batch": "job", "jobs.batch": "job",
          "pytorchjob": "pytorchjob", "pytorchjobs": "pytorchjob",
          "pytorchjob.kubeflow.org": "pytorchjob", "pytorchjobs.kubeflow.org": "pytorchjob",
          "trainjob": "trainjob", "trainjobs": "trainjob",
          "trainjob.trainer.kubeflow.org": "trainjob",
          "trainjobs.trainer.kubeflow.org": "trainjob"}


@dataclass(frozen=True)
class KindApi:
    title: str
    group: str  # "" for batch/v1 (read through its own client)
    version: str
    plural: str
    pod_label: str  # the label its pods carry with the job's name
    installed_by: str  # what to check when no such object exists anywhere


API = {
    "job": KindApi("Job", "", "v1", "jobs", "job-name", ""),
    # kubeflow/training-operator v1: pods labelled training.kubeflow.org/job-name.
    "pytorchjob": KindApi("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs",
                          "training.kubeflow.org/job-name",
                          "the Kubeflow training-operator (`kubectl get crd "
                          "pytorchjobs.kubeflow.org`)"),
    # Kubeflow Trainer v2: a TrainJob runs as a JobSet of its own name, whose pods carry
    # jobset.sigs.k8s.io/jobset-name (kubeflow/trainer pkg/apis/trainer/v1alpha1).
    "trainjob": KindApi("TrainJob", "trainer.kubeflow.org", "v1alpha1", "trainjobs",
                        "jobset.sigs.k8s.io/jobset-name",
                        "Kubeflow Trainer (`kubectl get crd trainjobs.trainer.kubeflow.org`)"),
}
# A DNS-1123 subdomain (object names) and label (namespaces).
_SUBDOMAIN = lazy_re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL = lazy_re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


@dataclass(frozen=True)
class JobReference:
    kind: str  # "job", "pytorchjob" or "trainjob"
    name: str

    @property
    def api(self) -> KindApi:
        return API[self.kind]

    @property
    def title(self) -> str:
        return self.api.title


def parse_reference(text: str) -> JobReference:
    text = text.strip()
    kind, slash, name = text.partition("/")
    if not slash:
        kind, name = "job", text
    found = _KINDS.get(kind.lower())
    if found is None:
        raise KindUsageError(f"--k8s takes job/NAME, pytorchjob/NAME or trainjob/NAME, not "
                             f"{text!r} "
                             f"({kind!r} is not a kind babysit watches)")
    if not name or len(name) > 253 or not _SUBDOMAIN.fullmatch(name):
        raise KindUsageError(f"--k8s: {name!r} is not a Kubernetes object name (lower-case "
                             f"letters, digits, '-' and '.')")
    return JobReference(found, name)


def is_object_name(text: str) -> bool:
    """A DNS-1123 subdomain, as Kubernetes names objects (pods, jobs)."""
    return 0 < len(text) <= 253 and _SUBDOMAIN.fullmatch(text) is not None


def check_text_option(text: str, flag: str) -> str:
    """A free-form option (a context name, a file) that ends up in proposed commands:
    any text but control characters, and not an option itself. Raises ValueError."""
    if not text or text.startswith("-") or any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f
                                               for c in text):
        raise ValueError(f"{flag} {text!r}: expected a name (no control characters, not "
                         f"starting with '-')")
    return text


def check_namespace(text: str) -> str:
    if len(text) > 63 or not _LABEL.fullmatch(text):
        raise ValueError(f"{text!r} is not a namespace name (lower-case letters, digits "
                         f"and '-', at most 63)")
    return text

"""The Kubernetes tests: a loopback API server, and nothing allowed to leave loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require
from tests.fakes.k8s_api import KubeServer
from tests.fakes.loopback import only_loopback as refuse_beyond_loopback


def need_kubernetes_client() -> None:
    """Called at the top of each test module here (a skip raised by a conftest is an
    error when the folder is named on the command line)."""
    require("kubernetes", "the kubernetes client is not installed "
                          "(pip install -e '.[test-services]')")

# What a subprocess needs so that no real cluster or proxy is ever used: no in-cluster
# service account, no ~/.kube/config of the person running the tests.
OFFLINE_ENV = {"KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": "",
               "KUBECONFIG": "/nonexistent/kubeconfig", "HTTPS_PROXY": "", "HTTP_PROXY": "",
               "https_proxy": "", "http_proxy": "", "NO_PROXY": "127.0.0.1,localhost"}


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[Any]]:
    """Fail the test if this process opens a connection anywhere but loopback."""
    for key, value in OFFLINE_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    leaks = refuse_beyond_loopback(monkeypatch)
    yield leaks
    assert not leaks, f"requests left loopback: {leaks}"


@pytest.fixture
def kube() -> Iterator[KubeServer]:
    with KubeServer() as server:
        yield server


@pytest.fixture
def kubeconfig(kube: KubeServer, tmp_path: Path) -> str:
    return kube.kubeconfig(tmp_path / "kubeconfig.json")

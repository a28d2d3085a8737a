"""The Vertex AI tests: a loopback server, and nothing allowed to leave loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import require
from tests.fakes.loopback import only_loopback as refuse_beyond_loopback
from tests.fakes.vertex_api import VertexServer


def need_google_clients() -> None:
    """Called at the top of each test module here (a skip raised by a conftest is an
    error when the folder is named on the command line)."""
    missing = "the Google clients are not installed (pip install -e '.[test-services]')"
    require("google.cloud.aiplatform_v1", missing)
    require("google.cloud.logging", missing)

# What a subprocess needs so the Google libraries never probe the metadata server and
# any request to a real Google host fails at once (through a proxy that is not there).
OFFLINE_ENV = {"NO_GCE_CHECK": "true", "GCE_METADATA_HOST": "127.0.0.1:1",
               "GCE_METADATA_IP": "127.0.0.1:1", "HTTPS_PROXY": "http://127.0.0.1:1",
               "HTTP_PROXY": "http://127.0.0.1:1", "NO_PROXY": "127.0.0.1,localhost",
               "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/key.json",
               "CLOUDSDK_CONFIG": "/nonexistent/gcloud"}


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fail the test if this process opens a connection anywhere but loopback."""
    for key, value in OFFLINE_ENV.items():
        monkeypatch.setenv(key, value)
    leaks = refuse_beyond_loopback(monkeypatch)
    yield leaks
    assert not leaks, f"requests left loopback: {leaks}"


@pytest.fixture
def vertex() -> Iterator[VertexServer]:
    from tests.targets.vertex.scenarios import PROJECT, PROJECT_NUMBER

    with VertexServer(numbers={PROJECT: PROJECT_NUMBER}) as server:
        yield server

"""A real MLflow tracking server (sqlite backend) on loopback, once per test session."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

WRITER = Path(__file__).parent / "mlflow_writer.py"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    mlflow_bin = shutil.which("mlflow", path=os.path.dirname(sys.executable)) or \
        shutil.which("mlflow")
    if mlflow_bin is None:
        pytest.skip("the mlflow server is not installed (the test extra installs it)")
    root = tmp_path_factory.mktemp("mlflow")
    port = _free_port()
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    server = subprocess.Popen(
        [mlflow_bin, "server", "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
         "--default-artifact-root", str(root / "artifacts"), "--host", "127.0.0.1",
         "--port", str(port), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=(root / "server.log").open("wb"), env=env,
        start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=2):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail("mlflow server did not start:\n"
                            + (root / "server.log").read_text()[-2000:])
            time.sleep(0.3)
    yield uri
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=30)


def start_writer(uri: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Start a logging script; returns it and the run id it printed."""
    proc = subprocess.Popen([sys.executable, str(WRITER), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "MLFLOW_TRACKING_URI": uri})
    assert proc.stdout is not None
    run_id = proc.stdout.readline().strip()
    assert len(run_id) == 32, run_id
    return proc, run_id


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    """Finished offline W&B runs of each kind, written once for every test that reads them."""
    pytest.importorskip("wandb")
    from tests.targets.trackers.wandb_runs import make_runs

    return make_runs(tmp_path_factory.mktemp("wandb-runs"))

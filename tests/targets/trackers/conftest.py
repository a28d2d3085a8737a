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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    mlflow_bin = shutil.which("mlflow", path=os.path.dirname(sys.executable)) or \
        shutil.which("mlflow")
    if mlflow_bin is None:
        pytest.skip("the mlflow server is not installed (pip install -e '.[test-services]')")
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


class Writer:
    """A running logging script: a real process, forked from a server process that has
    imported mlflow once (importing it costs two CPU seconds, a dozen times a session)."""

    def __init__(self, uri: str, args: tuple[str, ...]) -> None:
        from tests.forked_cli import fork
        from tests.targets.trackers.mlflow_writer import forked

        self._process, (self.stdout,) = fork(
            forked, (uri, list(args)), ["mlflow", "tests.targets.trackers.mlflow_writer"],
            pipes=1)
        self.pid = self._process.pid

    def wait(self, timeout: float | None = 60) -> int | None:
        self._process.join(timeout)
        return self._process.exitcode

    def send_signal(self, sig: int) -> None:
        if self._process.exitcode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start_writer(uri: str, *args: str) -> tuple[Writer, str]:
    """Start a logging script; returns it and the run id it printed."""
    proc = Writer(uri, args)
    run_id = proc.stdout.readline().strip()
    assert len(run_id) == 32, run_id
    return proc, run_id


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    """Finished offline W&B runs of each kind, written once for every test that reads them."""
    pytest.importorskip("wandb", reason="wandb is not installed "
                                        "(pip install -e '.[test-services]')")
    from tests.targets.trackers.wandb_runs import make_runs

    return make_runs(tmp_path_factory.mktemp("wandb-runs"))

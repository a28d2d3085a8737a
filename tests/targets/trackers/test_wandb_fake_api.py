"""The real `wandb.Api` client (through wandb-core) against the loopback fake W&B server:
what babysit's W&B API target relies on, and what each call costs in requests."""

from __future__ import annotations

import importlib.util
import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.wandb_api import FakeWandbServer

pytestmark = pytest.mark.skipif(importlib.util.find_spec("wandb") is None,
                                reason="wandb is not installed")

PATH = "team/proj/abc123"


@pytest.fixture(scope="module")
def wandb_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """No W&B settings, keys or caches from the machine; nothing leaves loopback."""
    root = tmp_path_factory.mktemp("wandb-api-home")
    with pytest.MonkeyPatch.context() as patch:
        import os

        for name in [n for n in os.environ if n.startswith("WANDB_")]:
            patch.delenv(name)
        patch.setenv("WANDB_SILENT", "true")
        for name in ("CONFIG", "CACHE", "DATA", "ARTIFACT"):
            patch.setenv(f"WANDB_{name}_DIR", str(root / name.lower()))
        patch.setenv("WANDB_DIR", str(root))
        patch.setenv("NETRC", str(root / "netrc"))
        yield root


@pytest.fixture
def server(wandb_home: Path) -> Iterator[FakeWandbServer]:
    with FakeWandbServer() as fake:
        yield fake


def _api(server: FakeWandbServer) -> Any:
    import wandb

    return wandb.Api(api_key=server.api_key, overrides={"base_url": server.base_url},
                     timeout=15)


def _steps(rows: Any) -> list[int]:
    return [int(row["_step"]) for row in rows]


def test_reads_state_config_summary_and_url(server: FakeWandbServer) -> None:
    fake = server.add_run(PATH, display_name="calm-river-7",
                          config={"lr": 3e-4, "model": {"layers": 12}})
    for step in range(3):
        fake.log(loss=1.0 / (step + 1))
    run = _api(server).run(PATH)
    assert run.state == "running"
    assert run.config == {"lr": 3e-4, "model": {"layers": 12}}
    assert run.summary["loss"] == pytest.approx(1.0 / 3)
    assert run.url == f"{server.base_url}/team/proj/runs/abc123"
    assert (run.name, run.id) == ("calm-river-7", "abc123")


def test_scan_history_from_min_step_returns_only_newer_rows(server: FakeWandbServer) -> None:
    fake = server.add_run(PATH)
    for step in range(25):
        fake.log(loss=float(step))
    run = _api(server).run(PATH)
    assert _steps(run.scan_history(min_step=0, page_size=10)) == list(range(25))
    for step in range(25, 30):
        fake.log(loss=float(step))
    server.reset_counts()
    newer = list(run.scan_history(min_step=25, page_size=1000))
    assert _steps(newer) == [25, 26, 27, 28, 29]
    assert newer[0]["loss"] == 25.0
    pages = [s.variables for s in server.seen if s.operation == "HistoryPage"]
    assert pages == [{"entity": "team", "project": "proj", "run": "abc123",
                      "minStep": 25, "maxStep": 30, "pageSize": 5}]
    assert _steps(run.scan_history(min_step=30)) == []
    assert _steps(run.scan_history(min_step=5, max_step=8)) == [5, 6, 7]


@pytest.mark.parametrize("state", ["finished", "crashed", "failed", "killed"])
def test_state_changes_show_after_load_force(server: FakeWandbServer, state: str) -> None:
    fake = server.add_run(PATH)
    api = _api(server)
    run = api.run(PATH)
    assert run.state == "running"
    fake.state = state
    # api.run() hands back the cached Run: without a forced load the state is stale.
    assert api.run(PATH) is run and run.state == "running"
    run.load(force=True)
    assert run.state == state


def test_system_metrics_stream_and_latest(server: FakeWandbServer) -> None:
    fake = server.add_run(PATH)
    for util in (95.0, 96.0, 97.0):
        fake.log_system(**{"system.gpu.0.gpu": util, "system.gpu.0.memoryAllocated": 71.2})
    run = _api(server).run(PATH)
    rows = run.history(stream="system", pandas=False, samples=20)
    assert [row["system.gpu.0.gpu"] for row in rows] == [95.0, 96.0, 97.0]
    assert run.system_metrics["system.gpu.0.gpu"] == 97.0


def test_nan_and_inf_in_history_arrive_as_floats(server: FakeWandbServer) -> None:
    fake = server.add_run(PATH)
    fake.log(loss=1.0)
    fake.log(loss=float("nan"), grad_norm=float("inf"))
    rows = list(_api(server).run(PATH).scan_history())
    assert math.isnan(rows[1]["loss"]) and rows[1]["grad_norm"] == math.inf


def test_requests_per_poll(server: FakeWandbServer) -> None:
    """One poll = refresh the run, new history rows, system metrics."""
    fake = server.add_run(PATH)
    for step in range(10):
        fake.log(loss=float(step))
    run = _api(server).run(PATH)

    def poll(min_step: int) -> list[int]:
        run.load(force=True)
        steps = _steps(run.scan_history(min_step=min_step, page_size=1000))
        run.history(stream="system", pandas=False, samples=20)
        return steps

    server.reset_counts()
    assert poll(0) == list(range(10))
    assert server.operations() == Counter(
        {"Run": 1, "RunHistoryKeys": 1, "RunParquetHistory": 1, "HistoryPage": 1,
         "RunFullHistory": 1})
    assert server.response_bytes() > 0
    server.reset_counts()
    assert poll(10) == []  # nothing new: no HistoryPage
    assert server.operations() == Counter(
        {"Run": 1, "RunHistoryKeys": 1, "RunParquetHistory": 1, "RunFullHistory": 1})


def test_unknown_run_and_wrong_key_are_errors(server: FakeWandbServer) -> None:
    import wandb

    api = _api(server)
    with pytest.raises(wandb.errors.CommError, match="Could not find run"):
        api.run("team/proj/missing")
    with pytest.raises(wandb.errors.AuthenticationError):
        wandb.Api(api_key="x" * 40, overrides={"base_url": server.base_url}, timeout=15)


def test_env_vars_instead_of_arguments(server: FakeWandbServer,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import wandb

    server.add_run(PATH).log(loss=0.5)
    monkeypatch.setenv("WANDB_BASE_URL", server.base_url)
    monkeypatch.setenv("WANDB_API_KEY", server.api_key)
    run = wandb.Api(timeout=15).run(PATH)
    assert run.summary["loss"] == 0.5

"""`babysit --wandb`: a local run directory written by a real offline wandb run, and a
run read through the real `wandb.Api` client from the loopback fake W&B server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import ExitCode, run_session
from babysit.targets.base import TargetError
from babysit.targets.wandb.run import WandbApiTarget, wandb_target
from tests.conftest import FakeClock, artifact_in
from tests.fakes.wandb_api import FakeWandbServer
from tests.targets.trackers.wandb_runs import _start

pytest.importorskip("wandb")


def watch(tmp_path: Path, target, *, max_polls: int = 40, clock: FakeClock | None = None):
    settings = Settings(poll=replace(PollSettings(), max_polls=max_polls),
                        rules=RuleSettings(stall_polls=3), out_dir=tmp_path / "out")
    result = run_session(lambda: target, target.label, "wandb", settings, NullObserver(),
                         clock=clock or FakeClock())
    return result, artifact_in(tmp_path / "out")


@pytest.mark.parametrize("name, state, decision, first", [
    ("finish", "SUCCEEDED", "GO", None),
    ("nan", "SUCCEEDED", "NO-GO", ("nan-inf", 5)),
    # wandb keeps a step's row until the next step begins: the last row saved is step 4.
    ("raise", "FAILED", "NO-GO", ("crash", 4)),
])
def test_local_run_directory_verdicts(runs, tmp_path: Path, name: str, state: str,
                                      decision: str, first):
    root, _ = runs[name]
    _, data = watch(tmp_path, wandb_target(str(root / "wandb" / "latest-run")))
    assert (data["terminal_state"], data["decision"]) == (state, decision)
    assert data["target_type"] == "wandb"
    if first is not None:
        assert (data["anomalies_detected"][0]["type"],
                data["anomalies_detected"][0]["step"]) == first
    if name == "raise":
        assert "exit code 1" in data["anomalies_detected"][0]["description"]


def test_killed_local_run_never_ends_and_is_reported_stalled(runs, tmp_path: Path):
    root, _ = runs["kill"]
    result, data = watch(tmp_path, wandb_target(str(root / "wandb")), max_polls=6)
    assert data["terminal_state"] == "RUNNING" and result.exit_code is ExitCode.CONDITIONAL
    stalled = [a for a in data["anomalies_detected"] if a["type"] == "stalled"]
    assert stalled and "writes no exit record" in stalled[0]["description"]


def test_local_run_followed_while_it_writes(tmp_path: Path):
    root = tmp_path / "live"
    writer = _start(root, "--mode", "slow", "--steps", "30", "--delay", "0.1")
    assert writer.stdout is not None
    writer.stdout.readline()  # the first row is logged: the run directory exists

    class Patient(FakeClock):
        def sleep(self, seconds: float) -> None:
            time.sleep(0.3)
            super().sleep(seconds)

    result, data = watch(tmp_path, wandb_target(str(root / "wandb" / "latest-run")),
                         max_polls=200, clock=Patient())
    writer.wait(timeout=60)
    assert result.exit_code is ExitCode.GO
    assert (data["terminal_state"], data["total_steps"]) == ("SUCCEEDED", 29)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    for name in [n for n in os.environ if n.startswith("WANDB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("WANDB_SILENT", "true")
    for name in ("CONFIG", "CACHE", "DATA"):
        monkeypatch.setenv(f"WANDB_{name}_DIR", str(tmp_path / name.lower()))
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    with FakeWandbServer() as fake:
        monkeypatch.setenv("WANDB_BASE_URL", fake.base_url)
        monkeypatch.setenv("WANDB_API_KEY", fake.api_key)
        yield fake


@pytest.mark.parametrize("final, state, decision", [("finished", "SUCCEEDED", "GO"),
                                                    ("crashed", "FAILED", "NO-GO"),
                                                    ("killed", "CANCELLED", "NO-GO")])
def test_api_run_states(server: FakeWandbServer, tmp_path: Path, final: str, state: str,
                        decision: str):
    run = server.add_run("team/proj/abc123", config={"max_steps": 20})
    for _ in range(10):
        run.log(loss=2.0, lr=3e-4)

    def world(clock: FakeClock) -> None:
        if run.last_step < 19:
            for _ in range(5):
                run.log(loss=1.9, lr=3e-4)
        else:
            run.state = final

    _, data = watch(tmp_path, wandb_target("team/proj/abc123"), clock=FakeClock(on_sleep=world))
    assert (data["terminal_state"], data["decision"]) == (state, decision)
    assert data["total_steps"] == 19 and data["target_steps"] == 20
    assert "/team/proj/runs/abc123" in data["summary"]


def test_api_nan_and_run_url_forms(server: FakeWandbServer, tmp_path: Path):
    run = server.add_run("team/proj/xyz789")
    run.log(loss=2.0)
    run.log(loss=float("nan"))
    url = f"{server.base_url}/team/proj/runs/xyz789?workspace=user"
    _, data = watch(tmp_path, wandb_target(url), max_polls=2)
    assert (data["anomalies_detected"][0]["type"], data["anomalies_detected"][0]["step"]) == (
        "nan-inf", 1)


def test_api_requests_per_poll_do_not_grow_with_the_run(server: FakeWandbServer):
    run = server.add_run("team/proj/long")
    for _ in range(5000):
        run.log(loss=2.0)
    target = WandbApiTarget("team/proj/long", "team/proj/long")
    target.poll()
    costs = []
    for _ in range(3):
        for _ in range(20):
            run.log(loss=2.0)
        server.reset_counts()
        snapshot = target.poll()
        assert len(snapshot.records) == 20
        costs.append(sum(server.operations().values()))
    assert len(set(costs)) == 1 and costs[0] <= 6


def test_api_unreachable_mid_run_is_connectivity(server: FakeWandbServer, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch):
    from urllib.parse import urlsplit

    from tests.targets.trackers.tcp_proxy import Proxy

    proxy = Proxy(urlsplit(server.base_url).port or 80)
    monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{proxy.port}")
    run = server.add_run("team/proj/net")
    run.log(loss=2.0)
    target = WandbApiTarget("team/proj/net", "team/proj/net", timeout=3)
    state = {"polls": 0}

    def world(clock: FakeClock) -> None:
        state["polls"] += 1
        run.log(loss=2.0)
        if state["polls"] == 2:
            proxy.down()
        if state["polls"] == 4:
            proxy.up()

    started = time.monotonic()
    _, data = watch(tmp_path, target, max_polls=6, clock=FakeClock(on_sleep=world))
    kinds = [a["type"] for a in data["anomalies_detected"]]
    assert kinds == ["connectivity"]
    assert "W&B API" in data["anomalies_detected"][0]["description"]
    assert "resolved" in data["anomalies_detected"][0]["description"]
    assert data["total_steps"] == 5  # steps 0-5: nothing lost while W&B was unreachable
    assert time.monotonic() - started < 120
    proxy.down()


def test_missing_credentials_and_unknown_runs_fail_at_start(server: FakeWandbServer,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path):
    with pytest.raises(TargetError, match="not found"):
        WandbApiTarget("team/proj/nope", "team/proj/nope")
    monkeypatch.delenv("WANDB_API_KEY")
    done = subprocess.run([sys.executable, "-m", "babysit", "--wandb", "team/proj/abc",
                           "--once"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 4
    assert "WANDB_API_KEY" in done.stderr or "wandb login" in done.stderr


def test_bad_wandb_path_is_a_clear_error():
    with pytest.raises(TargetError, match="expected entity/project/run_id"):
        wandb_target("just-a-name")

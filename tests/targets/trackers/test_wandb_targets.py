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
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.targets.base import TargetError
from babysit.targets.wandb.run import WandbApiTarget, wandb_target
from tests.conftest import FakeClock, artifact_in, require
from tests.fakes.wandb_api import FakeWandbServer
from tests.targets.trackers.wandb_runs import _start

require("wandb", "wandb is not installed (pip install -e '.[test-services]')")

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)


def watch(tmp_path: Path, target, *, max_polls: int = 40, clock: FakeClock | None = None):
    return watch_opened(tmp_path, target.label, lambda: target, max_polls=max_polls,
                        clock=clock)


def watch_opened(tmp_path: Path, label: str, opener, *, max_polls: int = 40,
                 clock: FakeClock | None = None):
    """Watch what `opener` opens, as the CLI does (it may fail to open)."""
    settings = Settings(poll=replace(PollSettings(), max_polls=max_polls),
                        rules=RuleSettings(stall_polls=3), out_dir=tmp_path / "out")
    result = run_session(opener, label, "wandb", settings, NullObserver(),
                         clock=clock or FakeClock())
    return result, artifact_in(tmp_path / "out")


# What an unreachable server must not show: the HTTP libraries' and wandb's own words.
_RAW = ("HTTPConnectionPool", "urllib3", "NewConnectionError", "Max retries",
        "AuthenticationError", "service process is busy", "credentials")


@pytest.mark.parametrize("name, state, decision, first", [
    ("finish", "SUCCEEDED", "GO", None),
    # Anomalies are at W&B's own step, as its charts show it.
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
    assert (data["terminal_state"], data["total_steps"]) == ("SUCCEEDED", 30)  # 0-29


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
    assert data["total_steps"] == 20 and data["target_steps"] == 20  # _step 0-19
    assert "/team/proj/runs/abc123" in data["summary"]


def test_api_nan_and_run_url_forms(server: FakeWandbServer, tmp_path: Path):
    run = server.add_run("team/proj/xyz789")
    run.log(loss=2.0)
    run.log(loss=float("nan"))
    url = f"{server.base_url}/team/proj/runs/xyz789?workspace=user"
    _, data = watch(tmp_path, wandb_target(url), max_polls=2)
    assert (data["anomalies_detected"][0]["type"], data["anomalies_detected"][0]["step"]) == (
        "nan-inf", 1)  # W&B's own _step


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
        assert len(snapshot.log.records) == 20
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
    assert not [raw for raw in _RAW if raw in data["anomalies_detected"][0]["description"]]
    assert "resolved" in data["anomalies_detected"][0]["description"]
    assert data["total_steps"] == 6  # _step 0-5: nothing lost while W&B was unreachable
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


# --- a run counted from step 0 ------------------------------------------------------------

def test_api_finished_zero_based_run_shows_every_step_completed(server: FakeWandbServer,
                                                                tmp_path: Path):
    import json

    run = server.add_run("team/proj/zero", config={"max_steps": 100})
    for step in range(100):  # _step 0..99; a loss that falls (a flat one is not learning)
        run.log(loss=2.0 - 0.005 * step, lr=3e-4)
    run.state = "finished"
    done = subprocess.run([sys.executable, "-m", "babysit", "--wandb", "team/proj/zero",
                           "--interval", "0.5"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    # Progress lines keep W&B's own _step; only the count of steps completed is + 1.
    assert "Step 99/100" in done.stdout
    assert "Steps completed: 100/100" in done.stdout
    assert "Steps completed: 99/100" not in done.stdout
    data = json.loads((tmp_path / "babysit-training.json").read_text())
    assert (data["terminal_state"], data["decision"], data["total_steps"],
            data["target_steps"]) == ("SUCCEEDED", "GO", 100, 100)
    assert "training finished after 100/100 steps" in data["summary"]


def test_api_point_logged_at_step_0_before_training_adds_no_step(server: FakeWandbServer,
                                                                 tmp_path: Path):
    run = server.add_run("team/proj/evalfirst", config={"max_steps": 20})
    run.log(step=0, eval_loss=2.5)  # an evaluation before training, then steps 1..20
    for step in range(1, 21):
        run.log(step=step, loss=2.0 - step * 0.01)
    run.state = "finished"
    result, data = watch(tmp_path, wandb_target("team/proj/evalfirst"), max_polls=3)
    assert result.exit_code is ExitCode.GO
    assert (data["total_steps"], data["target_steps"]) == (20, 20)


# --- W&B down when babysit starts ---------------------------------------------------------

def _down_at_start(monkeypatch: pytest.MonkeyPatch, port: int) -> None:
    monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{port}")


def test_api_down_at_start_without_a_fallback_log_is_one_clean_reason(
        server: FakeWandbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import json

    from babysit.targets.common.fallback import with_fallback
    from babysit.targets.kinds import Request
    from tests.targets.trackers.conftest import _free_port

    port = _free_port()
    _down_at_start(monkeypatch, port)
    server.add_run("team/proj/down")
    request = Request("wandb", "team/proj/down")
    result, data = watch_opened(tmp_path, "team/proj/down", lambda: with_fallback(
        lambda: WandbApiTarget("team/proj/down", "team/proj/down", timeout=3), request, "W&B"))
    assert result.exit_code is ExitCode.UNREACHABLE
    [finding] = data["findings"]
    assert finding["description"] == (f"W&B server http://127.0.0.1:{port} unreachable: "
                                      f"connection refused")
    assert not [raw for raw in _RAW if raw in json.dumps(data)]


def test_api_down_at_start_starts_on_the_fallback_log_and_switches_back(
        server: FakeWandbServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from urllib.parse import urlsplit

    from babysit.targets.common.fallback import with_fallback
    from babysit.targets.kinds import Request
    from tests.targets.trackers.tcp_proxy import Proxy

    proxy = Proxy(urlsplit(server.base_url).port or 80)
    proxy.down()
    _down_at_start(monkeypatch, proxy.port)
    run = server.add_run("team/proj/back", config={"max_steps": 30})
    for _ in range(30):  # _step 0..29: 30 steps
        run.log(loss=1.5)
    run.state = "finished"
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {s}/30 | loss={2.0 - s * 0.01:.3f}\n" for s in range(1, 21)))
    request = Request("wandb", "team/proj/back", options={"fallback_log": str(log)})
    polls = {"n": 0}

    def world(clock: FakeClock) -> None:
        polls["n"] += 1
        if polls["n"] == 2:
            proxy.up()

    try:
        result, data = watch_opened(
            tmp_path, "team/proj/back", lambda: with_fallback(
                lambda: WandbApiTarget("team/proj/back", "team/proj/back", timeout=3),
                request, "W&B"), max_polls=8, clock=FakeClock(on_sleep=world))
    finally:
        proxy.down()
    assert polls["n"] >= 2
    assert result.exit_code is ExitCode.GO
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == (
        "SUCCEEDED", 30, 30)
    assert "/team/proj/runs/back" in data["summary"]
    assert [(a["type"], a["step"]) for a in data["anomalies_detected"]] == [
        ("connectivity", 20)]
    connectivity = data["anomalies_detected"][0]["description"]
    assert "W&B unreachable" in connectivity and "resolved" in connectivity
    assert not [raw for raw in _RAW if raw in connectivity]

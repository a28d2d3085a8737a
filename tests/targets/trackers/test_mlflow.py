"""MLflow runs against a real `mlflow server`, with real client processes logging while
babysit watches."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from babysit.config import PollSettings, RuleSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.exit_codes import ExitCode
from babysit.targets.base import TargetError
from babysit.targets.common.fallback import FallbackTarget
from babysit.targets.common.log_file import LocalLogTarget
from babysit.targets.mlflow.run import MlflowTarget
from tests.conftest import FakeClock, append, artifact_in, installed
from tests.forked_cli import run_babysit
from tests.targets.trackers.conftest import start_writer
from tests.targets.trackers.tcp_proxy import Proxy

pytestmark = pytest.mark.service  # a real service, slow: `-m service` (.ci/run's second stage)


class FastClock(FakeClock):
    def sleep(self, seconds: float) -> None:
        time.sleep(0.1)
        super().sleep(seconds)


def watch(tmp_path: Path, target, max_polls: int = 300, clock: FakeClock | None = None):
    settings = Settings(poll=replace(PollSettings(), max_polls=max_polls),
                        rules=RuleSettings(stall_polls=4), out_dir=tmp_path / "out")
    result = run_session(lambda: target, target.label, "mlflow", settings, NullObserver(),
                         clock=clock or FastClock())
    return result, artifact_in(tmp_path / "out")


def anomalies(data: dict) -> list[tuple[str, int | None]]:
    return [(a["type"], a["step"]) for a in data["anomalies_detected"]]


def mlflow_cli(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """`babysit ARGS` in a process forked with mlflow already imported (tests/forked_cli)."""
    return run_babysit(args, cwd=cwd, env=os.environ, timeout=timeout, preload=["mlflow"])


# The command line says what it could not reach only once the client is there to try.
needs_mlflow = pytest.mark.skipif(not installed("mlflow"), reason="mlflow is not installed "
                                  "(pip install -e '.[test-services]')")


def _unused_uri() -> str:
    from tests.targets.trackers.conftest import _free_port

    return f"http://127.0.0.1:{_free_port()}"


# What an unreachable server must not show: the HTTP libraries' words, the request's URL.
_RAW = ("HTTPConnectionPool", "urllib3", "NewConnectionError", "Max retries", "?run_id=",
        "Errno")


def test_finished_run_is_go_with_its_url_as_evidence(mlflow_server: str, tmp_path: Path):
    proc, run_id = start_writer(mlflow_server, "--steps", "30", "--delay", "0.02")
    result, data = watch(tmp_path, MlflowTarget(run_id, mlflow_server))
    proc.wait()
    assert result.exit_code is ExitCode.GO
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == (
        "SUCCEEDED", 30, 30)
    assert f"/runs/{run_id}" in data["summary"]
    assert data["target_type"] == "mlflow"


def test_nan_metric_is_no_go_at_its_step(mlflow_server: str, tmp_path: Path):
    proc, run_id = start_writer(mlflow_server, "--mode", "nan", "--at", "12", "--steps", "20")
    proc.wait()
    _, data = watch(tmp_path, MlflowTarget(run_id, mlflow_server))
    assert data["decision"] == "NO-GO"
    assert anomalies(data)[0] == ("nan-inf", 12)


def test_crash_inside_start_run_is_failed(mlflow_server: str, tmp_path: Path):
    proc, run_id = start_writer(mlflow_server, "--mode", "crash", "--at", "10")
    proc.wait()
    result, data = watch(tmp_path, MlflowTarget(run_id, mlflow_server))
    assert result.exit_code is ExitCode.NO_GO
    assert data["terminal_state"] == "FAILED"
    [crash] = data["anomalies_detected"]
    assert crash["type"] == "crash" and "MLflow status: FAILED" in crash["description"]


def test_finished_status_after_a_bare_start_run_crash_is_not_trusted(mlflow_server: str,
                                                                     tmp_path: Path):
    proc, run_id = start_writer(mlflow_server, "--mode", "bare-crash", "--at", "10")
    proc.wait()
    result, data = watch(tmp_path, MlflowTarget(run_id, mlflow_server))
    assert data["terminal_state"] == "SUCCEEDED"
    assert data["decision"] == "CONDITIONAL" and result.exit_code is ExitCode.CONDITIONAL
    [early] = data["anomalies_detected"]
    assert early["severity"] == "high" and "stopped at step 10 of 30" in early["description"]
    assert "planned steps not reached" in early["description"]


def test_killed_writer_leaves_running_status_and_staleness_says_stalled(mlflow_server: str,
                                                                        tmp_path: Path):
    proc, run_id = start_writer(mlflow_server, "--mode", "hang", "--at", "8")
    assert proc.stdout is not None and proc.stdout.readline().strip() == "hanging"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    result, data = watch(tmp_path, MlflowTarget(run_id, mlflow_server), max_polls=8)
    assert data["terminal_state"] == "RUNNING" and result.exit_code is ExitCode.CONDITIONAL
    [stalled] = data["anomalies_detected"]
    assert stalled["type"] == "stalled" and stalled["step"] == 8
    assert "MLflow still reports the run as RUNNING" in stalled["description"]


def test_requests_per_poll_stay_constant_as_the_run_grows(mlflow_server: str):
    proc, run_id = start_writer(mlflow_server, "--steps", "2500", "--batch")
    proc.wait()
    target = MlflowTarget(run_id, mlflow_server)
    first = target.poll()
    assert [r.step for r in first.log.records] == list(range(1, 2501))
    before = target.requests
    target.poll()
    assert target.requests - before == 1  # nothing new: only the run itself


def test_unreachable_server_is_connectivity_and_the_fallback_log_takes_over(
        mlflow_server: str, tmp_path: Path):
    proxy = Proxy(urlsplit(mlflow_server).port or 80)
    via = f"http://127.0.0.1:{proxy.port}"
    proc, run_id = start_writer(mlflow_server, "--mode", "hang", "--at", "20")  # RUNNING
    assert proc.stdout is not None and proc.stdout.readline().strip() == "hanging"
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {s}/30 | loss={2.0 - s * 0.01:.3f}\n" for s in range(1, 21)))
    target = FallbackTarget(MlflowTarget(run_id, via), lambda: LocalLogTarget(log),
                            str(log), "MLflow")
    polls = {"n": 0}

    def world(clock: FakeClock) -> None:
        polls["n"] += 1
        if polls["n"] == 2:
            proxy.down()
        if polls["n"] == 3:
            append(log, "".join(f"step {s}/30 | loss=1.7\n" for s in range(21, 25)))
        if polls["n"] == 5:
            proxy.up()

    result, data = watch(tmp_path, target, max_polls=6, clock=FakeClock(on_sleep=world))
    kinds = [a["type"] for a in data["anomalies_detected"]]
    assert "connectivity" in kinds and "stalled" not in kinds
    connectivity = data["anomalies_detected"][kinds.index("connectivity")]
    assert "MLflow unreachable" in connectivity["description"]
    assert "resolved" in connectivity["description"]
    assert not [raw for raw in _RAW if raw in connectivity["description"]]
    assert data["total_steps"] == 24  # the log's newer steps were read while MLflow was down
    proxy.down()
    proc.kill()
    proc.wait()


def test_unknown_run_and_missing_server_fail_at_start_with_clear_messages(
        mlflow_server: str, monkeypatch: pytest.MonkeyPatch):
    with pytest.raises(TargetError, match="not found"):
        MlflowTarget("0" * 32, mlflow_server)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(TargetError, match="--tracking-uri"):
        MlflowTarget("0" * 32)


def test_cli_watches_an_mlflow_run_to_its_end(mlflow_server: str, tmp_path: Path):
    import json

    proc, run_id = start_writer(mlflow_server, "--steps", "40", "--delay", "0.05")
    done = mlflow_cli(["--mlflow", run_id, "--tracking-uri", mlflow_server, "--interval", "0.5",
                       "--json"], tmp_path, timeout=120)
    proc.wait()
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout.splitlines()[-1])["artifact"]
    assert (final["target_type"], final["terminal_state"], final["total_steps"]) == (
        "mlflow", "SUCCEEDED", 40)


@pytest.mark.parametrize("args", [["--fallback-log", "x.log", "train.log"],
                                  ["--mlflow", "abc", "train.log"],
                                  ["--mlflow", "abc", "--wandb", "e/p/r"]])
def test_tracker_usage_errors(tmp_path: Path, args: list[str]):

    (tmp_path / "train.log").write_text("step 1 | loss=1\n")
    done = mlflow_cli([*args], tmp_path, timeout=60)
    assert done.returncode == 2


# --- a run counted from step 0 ------------------------------------------------------------

def test_finished_zero_based_run_shows_every_step_completed(mlflow_server: str,
                                                            tmp_path: Path):
    import json

    proc, run_id = start_writer(mlflow_server, "--first", "0", "--steps", "80")  # 0..79
    proc.wait()
    done = mlflow_cli(["--mlflow", run_id, "--tracking-uri", mlflow_server, "--interval", "0.5"],
                      tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # Progress lines keep MLflow's own step; only the count of steps completed is + 1.
    assert "Step 79/80" in done.stdout
    assert "Steps completed: 80/80" in done.stdout
    assert "Steps completed: 79/80" not in done.stdout
    data = json.loads((tmp_path / "babysit-training.json").read_text())
    assert (data["terminal_state"], data["decision"], data["total_steps"],
            data["target_steps"]) == ("SUCCEEDED", "GO", 80, 80)
    assert "training finished after 80/80 steps" in data["summary"]


# --- the tracker down when babysit starts -------------------------------------------------

@needs_mlflow
def test_cli_without_a_fallback_log_says_in_one_clean_line_that_mlflow_is_down(
        tmp_path: Path):

    uri = _unused_uri()
    done = mlflow_cli(["--mlflow", "a" * 32, "--tracking-uri", uri, "--once"], tmp_path,
                      timeout=120)
    assert done.returncode == 4
    [line] = [x for x in done.stderr.splitlines() if x.strip()]
    assert line == f"babysit: error: target unreachable: MLflow server {uri} unreachable: " \
                   f"connection refused"
    text = done.stdout + done.stderr + (tmp_path / "babysit-training.json").read_text()
    assert not [raw for raw in _RAW if raw in text]


@needs_mlflow
def test_cli_starts_on_the_fallback_log_when_mlflow_is_down(tmp_path: Path):
    import json

    (tmp_path / "train.log").write_text(
        "".join(f"step {s}/30 | loss={2.0 - s * 0.01:.3f}\n" for s in range(1, 13)))
    done = mlflow_cli(["--mlflow", "a" * 32, "--tracking-uri", _unused_uri(),
                       "--fallback-log", "train.log", "--once"], tmp_path, timeout=120)
    assert done.returncode == ExitCode.CONDITIONAL, done.stdout + done.stderr
    assert "starting on the fallback log train.log, and trying MLflow again" in done.stdout
    assert "Steps completed: 12/30" in done.stdout
    data = json.loads((tmp_path / "babysit-training.json").read_text())
    assert (data["target_type"], data["target"], data["total_steps"]) == (
        "mlflow", "a" * 32, 12)
    [connectivity] = data["anomalies_detected"]
    assert connectivity["type"] == "connectivity"
    assert "MLflow unreachable" in connectivity["description"]
    assert "connection refused" in connectivity["description"]
    assert not [raw for raw in _RAW if raw in done.stdout + done.stderr + json.dumps(data)]


def test_fallback_from_the_start_switches_back_to_mlflow_when_it_answers(
        mlflow_server: str, tmp_path: Path):
    from babysit.targets.kinds import Request
    from babysit.targets.mlflow import KIND

    proc, run_id = start_writer(mlflow_server, "--steps", "30")
    proc.wait()  # FINISHED, steps 1..30
    proxy = Proxy(urlsplit(mlflow_server).port or 80)
    proxy.down()
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {s}/30 | loss={2.0 - s * 0.01:.3f}\n" for s in range(1, 21)))
    request = Request("mlflow", run_id, options={
        "tracking_uri": f"http://127.0.0.1:{proxy.port}", "fallback_log": str(log)})
    polls = {"n": 0}

    def world(clock: FakeClock) -> None:
        polls["n"] += 1
        if polls["n"] == 1:
            append(log, "".join(f"step {s}/30 | loss=1.7\n" for s in range(21, 25)))
        if polls["n"] == 3:
            proxy.up()

    settings = Settings(poll=replace(PollSettings(), max_polls=8),
                        rules=RuleSettings(stall_polls=4), out_dir=tmp_path / "out")
    try:
        result = run_session(lambda: KIND.open(request), run_id, "mlflow", settings,
                             NullObserver(), clock=FakeClock(on_sleep=world))
    finally:
        proxy.down()
    data = artifact_in(tmp_path / "out")
    assert polls["n"] >= 3  # MLflow answered only once the log had been read for a while
    assert result.exit_code is ExitCode.GO
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == (
        "SUCCEEDED", 30, 30)
    assert f"/runs/{run_id}" in data["summary"]
    # Down at the start, back later; MLflow's copy of the steps the log had already given
    # is not read again as the run going back to step 1.
    assert [(a["type"], a["step"]) for a in data["anomalies_detected"]] == [
        ("connectivity", 20)]
    assert "resolved" in data["anomalies_detected"][0]["description"]

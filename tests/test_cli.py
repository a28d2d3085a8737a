"""The command line as users run it: real `babysit` processes, real exit codes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import append, artifact_in
from tests.forked_cli import python_m_babysit

FINISHED = "".join(f"step {s}/50 | loss={3 - s * 0.01:.3f} | lr=1e-4\n" for s in range(1, 51))
FINISHED += "Training finished\n"


def babysit(*args: str, cwd: Path, timeout: float = 60,
            env_columns: int | None = None) -> subprocess.CompletedProcess[str]:
    env = None if env_columns is None else {**os.environ, "COLUMNS": str(env_columns)}
    return python_m_babysit(*args, cwd=cwd, timeout=timeout, env=env)


def test_version(tmp_path: Path):
    done = babysit("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("babysit ")


@pytest.mark.parametrize("text, code, decision", [
    (FINISHED, 0, "GO"),
    ("step 1/50 | loss=3.0\nstep 2/50 | loss=nan\n", 1, "NO-GO"),
    ("step 1/50 | loss=3.0\nstep 2/50 | loss=2.9\n", 3, "CONDITIONAL"),
])
def test_once_exit_code_follows_the_decision(tmp_path: Path, text: str, code: int,
                                              decision: str):
    (tmp_path / "train.log").write_text(text)
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert done.returncode == code, done.stderr
    assert f"Decision: {decision}" in done.stdout
    assert artifact_in(tmp_path)["decision"] == decision


def test_progress_line_has_the_seed_format(tmp_path: Path):
    (tmp_path / "train.log").write_text(
        "step 1200/10000 | loss=0.342 | lr=1e-4 | grad_norm=0.8 | 142 samples/s\n")
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert ("Step 1200/10000 (12%) | loss=0.342 | lr=1e-4 | grad_norm=0.8 | 142 samples/s"
            in done.stdout)


def test_progress_line_names_the_epoch_plan_when_the_steps_have_none(tmp_path: Path):
    (tmp_path / "train.log").write_text("".join(
        f"epoch {e}/10 step {e * 40} loss {1 / e:.3f}\n" for e in range(1, 6)))
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert "Step 200, epoch 5/10 | loss=0.2" in done.stdout


def test_a_bad_flag_value_is_named_as_the_flag(tmp_path: Path):
    (tmp_path / "train.log").write_text("step 1/10 loss 2.0\n")
    done = babysit("train.log", "--interval", "-5", cwd=tmp_path)
    assert done.returncode == 2
    assert "Invalid value for --interval: must be between" in done.stderr


def test_missing_file_exits_4_with_a_clear_message_and_an_artifact(tmp_path: Path):
    done = babysit("logs/nope.log", "--once", "--out-dir", "out", cwd=tmp_path)
    assert done.returncode == 4
    assert "log file not found: logs/nope.log" in done.stderr
    assert "Traceback" not in done.stderr
    assert artifact_in(tmp_path / "out")["confidence"] == "low"


@pytest.mark.parametrize("args", [
    ["train.log", "--interval", "0"],
    ["train.log", "--interval", "60", "--max-interval", "30"],
    ["train.log", "--max-polls", "zero"],
    ["train.log", "--no-such-flag"],
    # A typo is found now, not on the day a --notify URL is added.
    ["train.log", "--notify-severity", "urgent"],
    # A value that names no W&B run is the command line's fault, not an unreachable run.
    ["--wandb", "foo"],
    ["--wandb", "entity/project"],
    # Values that name a run in every way out: one printable line, sizes a count can be.
    ["train.log", "--run-id", "a\nDecision: GO"],
    ["train.log", "--run-id", "x" * 201],
    ["train.log", "--total-steps", "9" * 23],
    ["--proc", "", "train.log"],
])
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]):
    (tmp_path / "train.log").write_text(FINISHED)
    done = babysit(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert not (tmp_path / "babysit-training.json").exists()


def test_unknown_setting_in_babysit_toml_is_a_usage_error(tmp_path: Path):
    (tmp_path / "train.log").write_text(FINISHED)
    (tmp_path / "babysit.toml").write_text("[rules]\nspike_kk = 3\n")
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert done.returncode == 2
    assert "spike_kk" in done.stderr


def test_thresholds_come_from_pyproject_tool_babysit(tmp_path: Path):
    text = "".join(f"step {s}/50 | grad_norm=1 | loss=2\n" for s in range(1, 7))
    text += "step 7/50 | grad_norm=50 | loss=2\n"  # far above 10, the configured ceiling
    (tmp_path / "train.log").write_text(text)
    (tmp_path / "pyproject.toml").write_text("[tool.babysit.rules]\ngrad_norm_max = 10\n")
    babysit("train.log", "--once", cwd=tmp_path)
    types = [a["type"] for a in artifact_in(tmp_path)["anomalies_detected"]]
    assert "grad-explosion" in types


def test_file_named_like_a_subcommand_is_reached_with_dot_slash(tmp_path: Path):
    (tmp_path / "demo").write_text(FINISHED)
    done = babysit("./demo", "--once", cwd=tmp_path)
    assert done.returncode == 0
    assert artifact_in(tmp_path)["target"] == "./demo"


def test_json_mode_prints_only_json_lines_ending_with_the_artifact(tmp_path: Path):
    (tmp_path / "train.log").write_text(FINISHED)
    done = babysit("train.log", "--once", "--json", "--run-id", "abc", cwd=tmp_path)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "baseline" and events[0]["step"] == 50
    assert events[-1]["event"] == "final"
    assert events[-1]["artifact"]["run_id"] == "abc"
    assert events[-1]["artifact"] == artifact_in(tmp_path)
    # One spelling of a moment in every event: ISO-8601 UTC ending in Z.
    assert all(e["time"].endswith("Z") and "+00:00" not in e["time"] for e in events), \
        [e["time"] for e in events]


def test_remote_host_that_does_not_resolve_exits_4_naming_dns(tmp_path: Path):
    env_home = tmp_path / "home"
    env_home.mkdir()
    done = subprocess.run([sys.executable, "-m", "babysit", "me@no-such-host.invalid:/x.log",
                           "--once"], cwd=tmp_path, text=True, capture_output=True, timeout=60,
                          env={**os.environ, "HOME": str(env_home)})
    assert done.returncode == 4
    assert "cannot resolve the host name 'no-such-host.invalid' (DNS)" in done.stderr


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "babysit", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _read_event(proc: subprocess.Popen[str], kind: str, timeout: float = 20) -> dict:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        event = json.loads(line)
        if event["event"] == kind:
            return event
    raise AssertionError(f"no {kind} event")


def test_live_watch_reports_appended_lines_and_exits_no_go_on_nan(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step 1/500 | loss=3.0 | lr=1e-4\n")
    proc = _start(["train.log", "--json", "--interval", "0.2", "--no-backoff"], tmp_path)
    try:
        assert _read_event(proc, "baseline")["step"] == 1
        append(log, "step 2/500 | loss=2.9 | lr=1e-4\n")
        deadline = time.monotonic() + 20
        while _read_event(proc, "poll")["step"] != 2:
            assert time.monotonic() < deadline
        append(log, "step 3/500 | loss=nan | lr=1e-4\n")
        anomaly = _read_event(proc, "anomaly")
        assert (anomaly["type"], anomaly["step"], anomaly["severity"]) == ("nan-inf", 3, "blocker")
        assert proc.wait(timeout=20) == 1
    finally:
        proc.kill()
    data = artifact_in(tmp_path)
    assert data["decision"] == "NO-GO" and data["total_steps"] == 3


def test_ctrl_c_exits_130_with_a_running_artifact(tmp_path: Path):
    (tmp_path / "train.log").write_text("step 1/500 | loss=3.0\n")
    proc = _start(["train.log", "--json", "--interval", "30"], tmp_path)
    try:
        _read_event(proc, "baseline")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
    finally:
        proc.kill()
    data = artifact_in(tmp_path)
    assert data["terminal_state"] == "RUNNING" and data["decision"] == "CONDITIONAL"


@pytest.mark.skipif(os.environ.get("BABYSIT_SKIP_DEMO") == "1", reason="the demo takes ~8 s")
def test_demo_catches_the_nan_and_keeps_its_files_in_one_folder(tmp_path: Path):
    done = babysit("demo", cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ANOMALY (blocker) nan-inf" in done.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["babysit-demo"]
    assert sorted(p.name for p in (tmp_path / "babysit-demo").iterdir()) == \
        ["babysit-training.json", "train.log"]
    data = artifact_in(tmp_path / "babysit-demo")
    assert data["decision"] == "NO-GO"
    assert any(a["type"] == "nan-inf" for a in data["anomalies_detected"])


def test_sigterm_ends_the_watch_with_a_verdict(tmp_path: Path):
    (tmp_path / "train.log").write_text("step 1/500 | loss=3.0\n")
    proc = _start(["train.log", "--json", "--interval", "30"], tmp_path)
    try:
        _read_event(proc, "baseline")
        proc.terminate()
        assert proc.wait(timeout=20) == 130
    finally:
        proc.kill()
    assert artifact_in(tmp_path)["terminal_state"] == "RUNNING"


def test_until_event_is_silent_until_the_nan_then_prints_one_json_line(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step 1/500 | loss=3.0\n")
    proc = _start(["train.log", "--json", "--until-event", "--interval", "0.2"], tmp_path)
    try:
        for step in range(2, 8):
            time.sleep(0.25)
            append(log, f"step {step}/500 | loss={3 - step * 0.01:.2f}\n")
        append(log, "step 8/500 | loss=nan\n")
        assert proc.wait(timeout=30) == 1
    finally:
        proc.kill()
    assert proc.stdout is not None
    lines = proc.stdout.read().splitlines()
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event["event"] == "final"
    assert event["artifact"]["anomalies_detected"][0]["type"] == "nan-inf"


def test_until_event_does_not_wake_again_for_what_it_already_reported(tmp_path: Path):
    log = tmp_path / "train.log"
    text = "".join(f"step {s}/500 | loss={2.0 - 0.005 * s:.3f}\n" for s in range(1, 30))
    log.write_text(text + "step 30/500 | loss=9.0\n" + "".join(
        f"step {s}/500 | loss={2.0 - 0.005 * s:.3f}\n" for s in range(31, 40)))
    first = babysit("train.log", "--json", "--until-event", cwd=tmp_path)
    assert first.returncode == 3  # a (resolved) loss spike: worth a look, run still going
    assert json.loads(first.stdout)["stop_reason"].startswith("event: loss-spike")
    again = babysit("train.log", "--json", "--until-event", "--max-polls", "1", cwd=tmp_path)
    assert json.loads(again.stdout)["stop_reason"] == "--max-polls 1 reached"


def test_an_agent_reading_only_until_event_output_follows_a_run_to_its_end(tmp_path: Path):
    """The loop the README gives an agent, against a live run that spikes, then finishes."""
    log = tmp_path / "train.log"
    log.touch()
    trainer = subprocess.Popen([sys.executable, "-m", "babysit.demo.trainer", "--log", str(log),
                                "--steps", "120", "--spike-at", "40", "--nan-at", "100000",
                                "--delay", "0.03"])
    codes, events = [], []
    try:
        for _ in range(10):
            done = babysit("train.log", "--json", "--until-event", "--interval", "0.5",
                           cwd=tmp_path)
            codes.append(done.returncode)
            events.append(json.loads(done.stdout.splitlines()[-1]))
            if done.returncode in (0, 1):
                break
    finally:
        trainer.wait(timeout=60)
    assert codes[-1] == 0 and events[-1]["artifact"]["terminal_state"] == "SUCCEEDED"
    assert 3 in codes
    woken_by = [e["stop_reason"] for e in events[:-1]]
    assert any("loss-spike" in reason for reason in woken_by)


def test_help_points_to_the_watch_options_and_lists_every_exit_code(tmp_path: Path):
    from babysit.exit_codes import ExitCode

    top = babysit("--help", cwd=tmp_path, env_columns=200)
    watch = babysit("watch", "-h", cwd=tmp_path, env_columns=200)
    assert "babysit watch -h" in top.stdout
    for text in (top.stdout, watch.stdout):
        codes = text[text.index("Exit codes:"):]
        for code in ExitCode:
            assert f" {int(code)} " in " ".join(codes.split()), (code, codes)


@pytest.mark.parametrize("written", ["babysit-demo/train.log", "babysit-demo/babysit-training.json",
                                     "babysit-training.json", "babysit-training.unread.json"])
def test_what_babysit_writes_in_a_checkout_is_ignored_by_git(written: str):
    root = Path(__file__).parents[1]
    if not (root / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "check-ignore", "-q", written], cwd=root, timeout=30)
    assert done.returncode == 0, f"{written} would show up in git status"

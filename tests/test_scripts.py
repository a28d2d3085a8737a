"""scripts/check-process.sh, run for real (locally; the ssh form is the same script
piped to the remote shell)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

SCRIPT = Path(__file__).parents[1] / "scripts" / "check-process.sh"
FAKES = Path(__file__).parent / "fakes"


def check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=30, env={**os.environ, **(env or {})})


def test_live_pid_is_alive_with_its_command():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        report = json.loads(check("--pid", str(sleeper.pid)).stdout)
        assert report["alive"] is True
        assert report["info"][0]["pid"] == sleeper.pid
        assert "time.sleep(60)" in report["info"][0]["command"]
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize("name", ["'; touch PWNED; echo '", "$(touch PWNED)", "`touch PWNED`",
                                  "a\" b; touch PWNED", "x\nrm -rf ~"])
def test_hostile_names_are_matched_literally_never_run(tmp_path: Path, name: str):
    done = subprocess.run(["bash", str(SCRIPT), "--name", name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    report = json.loads(done.stdout)
    assert report["alive"] is False and report["info"] == []
    assert not (tmp_path / "PWNED").exists()


def test_gpu_stats_come_from_nvidia_smi(tmp_path: Path):
    recorded = (FIXTURES / "nvidia-smi" / "rtx2080ti-x4.query-gpu.csv").read_text()
    # This script asks for index,name,util,used,total: drop the uuid column.
    rows = [line.split(", ") for line in recorded.splitlines()]
    csv = tmp_path / "gpus.csv"
    csv.write_text("\n".join(", ".join([r[0], r[1], *r[3:]]) for r in rows) + "\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text(f"#!/bin/sh\ncat {csv}\n")
    (fake / "nvidia-smi").chmod(0o755)
    report = json.loads(check("--pid", "1", env={"PATH": f"{fake}:{os.environ['PATH']}"}).stdout)
    assert [g["util_percent"] for g in report["gpu_stats"]] == [70, 0, 0, 5]
    assert report["gpu_stats"][0]["name"] == "NVIDIA GeForce RTX 2080 Ti"


def test_driver_failure_is_reported_not_fatal():
    env = {"PATH": f"{FAKES}:{os.environ['PATH']}", "FAKE_NVIDIA_SMI_FAIL": "1"}
    report = json.loads(check("--pid", "1", env=env).stdout)
    assert report["gpu_stats"] == []
    assert "couldn't communicate with the NVIDIA driver" in report["gpu_error"]


@pytest.mark.parametrize("args", [[], ["--pid", "1;id"], ["--color", "x"], ["--name", ""]])
def test_bad_arguments_exit_2(args: list[str]):
    assert check(*args).returncode == 2

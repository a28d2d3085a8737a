"""GPU telemetry inside a watch: the GPU line, the gpu-idle rule, and freeing memory
held by a dead run's leftover processes. nvidia-smi is the fake in tests/fakes, which
prints recorded real outputs (tests/fixtures/nvidia-smi) with the test's own PIDs."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from babysit.telemetry.gpu import GpuProbe
from tests.conftest import FIXTURES
from tests.core.test_fixer import actions, start, watch

FAKES = Path(__file__).parents[1] / "fakes"
RECORDED = FIXTURES / "nvidia-smi"


@pytest.fixture
def fake_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("PATH", f"{FAKES}:{__import__('os').environ['PATH']}")
    gpus, apps = tmp_path / "gpus.csv", tmp_path / "apps.csv"
    monkeypatch.setenv("FAKE_NVIDIA_SMI_GPUS", str(gpus))
    monkeypatch.setenv("FAKE_NVIDIA_SMI_APPS", str(apps))
    gpus.write_text((RECORDED / "rtx2080ti-x4.query-gpu.csv").read_text())

    def holding(pid: int, recorded_pid: str = "2482652") -> None:
        """The recorded listing, with the run's PID in place of a recorded one (GPU 1,
        0 % busy, 1296 MiB)."""
        text = (RECORDED / "rtx2080ti-x4.query-compute-apps.csv").read_text()
        apps.write_text(text.replace(recorded_pid, str(pid)))

    apps.write_text("")
    return holding


def probe() -> GpuProbe:
    return GpuProbe(use_nvml=False, timeout=5.0)


def test_idle_gpus_of_a_live_run_are_reported(tmp_path: Path, fake_smi):
    proc = start(tmp_path, "--steps", "100000", "--delay", "0.05")
    fake_smi(proc.pid)
    result, data = watch(tmp_path, proc, gpu=probe(), max_polls=5)
    idle = [a for a in data["anomalies_detected"] if a["type"] == "gpu-idle"]
    assert idle and idle[0]["severity"] == "medium"
    assert "under 5% utilisation for 2 polls" in idle[0]["description"]
    proc.kill()


def test_gpu_line_shows_only_the_runs_gpus(tmp_path: Path, fake_smi):
    from babysit.telemetry.gpu import for_run

    fake_smi(4242)
    reading = probe().read()
    run = for_run(reading, [4242])
    assert run is not None
    assert run.text() == "GPU: 0% util, 1.3/11 GB VRAM"


def test_dead_runs_leftover_holding_gpu_memory_is_terminated(tmp_path: Path, fake_smi):
    pidfile = tmp_path / "child.pid"
    proc = start(tmp_path, "--mode", "child", "--at", "8", "--child-pidfile", str(pidfile),
                 "--delay", "0.05")
    deadline = time.monotonic() + 10
    while not pidfile.exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child = int(pidfile.read_text())
    fake_smi(child)
    _, data = watch(tmp_path, proc, gpu=probe())
    assert ("free-gpu-memory", "applied") in actions(data)
    assert ("restart-crashed-process", "skipped") in actions(data)  # user-code error
    deadline = time.monotonic() + 10
    while psutil.pid_exists(child) and psutil.Process(child).status() != "zombie":
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_no_fix_leaves_the_leftovers_alone(tmp_path: Path, fake_smi):
    pidfile = tmp_path / "child.pid"
    proc = start(tmp_path, "--mode", "child", "--at", "8", "--child-pidfile", str(pidfile),
                 "--delay", "0.05")
    while not pidfile.exists():
        time.sleep(0.02)
    child = int(pidfile.read_text())
    fake_smi(child)
    _, data = watch(tmp_path, proc, gpu=probe(), fix=False)
    assert ("free-gpu-memory", "skipped") in actions(data)
    assert psutil.pid_exists(child) and psutil.Process(child).status() != "zombie"
    psutil.Process(child).kill()

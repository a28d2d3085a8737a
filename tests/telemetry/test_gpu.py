"""GPU telemetry: parsing recorded nvidia-smi output, the probe (through a scripted
runner, a fake NVML module and the fake `nvidia-smi` in tests/fakes), and the
per-run view. tests/fixtures/nvidia-smi/README.md says where each recording is from."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from babysit.telemetry.gpu import (
    MIB,
    QUERY_APPS_ARGS,
    QUERY_GPU_ARGS,
    GpuDevice,
    GpuProbe,
    GpuProcess,
    GpuQueryError,
    GpuReading,
    RunGpu,
    for_run,
    parse_query_apps,
    parse_query_gpu,
    parse_smi_number,
    run_local,
)

TESTS = Path(__file__).resolve().parents[1]
SMI = TESTS / "fixtures" / "nvidia-smi"
FAKES = TESTS / "fakes"

H100_UUID = "GPU-00000000-0000-0000-0000-000000000000"
RTX_UUIDS = (
    "GPU-2a8f06c3-0000-0000-0000-000000000000",
    "GPU-16bca67b-0000-0000-0000-000000000000",
    "GPU-e53e5dfb-0000-0000-0000-000000000000",
    "GPU-198d6802-0000-0000-0000-000000000000",
)
GPU_COLUMNS = ("index", "name", "uuid", "utilization.gpu [%]", "memory.used [MiB]",
               "memory.total [MiB]")
APP_COLUMNS = ("pid", "gpu_uuid", "used_gpu_memory [MiB]")


def recorded(name: str) -> str:
    return (SMI / name).read_text(encoding="utf-8")


def reading_from(stem: str) -> GpuReading:
    devices = parse_query_gpu(recorded(f"{stem}.query-gpu.csv"))
    uuids = {d.uuid: d.index for d in devices if d.uuid is not None}
    apps = parse_query_apps(recorded(f"{stem}.query-compute-apps.csv"), uuids)
    return GpuReading("nvidia-smi", devices, apps)


# ------------------------------------------- the test inputs match the recordings


def _without_unit(cell: str) -> str:
    for unit in (" MiB", " %"):
        if cell.endswith(unit):
            return cell[: -len(unit)]
    return cell


def project(original: str, columns: Sequence[str]) -> list[str]:
    """What `--format=csv,noheader,nounits` with `columns` would have printed."""
    header, *rows = original.splitlines()
    names = header.split(", ")
    at = [names.index(column) for column in columns]
    out = []
    for row in rows:
        cells = row.split(", ")
        assert len(cells) == len(names), "a recorded row lost or gained a column"
        out.append(", ".join(_without_unit(cells[i]) for i in at))
    return out


def test_h100_inputs_are_the_recorded_columns() -> None:
    gpu = project(recorded("h100-mig-load.query-gpu.original.csv"), GPU_COLUMNS)
    assert recorded("h100-mig-load.query-gpu.csv").splitlines() == gpu
    apps = project(recorded("h100-mig-load.query-compute-apps.original.csv"), APP_COLUMNS)
    assert recorded("h100-mig-load.query-compute-apps.csv").splitlines() == apps
    idle = project(recorded("h100-mig-idle.query-compute-apps.original.csv"), APP_COLUMNS)
    assert idle == [] and recorded("h100-mig-idle.query-compute-apps.csv") == ""


def test_gtx_inputs_are_the_recorded_columns_plus_index_and_na_uuid() -> None:
    picked = project(recorded("gtx1080ti-gtx1060.query-gpu.original.csv"),
                     ("name", "utilization.gpu [%]", "memory.used [MiB]", "memory.total [MiB]"))
    expected = []
    for index, row in enumerate(picked):
        name, rest = row.split(", ", 1)
        expected.append(f"{index}, {name}, [N/A], {rest}")
    assert recorded("gtx1080ti-gtx1060.query-gpu.csv").splitlines() == expected


def test_rtx_inputs_are_the_numbers_in_the_recorded_q_output() -> None:
    blocks = recorded("rtx2080ti-x4.q.original.txt").split("\nGPU ")[1:]
    gpu_rows, app_rows = [], []
    for index, block in enumerate(blocks):
        def field(pattern: str, text: str = block) -> str:
            found = re.search(pattern, text)
            assert found is not None, pattern
            return found.group(1)

        uuid = field(r"GPU UUID\s+: (\S+)")
        fb = block.split("    FB Memory Usage\n", 1)[1]
        gpu_rows.append(", ".join((
            str(index), field(r"Product Name\s+: (.+)"), uuid,
            field(r"\n\s+Gpu\s+: (\d+) %"), field(r"\s+Used\s+: (\d+) MiB", fb),
            field(r"\s+Total\s+: (\d+) MiB", fb),
        )))
        pids = re.findall(r"Process ID\s+: (\d+)", block)
        mibs = re.findall(r"Used GPU Memory\s+: (\d+) MiB", block)
        app_rows += [f"{pid}, {uuid}, {mib}" for pid, mib in zip(pids, mibs, strict=True)]
    assert recorded("rtx2080ti-x4.query-gpu.csv").splitlines() == gpu_rows
    assert recorded("rtx2080ti-x4.query-compute-apps.csv").splitlines() == app_rows


# ---------------------------------------------------------------------- parsing


def test_parse_busy_four_gpu_node() -> None:
    devices = parse_query_gpu(recorded("rtx2080ti-x4.query-gpu.csv"))
    assert [d.index for d in devices] == [0, 1, 2, 3]
    assert devices[0] == GpuDevice(0, "NVIDIA GeForce RTX 2080 Ti", RTX_UUIDS[0], 70.0,
                                   10081.0, 11264.0)
    assert devices[2].util_percent == 0.0 and devices[2].mem_used_mib == 3.0  # idle
    apps = parse_query_apps(recorded("rtx2080ti-x4.query-compute-apps.csv"),
                            {d.uuid: d.index for d in devices if d.uuid})
    assert apps == (GpuProcess(2620449, 0, 9876.0), GpuProcess(3066537, 0, 202.0),
                    GpuProcess(2482652, 1, 1296.0))


def test_parse_mig_gpu_whose_utilisation_is_na() -> None:
    (device,) = parse_query_gpu(recorded("h100-mig-load.query-gpu.csv"))
    assert device == GpuDevice(0, "NVIDIA H100 80GB HBM3", H100_UUID, None, 11125.0, 81559.0)
    apps = parse_query_apps(recorded("h100-mig-load.query-compute-apps.csv"), {H100_UUID: 0})
    assert [(p.pid, p.gpu_index, p.used_mib) for p in apps] == [
        (21180, 0, 2296.0), (21181, 0, 1272.0), (21198, 0, 7484.0)]


def test_parse_consumer_gpus_with_na_uuid_and_one_idle() -> None:
    busy, idle = parse_query_gpu(recorded("gtx1080ti-gtx1060.query-gpu.csv"))
    assert busy == GpuDevice(0, "GeForce GTX 1080 Ti", None, 36.0, 2856.0, 11175.0)
    assert (idle.util_percent, idle.mem_used_mib) == (0.0, 4.0)


def test_driver_not_available_tokens_are_none() -> None:
    # Real cells: "[Not Supported]" from a GTX 770, "[N/A]" from the H100 capture.
    gtx770 = recorded("gtx770.query-gpu.original.csv").strip().split(", ")
    assert parse_smi_number(gtx770[1]) is None  # utilization.gpu
    assert parse_smi_number(gtx770[6]) == 52.0  # fan.speed, "52 %"
    assert parse_smi_number("[N/A]") is None
    assert parse_smi_number(" 11125 ") == 11125.0
    with pytest.raises(ValueError):
        parse_smi_number("lots")


def test_empty_process_lists() -> None:
    assert parse_query_apps(recorded("h100-mig-idle.query-compute-apps.csv"), {}) == ()
    assert parse_query_apps("No running processes found\n", {}) == ()


def test_process_on_an_unknown_gpu_has_no_index() -> None:
    apps = parse_query_apps(recorded("h100-mig-load.query-compute-apps.csv"), {})
    assert {p.gpu_index for p in apps} == {None}


def test_blank_lines_stray_spaces_and_malformed_lines() -> None:
    # Built around a recorded row: extra spaces and blank lines must not matter,
    # and each broken line is dropped on its own.
    real = recorded("rtx2080ti-x4.query-gpu.csv").splitlines()[0]
    text = "\n".join([
        "",
        "  " + real.replace(", ", " ,  ") + "  ",
        "   ",
        "garbage",
        "x, NVIDIA GeForce RTX 2080 Ti, GPU-x, 1, 2, 3",  # index is not a number
        "1, NVIDIA GeForce RTX 2080 Ti, GPU-y, lots, 2, 3",  # nor is the utilisation
        "2, NVIDIA GeForce RTX 2080 Ti, GPU-z",  # too few columns
        "",
    ])
    assert parse_query_gpu(text) == parse_query_gpu(real)
    apps = "2620449, GPU-a, 9876\n\nnope, GPU-a, 1\n7, GPU-a\n 8 ,GPU-a, [N/A] \n"
    assert parse_query_apps(apps, {"GPU-a": 0}) == (
        GpuProcess(2620449, 0, 9876.0), GpuProcess(8, 0, None))


def test_a_comma_in_the_gpu_name_stays_in_the_name() -> None:
    (device,) = parse_query_gpu("0, Odd, Name, GPU-q, 5, 6, 7")  # constructed input
    assert (device.name, device.uuid, device.mem_total_mib) == ("Odd, Name", "GPU-q", 7.0)


# ---------------------------------------------------- the probe, with a scripted runner


class ScriptedRunner:
    """Answers the two queries from recorded files (or raises), counting calls."""

    def __init__(self, gpus: str | Exception, apps: str | Exception = "") -> None:
        self.answers = {QUERY_GPU_ARGS: gpus, QUERY_APPS_ARGS: apps}
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str], timeout: float) -> str:
        self.calls.append(tuple(argv))
        answer = self.answers[tuple(argv[1:])]
        if isinstance(answer, Exception):
            raise answer
        return answer


def rtx_runner() -> ScriptedRunner:
    return ScriptedRunner(recorded("rtx2080ti-x4.query-gpu.csv"),
                          recorded("rtx2080ti-x4.query-compute-apps.csv"))


def test_probe_reads_nvidia_smi_through_its_runner() -> None:
    runner = rtx_runner()
    reading = GpuProbe(runner=runner, use_nvml=False, smi="/opt/nv/nvidia-smi").read()
    assert reading == reading_from("rtx2080ti-x4")
    assert [call[0] for call in runner.calls] == ["/opt/nv/nvidia-smi"] * 2


def test_no_devices_means_no_reading() -> None:
    reading = GpuProbe(runner=ScriptedRunner(""), use_nvml=False).read()
    assert reading == GpuReading("none", problem="no NVIDIA GPU found")


def test_devices_are_kept_when_only_the_process_query_fails() -> None:
    runner = ScriptedRunner(recorded("rtx2080ti-x4.query-gpu.csv"),
                            GpuQueryError("nvidia-smi timed out after 5s"))
    reading = GpuProbe(runner=runner, use_nvml=False).read()
    assert reading.source == "nvidia-smi" and len(reading.devices) == 4
    assert reading.processes == () and "timed out" in (reading.problem or "")


def test_read_never_raises() -> None:
    def broken(argv: Sequence[str], timeout: float) -> str:
        raise RuntimeError("boom")

    reading = GpuProbe(runner=broken, use_nvml=False).read()
    assert reading.source == "none" and "boom" in (reading.problem or "")


def test_missing_pynvml_falls_back_to_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes the import fail
    reading = GpuProbe(runner=rtx_runner()).read()
    assert reading.source == "nvidia-smi" and len(reading.devices) == 4


class FakeNVMLError(Exception):
    pass


def fake_nvml(init_error: bool = False) -> Any:
    """An NVML module serving the recorded RTX node's GPUs 0 and 1. GPU 1 refuses
    utilisation (as MIG and some consumer GPUs do) and one process's memory is
    unknown (usedGpuMemory None, as NVML reports in some containers)."""
    calls: dict[str, int] = {"init": 0, "shutdown": 0}

    def init() -> None:
        calls["init"] += 1
        if init_error:
            raise FakeNVMLError("Driver Not Loaded")

    def utilization(handle: int) -> Any:
        if handle == 1:
            raise FakeNVMLError("Not Supported")
        return SimpleNamespace(gpu=70, memory=39)

    procs = {0: [SimpleNamespace(pid=2620449, usedGpuMemory=9876 * MIB),
                 SimpleNamespace(pid=3066537, usedGpuMemory=None)],
             1: [SimpleNamespace(pid=2482652, usedGpuMemory=1296 * MIB)]}
    used = {0: 10081, 1: 1299}
    return SimpleNamespace(
        calls=calls,
        NVMLError=FakeNVMLError,
        nvmlInit=init,
        nvmlShutdown=lambda: calls.__setitem__("shutdown", calls["shutdown"] + 1),
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=lambda h: b"NVIDIA GeForce RTX 2080 Ti",  # old bindings: bytes
        nvmlDeviceGetUUID=lambda h: RTX_UUIDS[h],
        nvmlDeviceGetUtilizationRates=utilization,
        nvmlDeviceGetMemoryInfo=lambda h: SimpleNamespace(used=used[h] * MIB,
                                                          total=11264 * MIB),
        nvmlDeviceGetComputeRunningProcesses=lambda h: procs[h],
    )


def test_nvml_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = fake_nvml()
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    runner = rtx_runner()
    probe = GpuProbe(runner=runner)
    reading = probe.read()
    assert reading.source == "nvml" and runner.calls == []
    assert reading.devices == (
        GpuDevice(0, "NVIDIA GeForce RTX 2080 Ti", RTX_UUIDS[0], 70.0, 10081.0, 11264.0),
        GpuDevice(1, "NVIDIA GeForce RTX 2080 Ti", RTX_UUIDS[1], None, 1299.0, 11264.0),
    )
    assert reading.processes == (GpuProcess(2620449, 0, 9876.0), GpuProcess(3066537, 0, None),
                                 GpuProcess(2482652, 1, 1296.0))
    assert probe.read().source == "nvml" and nvml.calls["init"] == 1
    probe.close()
    probe.close()
    assert nvml.calls["shutdown"] == 1


def test_nvml_that_fails_to_start_is_tried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = fake_nvml(init_error=True)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    probe = GpuProbe(runner=rtx_runner())
    assert [probe.read().source for _ in range(3)] == ["nvidia-smi"] * 3
    assert nvml.calls["init"] == 1
    probe.close()
    assert nvml.calls["shutdown"] == 0


def test_use_nvml_false_never_imports_it(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = fake_nvml()
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert GpuProbe(runner=rtx_runner(), use_nvml=False).read().source == "nvidia-smi"
    assert nvml.calls["init"] == 0


# ------------------------------------------------- the probe, with the fake nvidia-smi


@pytest.fixture
def fake_smi(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """tests/fakes first on PATH, answering with the recorded four-GPU node."""
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_NVIDIA_SMI_GPUS", str(SMI / "rtx2080ti-x4.query-gpu.csv"))
    monkeypatch.setenv("FAKE_NVIDIA_SMI_APPS", str(SMI / "rtx2080ti-x4.query-compute-apps.csv"))
    monkeypatch.delenv("FAKE_NVIDIA_SMI_HANG", raising=False)
    monkeypatch.delenv("FAKE_NVIDIA_SMI_FAIL", raising=False)
    return monkeypatch


def test_busy_node_through_the_fake(fake_smi: pytest.MonkeyPatch) -> None:
    reading = GpuProbe(use_nvml=False).read()
    assert reading == reading_from("rtx2080ti-x4")


def test_driver_failure(fake_smi: pytest.MonkeyPatch) -> None:
    fake_smi.setenv("FAKE_NVIDIA_SMI_FAIL", "1")
    reading = GpuProbe(use_nvml=False).read()
    assert reading.source == "none" and reading.devices == ()
    assert "exit 9" in (reading.problem or "")
    assert "couldn't communicate with the NVIDIA driver" in (reading.problem or "")


def test_a_hang_times_out_and_the_next_read_recovers(fake_smi: pytest.MonkeyPatch) -> None:
    fake_smi.setenv("FAKE_NVIDIA_SMI_HANG", "1")
    probe = GpuProbe(use_nvml=False, timeout=1.0)
    started = time.monotonic()
    reading = probe.read()
    elapsed = time.monotonic() - started
    assert reading == GpuReading("none", problem="nvidia-smi timed out after 1s")
    assert elapsed < 3.0  # the timeout, plus killing the child, plus slack
    fake_smi.delenv("FAKE_NVIDIA_SMI_HANG")
    assert probe.read().source == "nvidia-smi"


def test_missing_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    reading = GpuProbe(use_nvml=False).read()
    assert reading.source == "none"
    assert (reading.problem or "").startswith("nvidia-smi not found")


def test_run_local_errors(fake_smi: pytest.MonkeyPatch) -> None:
    with pytest.raises(GpuQueryError, match="unsupported arguments"):
        run_local(["nvidia-smi", "--query-gpu=name", "--format=csv"], 10.0)
    assert run_local(["nvidia-smi", *QUERY_GPU_ARGS], 10.0) == recorded(
        "rtx2080ti-x4.query-gpu.csv")


# ---------------------------------------------------------------------- per run


def test_for_run_takes_only_the_gpus_its_pids_hold() -> None:
    run = for_run(reading_from("rtx2080ti-x4"), [2620449, 424242])
    assert run is not None
    assert [d.index for d in run.devices] == [0]
    assert dict(run.process_mib) == {2620449: 9876.0}
    assert (run.util_percent, run.mem_used_mib, run.mem_total_mib) == (70.0, 10081.0, 11264.0)
    assert run.text() == "GPU: 70% util, 9.8/11 GB VRAM"


def test_for_run_over_two_gpus() -> None:
    run = for_run(reading_from("rtx2080ti-x4"), {2620449, 3066537, 2482652})
    assert run is not None
    assert [d.index for d in run.devices] == [0, 1]
    assert dict(run.process_mib) == {2620449: 9876.0, 3066537: 202.0, 2482652: 1296.0}
    assert (run.util_percent, run.mem_used_mib, run.mem_total_mib) == (35.0, 11380.0, 22528.0)
    assert run.text() == "GPU: 2× 35% util, 11.1/22 GB VRAM"


def test_for_run_on_a_mig_gpu_without_utilisation() -> None:
    run = for_run(reading_from("h100-mig-load"), [21198])
    assert run is not None and run.util_percent is None
    assert run.text() == "GPU: util n/a, 10.9/79.6 GB VRAM"


def test_for_run_none_when_the_run_holds_no_gpu() -> None:
    assert for_run(reading_from("rtx2080ti-x4"), [1, 2, 3]) is None
    assert for_run(GpuReading("none", problem="no NVIDIA GPU found"), [2620449]) is None


def test_process_memory_sums_over_gpus_and_unknown_stays_absent() -> None:
    devices = parse_query_gpu(recorded("rtx2080ti-x4.query-gpu.csv"))
    reading = GpuReading("nvml", devices, (  # constructed: one pid on two GPUs
        GpuProcess(7, 0, 100.0), GpuProcess(7, 1, 50.0), GpuProcess(8, 1, None)))
    run = for_run(reading, [7, 8])
    assert run is not None and dict(run.process_mib) == {7: 150.0}


def _device(util: float, used_gib: float, total_gib: float) -> GpuDevice:
    return GpuDevice(0, "any", None, util, used_gib * 1024, total_gib * 1024)


def test_text_format() -> None:
    one = RunGpu((_device(94, 18.2, 24),), {}, 94.0, 18.2 * 1024, 24 * 1024)
    assert one.text() == "GPU: 94% util, 18.2/24 GB VRAM"
    four = tuple(_device(97, 62, 80) for _ in range(4))
    assert RunGpu(four, {}, 97.0, 248 * 1024, 320 * 1024).text() == (
        "GPU: 4× 97% util, 248/320 GB VRAM")
    assert RunGpu(four[:1], {}, 3.0, 512.0, None).text() == "GPU: 3% util, 0.5 GB VRAM"
    assert RunGpu(four[:1], {}, None, None, None).text() == "GPU: util n/a, VRAM n/a"


# -------------------------------------------------------------------- a real GPU


def _real_gpu_present() -> bool:
    path = shutil.which("nvidia-smi")
    if path is None or Path(path).parent == FAKES:
        return False
    try:
        done = subprocess.run([path, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "GPU" in done.stdout


@pytest.mark.skipif(not _real_gpu_present(), reason="needs a working NVIDIA GPU and driver")
@pytest.mark.parametrize("use_nvml", [True, False])
def test_reads_a_real_gpu(use_nvml: bool) -> None:
    probe = GpuProbe(use_nvml=use_nvml, timeout=30.0)
    try:
        reading = probe.read()
    finally:
        probe.close()
    assert reading.source in ({"nvml", "nvidia-smi"} if use_nvml else {"nvidia-smi"})
    assert reading.devices, reading.problem
    for device in reading.devices:
        assert device.name
        assert device.mem_total_mib is not None and device.mem_total_mib > 0

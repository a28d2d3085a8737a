"""The run's GPUs as a typed sample: the JSON lines and the dashboard carry the same
object they carried when the sample was a plain mapping (keys, order, values)."""

from __future__ import annotations

from babysit.snapshot import GpuSample
from babysit.targets.common.tracker_rows import gpu_from_system
from babysit.telemetry.gpu import GpuDevice, RunGpu


def test_a_probe_sample_carries_the_run_s_processes():
    devices = (GpuDevice(0, "A100", None, 90.0, 1024.0, 4096.0),
               GpuDevice(2, "A100", None, 70.0, 2048.0, 4096.0))
    sample = RunGpu(devices, {41: 1024.0, 42: 2048.0}, 80.0, 3072.0, 8192.0).sample()
    assert sample.as_json() == {
        "text": "GPU: 2× 80% util, 3/8 GB VRAM", "util_percent": 80.0,
        "mem_used_mib": 3072.0, "mem_total_mib": 8192.0, "gpus": [0, 2],
        "process_mib": {"41": 1024.0, "42": 2048.0}}
    assert list(sample.as_json()) == ["text", "util_percent", "mem_used_mib",
                                      "mem_total_mib", "gpus", "process_mib"]


def test_a_tracker_sample_has_no_process_list():
    sample = gpu_from_system({"gpu.1.gpu": 50.0, "gpu.0.gpu": 70.0})
    assert sample == GpuSample(text="GPU: 2× 60% util", util_percent=60.0, gpus=(0, 1))
    assert sample.as_json() == {"text": "GPU: 2× 60% util", "util_percent": 60.0,
                                "mem_used_mib": None, "mem_total_mib": None, "gpus": [0, 1]}

"""GPU telemetry: what each NVIDIA GPU is doing, and which of it belongs to a run.

Readings come from NVML (the `nvidia-ml-py` package, imported lazily) when it is
installed and initialises, otherwise from two `nvidia-smi` queries run without a
shell. "Not available" is a value here, never an exception: `GpuProbe.read()`
always returns a `GpuReading`, and a field the driver will not report is `None`.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from babysit.snapshot import GpuSample

MIB = 1024 * 1024

QUERY_GPU_ARGS: tuple[str, ...] = (
    "--query-gpu=index,name,uuid,utilization.gpu,memory.used,memory.total",
    "--format=csv,noheader,nounits",
)
QUERY_APPS_ARGS: tuple[str, ...] = (
    "--query-compute-apps=pid,gpu_uuid,used_memory",
    "--format=csv,noheader,nounits",
)

# How long to wait for a killed nvidia-smi to go away. A process stuck inside the
# driver ignores SIGKILL until the call returns, and waiting on it would hang the
# caller just as the original query did.
_REAP_GRACE_SECONDS = 1.0


@dataclass(frozen=True)
class GpuDevice:
    """One GPU as the driver reports it; `None` where it says [N/A] / [Not Supported]."""

    index: int
    name: str
    uuid: str | None
    util_percent: float | None
    mem_used_mib: float | None
    mem_total_mib: float | None


@dataclass(frozen=True)
class GpuProcess:
    """A process holding a compute context on a GPU (`gpu_index` None if unmatched)."""

    pid: int
    gpu_index: int | None
    used_mib: float | None


@dataclass(frozen=True)
class GpuReading:
    """One look at the machine's GPUs.

    `source` is "nvml", "nvidia-smi" or "none". `problem` says why something is
    missing: the whole reading when `source` is "none", or only the process list
    when the devices were read but the processes could not be."""

    source: str
    devices: tuple[GpuDevice, ...] = ()
    processes: tuple[GpuProcess, ...] = ()
    problem: str | None = None


@dataclass(frozen=True)
class RunGpu:
    """The GPUs a run uses: those where any of its PIDs holds memory."""

    devices: tuple[GpuDevice, ...]
    process_mib: Mapping[int, float]
    util_percent: float | None
    mem_used_mib: float | None
    mem_total_mib: float | None

    def sample(self) -> GpuSample:
        """As a snapshot carries it: the line for people, utilisation and memory."""
        return GpuSample(text=self.text(), util_percent=self.util_percent,
                         mem_used_mib=self.mem_used_mib, mem_total_mib=self.mem_total_mib,
                         gpus=tuple(d.index for d in self.devices),
                         process_mib=dict(self.process_mib))

    def text(self) -> str:
        """A one-line summary, e.g. "GPU: 94% util, 18.2/24 GB VRAM".

        Several GPUs get a count ("GPU: 4× 97% util, 248/320 GB VRAM"); GB here are
        binary (MiB / 1024), as nvidia-smi's MiB are."""
        count = f"{len(self.devices)}× " if len(self.devices) > 1 else ""
        util = "util n/a" if self.util_percent is None else f"{self.util_percent:.0f}% util"
        if self.mem_used_mib is None:
            vram = "VRAM n/a"
        elif self.mem_total_mib is None:
            vram = f"{_gb(self.mem_used_mib)} GB VRAM"
        else:
            vram = f"{_gb(self.mem_used_mib)}/{_gb(self.mem_total_mib)} GB VRAM"
        return f"GPU: {count}{util}, {vram}"


def _gb(mib: float) -> str:
    gib = mib / 1024
    if gib >= 100:  # three digits already say enough; "247.6/320" is noise
        return f"{gib:.0f}"
    text = f"{gib:.1f}"
    return text[:-2] if text.endswith(".0") else text


class GpuQueryError(Exception):
    """nvidia-smi could not be run, exited non-zero, or did not answer in time.
    The message is fit to show a user as the reason there is no GPU reading."""


Runner = Callable[[Sequence[str], float], str]
"""(argv, timeout_seconds) -> stdout. Raises GpuQueryError on a non-zero exit, a
timeout, or a missing binary."""


def parse_smi_number(text: str) -> float | None:
    """A numeric nvidia-smi cell: `None` for the driver's "not available" tokens
    ([N/A], [Not Supported], [Unknown Error], ... and a bare N/A), else the number.

    A trailing unit (" MiB", " %") is tolerated. Raises ValueError for anything else."""
    value = text.strip()
    if (value.startswith("[") and value.endswith("]")) or value.upper() == "N/A":
        return None
    for unit in ("MiB", "%"):
        if value.endswith(unit):
            value = value[: -len(unit)].rstrip()
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"not a finite number: {text!r}")
    return number


def _text_or_none(text: str) -> str | None:
    value = text.strip()
    if not value or (value.startswith("[") and value.endswith("]")) or value == "N/A":
        return None
    return value


def parse_query_gpu(text: str) -> tuple[GpuDevice, ...]:
    """Devices from `nvidia-smi` run with QUERY_GPU_ARGS, in the order printed.

    Pure. Blank lines and stray spaces are ignored; [N/A]-style cells become None;
    a line that does not fit the six columns (or whose index or numbers do not
    parse) is skipped rather than guessed at."""
    devices: list[GpuDevice] = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) < 6:
            continue
        # The name is the only cell that could hold a comma; the rest are fixed.
        index_cell, *name_cells = cells[:-4]
        uuid_cell, util_cell, used_cell, total_cell = cells[-4:]
        try:
            device = GpuDevice(
                index=int(index_cell),
                name=", ".join(name_cells),
                uuid=_text_or_none(uuid_cell),
                util_percent=parse_smi_number(util_cell),
                mem_used_mib=parse_smi_number(used_cell),
                mem_total_mib=parse_smi_number(total_cell),
            )
        except ValueError:
            continue
        devices.append(device)
    return tuple(devices)


def parse_query_apps(text: str, uuid_to_index: Mapping[str, int]) -> tuple[GpuProcess, ...]:
    """Processes from `nvidia-smi` run with QUERY_APPS_ARGS.

    Pure. A GPU UUID missing from `uuid_to_index` gives `gpu_index=None`. Empty
    output and "No running processes found" give (); malformed lines are skipped."""
    processes: list[GpuProcess] = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != 3:
            continue
        pid_cell, uuid_cell, used_cell = cells
        try:
            pid = int(pid_cell)
            used = parse_smi_number(used_cell)
        except ValueError:
            continue
        processes.append(GpuProcess(pid, uuid_to_index.get(uuid_cell), used))
    return tuple(processes)


def run_local(argv: Sequence[str], timeout: float) -> str:
    """Run `argv` (no shell) and return its stdout.

    Raises GpuQueryError when the binary is missing or cannot start, when it exits
    non-zero (the message carries its first line of output), or when it runs past
    `timeout` seconds. A timed-out child is killed with its process group; if it
    will not die (stuck inside the driver) it is abandoned rather than waited for."""
    args = list(argv)
    name = os.path.basename(args[0])
    try:
        # A session of its own, so a kill reaches anything it spawned too.
        child = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, errors="replace",
                                 start_new_session=True)
    except FileNotFoundError:
        raise GpuQueryError(
            f"{name} not found (is the NVIDIA driver installed and {name} on PATH?)"
        ) from None
    except OSError as exc:
        raise GpuQueryError(f"could not run {name}: {exc.strerror or exc}") from None
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(child)
        raise GpuQueryError(f"{name} timed out after {timeout:g}s") from None
    if child.returncode != 0:
        # Which stream nvidia-smi writes its failures to is not documented: take either.
        detail = _first_line(err) or _first_line(out) or "no output"
        raise GpuQueryError(f"{name} failed (exit {child.returncode}): {detail}")
    return out


def _kill(child: subprocess.Popen[str]) -> None:
    try:
        if os.name == "posix":
            os.killpg(child.pid, signal.SIGKILL)
        else:  # pragma: no cover - babysit runs on POSIX hosts
            child.kill()
    except (ProcessLookupError, PermissionError):
        pass
    try:
        child.communicate(timeout=_REAP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class GpuProbe:
    """Reads the local GPUs through NVML when it can, else through nvidia-smi.

    NVML gets one chance per probe: if `pynvml` is missing or `nvmlInit` fails,
    later reads go straight to nvidia-smi. nvidia-smi is retried on every read, so
    one hang does not end GPU telemetry for the session; the reading taken during
    the hang says so in `problem`. Each nvidia-smi query has its own `timeout`, so
    a read takes at most about twice that. NVML calls cannot be timed out."""

    def __init__(self, runner: Runner = run_local, use_nvml: bool = True,
                 timeout: float = 5.0, smi: str = "nvidia-smi") -> None:
        self._runner = runner
        self._timeout = timeout
        self._smi = smi
        self._try_nvml = use_nvml
        self._nvml: ModuleType | None = None  # set once nvmlInit has succeeded

    def read(self) -> GpuReading:
        """The current reading. Never raises."""
        try:
            if self._try_nvml or self._nvml is not None:
                reading = self._read_nvml()
                if reading is not None:
                    return reading
            return self._read_smi()
        except Exception as exc:  # the contract is "never raises": report, don't crash
            return GpuReading("none", problem=f"GPU telemetry failed: {exc!r}")

    def close(self) -> None:
        """Shut NVML down if this probe initialised it. Safe to call twice."""
        nvml, self._nvml = self._nvml, None
        if nvml is not None:
            with contextlib.suppress(Exception):  # nothing useful to do if it fails
                nvml.nvmlShutdown()

    # -- NVML

    def _read_nvml(self) -> GpuReading | None:
        """A reading from NVML, or None to fall back to nvidia-smi for this read."""
        nvml = self._nvml or self._init_nvml()
        if nvml is None:
            return None
        nvml_error: Any = getattr(nvml, "NVMLError", Exception)
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except nvml_error:
            return None
        devices: list[GpuDevice] = []
        processes: list[GpuProcess] = []
        for index in range(count):
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
            except nvml_error:
                continue
            devices.append(_nvml_device(nvml, nvml_error, index, handle))
            processes.extend(_nvml_processes(nvml, nvml_error, index, handle))
        if not devices:
            return GpuReading("none", problem="no NVIDIA GPU found")
        return GpuReading("nvml", tuple(devices), tuple(processes))

    def _init_nvml(self) -> ModuleType | None:
        self._try_nvml = False  # one attempt per probe, whatever happens next
        try:
            nvml = importlib.import_module("pynvml")
            nvml.nvmlInit()
        except Exception:  # not installed, or no driver: nvidia-smi will say which
            return None
        self._nvml = nvml
        return nvml

    # -- nvidia-smi

    def _read_smi(self) -> GpuReading:
        try:
            gpu_text = self._runner((self._smi, *QUERY_GPU_ARGS), self._timeout)
        except GpuQueryError as exc:
            return GpuReading("none", problem=str(exc))
        devices = parse_query_gpu(gpu_text)
        if not devices:
            return GpuReading("none", problem="no NVIDIA GPU found")
        uuid_to_index = {d.uuid: d.index for d in devices if d.uuid is not None}
        try:
            apps_text = self._runner((self._smi, *QUERY_APPS_ARGS), self._timeout)
        except GpuQueryError as exc:
            return GpuReading("nvidia-smi", devices, problem=f"GPU processes unknown: {exc}")
        return GpuReading("nvidia-smi", devices, parse_query_apps(apps_text, uuid_to_index))


def _decode(value: Any) -> str:
    # Older nvidia-ml-py releases return bytes, newer ones str.
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _nvml_device(nvml: Any, nvml_error: Any, index: int, handle: Any) -> GpuDevice:
    def ask(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except nvml_error:
            return None

    name = ask(lambda: nvml.nvmlDeviceGetName(handle))
    uuid = ask(lambda: nvml.nvmlDeviceGetUUID(handle))
    rates = ask(lambda: nvml.nvmlDeviceGetUtilizationRates(handle))
    memory = ask(lambda: nvml.nvmlDeviceGetMemoryInfo(handle))
    return GpuDevice(
        index=index,
        name=_decode(name) if name is not None else "",
        uuid=_decode(uuid) if uuid is not None else None,
        util_percent=float(rates.gpu) if rates is not None else None,
        mem_used_mib=memory.used / MIB if memory is not None else None,
        mem_total_mib=memory.total / MIB if memory is not None else None,
    )


def _nvml_processes(nvml: Any, nvml_error: Any, index: int, handle: Any) -> list[GpuProcess]:
    try:
        infos = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
    except nvml_error:
        return []
    found: list[GpuProcess] = []
    for info in infos:
        used = getattr(info, "usedGpuMemory", None)  # None when NVML cannot tell
        found.append(GpuProcess(int(info.pid), index, used / MIB if used is not None else None))
    return found


def for_run(reading: GpuReading, pids: Iterable[int]) -> RunGpu | None:
    """The part of `reading` that belongs to the processes `pids`.

    A GPU belongs to the run when any of the PIDs has a compute context on it.
    Returns None when none does (or the reading has no devices). Utilisation is the
    mean over the run's GPUs and memory the sum; each is None if any of those GPUs
    does not report it, since a partial figure would read as the whole."""
    wanted = set(pids)
    mine = [p for p in reading.processes if p.pid in wanted]
    indices = {p.gpu_index for p in mine if p.gpu_index is not None}
    devices = tuple(d for d in reading.devices if d.index in indices)
    if not devices:
        return None
    process_mib: dict[int, float] = {}
    for proc in mine:
        if proc.used_mib is not None:  # unknown usage stays absent, not a made-up 0
            process_mib[proc.pid] = process_mib.get(proc.pid, 0.0) + proc.used_mib
    utils = _all_known([d.util_percent for d in devices])
    used = _all_known([d.mem_used_mib for d in devices])
    total = _all_known([d.mem_total_mib for d in devices])
    return RunGpu(devices, process_mib, util_percent=sum(utils) / len(utils) if utils else None,
                  mem_used_mib=sum(used) if used else None,
                  mem_total_mib=sum(total) if total else None)


def _all_known(values: list[float | None]) -> list[float] | None:
    known = [v for v in values if v is not None]
    return known if len(known) == len(values) else None


class RunGpuSource:
    """The GPUs of a run's processes, one reading per poll, locally or over SSH (the
    probe's runner decides). The last full reading is kept for the fix policy, which
    looks for a dead run's leftovers in it."""

    def __init__(self, probe: GpuProbe) -> None:
        self.probe = probe
        self.last: GpuReading | None = None

    def for_pids(self, pids: Iterable[int]) -> GpuSample | None:
        self.last = self.probe.read()
        run = for_run(self.last, pids)
        return run.sample() if run is not None else None

    def close(self) -> None:
        self.probe.close()

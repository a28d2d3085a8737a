"""Shared test helpers: a fake clock, log writers, the artifact schema check."""

from __future__ import annotations

import compileall
import importlib.util
import json
import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from babysit.artifact import ARTIFACT_NAME, load_schema

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = FIXTURES / "logs"


def development_logs(root: Path = LOGS) -> list[Path]:
    """Every fixture log under `root` but the held-out sets of the public logs (sealed/,
    sealed-2/, ...), which nothing is developed against (tests/public_split.py)."""
    return sorted(p for p in root.rglob("*.log")
                  if not any(part.startswith("sealed") for part in p.relative_to(root).parts))

# A missing log is waited for at a terminal (like `tail -F`); the tests that mean to wait
# say so, the others want the old answer at once.
os.environ.setdefault("BABYSIT_WAIT_FOR_LOG", "0")
# A line babysit's reader raises on fails the test instead of being counted and read past
# (tests of that counting turn this off).
os.environ.setdefault("BABYSIT_STRICT_READING", "1")
# What babysit keeps between runs (compiled search patterns) goes to a directory of the
# suite's own, not the user's ~/.cache; each process of the suite shares it.
os.environ.setdefault("BABYSIT_CACHE_DIR",
                      str(Path(tempfile.gettempdir()) / f"babysit-test-cache-{os.getuid()}"))

# The suite starts babysit in a few hundred subprocesses and every worker imports the
# test modules: compiled once, they are not compiled again by each of them, even where
# PYTHONDONTWRITEBYTECODE is set (it only stops writing; the files are still read).
sys.dont_write_bytecode = False

# Started in the background (`cmd &` in a script, some CI runners), the suite inherits
# SIGINT ignored, and so would every babysit it starts: the tests that press Ctrl-C on
# one would wait for nothing. Give the processes the disposition of a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        compileall.compile_dir(Path(__file__).parent.parent / "babysit", quiet=2)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Three workers per CPU: most of the suite's time is spent waiting on real servers,
    processes and deadlines, not computing (on 2 CPUs: 100 s with 6, 125 s with 4)."""
    return max(2, min(8, 3 * (os.cpu_count() or 1)))


# Files go to the workers in the order collected (`--dist loadfile`, no reordering), so
# the longest should start first and none be left running alone at the end. How long each
# file took is measured by every run that runs whole files and kept in pytest's cache
# (.pytest_cache), so no list is kept by hand; files holding a `slow` or `corpus` test
# start first, measured or not (a clean checkout, as CI's, has no figures: the files that
# judge the collected logs, over half the suite's time, were collected last and ran
# after everything else). The process that starts the workers reads the figures once and hands
# them to every worker: all must collect in the same order. A stage (`-m service`, the
# default `-m 'not service'`) runs a part of some files, so each keeps figures of its own.
_FILE_SECONDS = "babysit/seconds-per-file"


def _cache_key(config: pytest.Config) -> str:
    stage = re.sub(r"\W+", "-", config.option.markexpr or "").strip("-")
    return f"{_FILE_SECONDS}/{stage or 'all'}"


def _cached_file_seconds(config: pytest.Config) -> dict[str, float]:
    cache = getattr(config, "cache", None)  # absent under `-p no:cacheprovider`
    found = cache.get(_cache_key(config), {}) if cache is not None else {}
    return found if isinstance(found, dict) else {}


def _file_seconds(config: pytest.Config) -> dict[str, float]:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        handed: dict[str, float] = workerinput.get(_FILE_SECONDS, {})
        return handed
    return _cached_file_seconds(config)


def pytest_configure_node(node: Any) -> None:  # pytest-xdist, in the starting process
    node.workerinput[_FILE_SECONDS] = _cached_file_seconds(node.config)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Files holding a slow or corpus test first, then the others, longest first as last
    measured; files not measured yet after them, in the order they were collected."""
    seconds = _file_seconds(config)
    slow_files = {item.path for item in items
                  if item.get_closest_marker("slow") or item.get_closest_marker("corpus")}

    def order(item: pytest.Item) -> tuple[bool, float]:
        return item.path not in slow_files, -seconds.get(item.nodeid.split("::")[0], 0.0)

    items.sort(key=order)


_measured_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # In the starting process, the workers' reports arrive through this hook too.
    path = report.nodeid.split("::")[0]
    _measured_seconds[path] = _measured_seconds.get(path, 0.0) + report.duration


def _whole_files_ran(config: pytest.Config) -> bool:
    """Whether this run ran every test of its stage in the files it ran: a `-k`, a test
    id, `--lf`, `--deselect` or `-x` (`--maxfail`) would measure a part as the whole."""
    option = config.option
    return not (option.keyword or getattr(option, "lf", False)
                or getattr(option, "deselect", None) or option.maxfail
                or any("::" in arg for arg in config.args))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _stop_forkserver()
    config = session.config
    cache = getattr(config, "cache", None)
    if (cache is None or hasattr(config, "workerinput") or not _measured_seconds
            or exitstatus not in (0, 1) or not _whole_files_ran(config)):
        return
    measured = {path: round(seconds, 2) for path, seconds in _measured_seconds.items()}
    cache.set(_cache_key(config), {**_cached_file_seconds(config), **measured})


def _stop_forkserver() -> None:
    """Stop and wait for the server tests/forked_cli.py forks babysit from: left to exit
    on its own it is nobody's child, and the CPU time of every babysit it forked would be
    missing from the suite's (`time python -m pytest`)."""
    forkserver = sys.modules.get("multiprocessing.forkserver")
    if forkserver is not None:
        forkserver._forkserver._stop()  # type: ignore[attr-defined]


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def require(module: str, reason: str) -> None:
    """Skip the calling test module (or directory, from a conftest) when `module` is not
    installed, without importing it: every worker collects every module, and importing
    the Google or Kubernetes clients there costs a second each time."""
    if not installed(module):
        pytest.skip(reason, allow_module_level=True)


def _services() -> list[tuple[str, bool, str]]:
    """(what, found, the tests that need it) for the real services the suite starts."""
    import shutil

    module = installed
    sshd = shutil.which("sshd") or Path("/usr/sbin/sshd").exists()
    smi = shutil.which("nvidia-smi")
    gpu = smi is not None and "tests/fakes" not in smi
    return [
        ("OpenSSH server (sshd)", bool(sshd), "tests/remote (remote logs and processes)"),
        ("MLflow server", module("mlflow"), "tests/targets/trackers MLflow tests"),
        ("wandb", module("wandb"), "tests/targets/trackers W&B tests"),
        ("Google Vertex AI / Logging clients", module("google.cloud.aiplatform_v1")
         and module("google.cloud.logging"), "tests/targets/vertex"),
        ("Kubernetes client", module("kubernetes"), "tests/targets/k8s"),
        ("TensorBoard", module("tensorboard"), "tests/targets/test_tensorboard.py"),
        ("hyperscan", module("hyperscan"), "the history scan's fast path (grep is used "
                                           "without it)"),
        ("NVIDIA GPU (nvidia-smi)", gpu, "tests/telemetry GPU checks on real hardware"),
        ("Slurm (slurmctld, slurmd, munged)", all(shutil.which(n) or Path(f"/usr/sbin/{n}")
                                                  .exists() for n in ("slurmctld", "slurmd",
                                                                      "munged")),
         "tests/targets/slurm (a throwaway single-node cluster; needs root)"),
        ("Chromium + chromedriver", bool(shutil.which("chromedriver")) and module("selenium"),
         "tests/serve browser test of the dashboard"),
    ]


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say at the top which real services were found, and which tests skip without them."""
    lines = ["real services for the tests (clients: pip install -e '.[test-services]'; "
             "programs: .ci/run installs them with apt-get):"]
    for what, found, needs in _services():
        lines.append(f"  {'found  ' if found else 'MISSING'} {what}"
                     + ("" if found else f" — skipped: {needs}"))
    return lines


class FakeClock:
    """A clock whose sleep advances time at once and can run a hook (append to a
    log, raise KeyboardInterrupt) so the loop meets a changing world without waiting."""

    def __init__(self, on_sleep: Callable[[FakeClock], None] | None = None) -> None:
        self.t = 1000.0
        self.slept: list[float] = []
        self.on_sleep = on_sleep

    def monotonic(self) -> float:
        return self.t

    def now(self) -> datetime:
        return datetime(2026, 11, 29, 10, 0, 0, tzinfo=timezone.utc) + timedelta(
            seconds=self.t - 1000.0)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds
        if self.on_sleep is not None:
            self.on_sleep(self)


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def validate_artifact(path: Path) -> dict[str, Any]:
    """Load an artifact and check it against the schema shipped in the package."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, load_schema(), format_checker=jsonschema.FormatChecker())
    return data


def artifact_in(directory: Path) -> dict[str, Any]:
    return validate_artifact(directory / ARTIFACT_NAME)

"""The dashboard shows what babysit has read, not only what it has printed: at the
backoff's cap a report may be five minutes away, while the log is read within a second."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.serve.test_dashboard import fetch, free_port, wait_for

STEADY = "Step {n}/400 | loss=2.0000 | lr=3e-4\n"  # no loss change that would reset the backoff


def test_the_page_follows_the_log_between_printed_reports(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("".join(STEADY.format(n=n) for n in range(1, 41)))
    port = free_port()
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "babysit", str(log), "--serve", "--serve-port", str(port),
         "--interval", "300", "--json", "--out-dir", str(tmp_path / "out")],
        env={**os.environ, "BABYSIT_RUNTIME_DIR": str(runtime)},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    api = f"http://127.0.0.1:{port}/api/metrics"

    def step() -> int | None:
        token = runtime / "babysit" / "token"  # the loopback page wants it too (issue 26)
        if not token.exists():
            return None
        status, document = fetch(api, token.read_text().strip())
        runs = document["runs"] if status == 200 else []
        return runs[0]["step"] if runs else None

    try:
        assert proc.stdout is not None
        assert '"event": "baseline"' in proc.stdout.readline()  # the one report for 300 s
        assert wait_for(lambda: step() == 40, timeout=60)
        with log.open("a") as handle:
            handle.write("".join(STEADY.format(n=n) for n in range(41, 46)))
        assert wait_for(lambda: step() == 45, timeout=60)
        assert proc.poll() is None  # still watching: the page moved without a report
    finally:
        proc.terminate()
        proc.wait(timeout=60)

"""The dashboard and `/api/metrics` on live sessions: a real log growing under a real
`babysit --serve`, the shipped schema, tokens, two sessions under `babysit serve`, and a
real headless browser drawing the page."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from babysit.serve.api import api_schema
from babysit.serve.server import Dashboard, ServeError


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str, token: str | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}
                                     if token else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
            kind = response.headers.get("Content-Type", "")
            return response.status, json.loads(body) if "json" in kind else body
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_for(check: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            found = check()
        except (OSError, ValueError):
            found = None
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("timed out waiting")


class Session:
    """A real `babysit LOG --serve` on a log this test writes to."""

    def __init__(self, tmp: Path, name: str, runtime: Path) -> None:
        self.log = tmp / f"{name}.log"
        self.log.write_text("".join(f"Step {n}/400 | loss={3 - n / 200:.4f} | lr=3e-4\n"
                                    for n in range(1, 41)))
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "babysit", str(self.log), "--serve", "--serve-port",
             str(self.port), "--interval", "0.3", "--no-backoff", "--serve-linger", "60",
             "--out-dir", str(tmp / name)],
            env={**os.environ, "BABYSIT_RUNTIME_DIR": str(runtime)},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}/"
        self.runtime = runtime

    @property
    def token(self) -> str:
        """The user's own dashboard token, made in the runtime directory by the first
        session (agents read it there)."""
        return (self.runtime / "babysit" / "token").read_text().strip()

    def metrics(self) -> dict[str, Any]:
        status, document = fetch(self.url + "api/metrics", self.token)
        assert status == 200
        return document  # type: ignore[no-any-return]

    def append(self, text: str) -> None:
        with self.log.open("a") as handle:
            handle.write(text)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    path = tmp_path / "runtime"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def session(tmp_path: Path, runtime: Path) -> Iterator[Session]:
    live = Session(tmp_path, "train", runtime)
    yield live
    live.stop()


def test_api_metrics_of_a_live_session_follows_the_run_and_matches_its_schema(
        session: Session):
    # The board exists as soon as the page does; the baseline fills it a moment later.
    first = wait_for(lambda: (d := session.metrics())["runs"] and d["runs"][0]["step"]
                     is not None and d)
    jsonschema.validate(first, api_schema())
    run = first["runs"][0]
    assert run["target"].endswith("train.log") and run["kind"] == "local-log"
    assert run["step"] == 40 and run["target_steps"] == 400 and run["health"] == "ok"
    assert run["series"]["loss"]["steps"][-1] == 40
    session.append("".join(f"Step {n}/400 | loss={3 - n / 200:.4f} | lr=3e-4\n"
                           for n in range(41, 61)) + "Step 61/400 | loss=nan | lr=3e-4\n")
    late = wait_for(lambda: (d := session.metrics()) and d["runs"][0]["health"] == "critical"
                    and d)
    jsonschema.validate(late, api_schema())
    run = late["runs"][0]
    assert run["series"]["loss"]["nonfinite"] == [61]
    assert run["series"]["loss"]["values"][-1] is None  # a gap in the curve, not a number
    assert run["latest"]["loss"] == "nan"  # the value, written as in the artifact
    nan = next(a for a in run["anomalies"] if a["type"] == "nan-inf")
    assert nan["step"] == 61 and nan["severity"] == "blocker"


def test_api_metrics_of_a_run_that_ended_unconfirmed_matches_its_schema(session: Session):
    # The shell's prompt after the last record: the process is gone, how it ended is not
    # known (ENDED). The document says so in the state its own schema allows.
    wait_for(lambda: session.metrics()["runs"])
    session.append("Step 41/400 | loss=2.7950 | lr=3e-4\nuser@gpu-box:~/run$ \n")
    ended = wait_for(lambda: (d := session.metrics()) and d["runs"][0]["verdict"] and d)
    jsonschema.validate(ended, api_schema())
    run = ended["runs"][0]
    assert run["state"] == "ENDED" and run["verdict"]["terminal_state"] == "ENDED"
    assert run["verdict"]["decision"] == "CONDITIONAL"


def test_a_token_is_required_off_loopback_and_checked_on_every_request():
    with pytest.raises(ServeError, match="give a token"):
        Dashboard(lambda: [], "0.0.0.0", free_port())
    dashboard = Dashboard(lambda: [], "127.0.0.1", free_port(),
                          token="s3cret-token-of-some-length").start()
    try:
        api = dashboard.url + "api/metrics"
        assert fetch(api)[0] == 401
        assert fetch(api, "wrong-token-of-the-same-len")[0] == 401
        assert fetch(dashboard.url)[0] == 401  # the page too
        status, document = fetch(api, "s3cret-token-of-some-length")
        assert status == 200 and document["runs"] == []
        assert fetch(dashboard.url + "?token=s3cret-token-of-some-length")[0] == 200
    finally:
        dashboard.stop()


def test_babysit_serve_shows_every_session_running_on_the_machine(tmp_path: Path,
                                                                  runtime: Path):
    one, two = Session(tmp_path, "one", runtime), Session(tmp_path, "two", runtime)
    port = free_port()
    serve = subprocess.Popen([sys.executable, "-m", "babysit", "serve", "--port", str(port)],
                             env={**os.environ, "BABYSIT_RUNTIME_DIR": str(runtime)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/api/metrics"
        document = wait_for(lambda: (d := fetch(url, one.token)[1]) and len(d["runs"]) == 2
                            and d)
        jsonschema.validate(document, api_schema())
        assert sorted(Path(r["target"]).name for r in document["runs"]) == ["one.log",
                                                                           "two.log"]
        one.stop()  # a session that ended is cleaned up
        left = wait_for(lambda: (d := fetch(url, two.token)[1]) and len(d["runs"]) == 1
                        and d)
        assert Path(left["runs"][0]["target"]).name == "two.log"
    finally:
        serve.terminate()
        serve.wait(timeout=10)
        one.stop()
        two.stop()


def test_a_non_loopback_serve_without_a_token_refuses_to_start(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "babysit", "serve", "--host", "0.0.0.0",
                           "--port", str(free_port())], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2 and "give a token" in done.stderr


CHROMEDRIVER = shutil.which("chromedriver")


@pytest.mark.service  # a real browser, slow: `-m service` (.ci/run's second stage)
@pytest.mark.skipif(CHROMEDRIVER is None, reason="chromium-driver is not installed "
                                                 "(.ci/run installs it)")
def test_a_real_browser_draws_the_curve_and_marks_the_nan(session: Session, tmp_path: Path):
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed "
                                    "(pip install -e '.[test-services]')")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900"):
        options.add_argument(flag)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        options.binary_location = chromium
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        wait_for(lambda: (d := session.metrics())["runs"] and d["runs"][0]["step"] is not None)
        browser.get(f"{session.url}?token={session.token}")
        points = wait_for(lambda: browser.execute_script(
            "const c = Object.entries(window.babysitCharts || {})"
            ".find(([k]) => k.endsWith(':loss')); return c ? c[1].points : 0"))
        assert points >= 40
        assert browser.find_elements("css selector", ".chart canvas")
        session.append("Step 41/400 | loss=nan | lr=3e-4\n")
        markers = wait_for(lambda: browser.execute_script(
            "const n = document.querySelector('[data-panel=\"loss\"]');"
            "return n ? n.dataset.markers : ''"))
        assert markers == "41"
        assert "nan-inf at step 41" in browser.find_element("css selector", ".anomalies").text
        shot = tmp_path / "dashboard.png"
        browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        keep = os.environ.get("BABYSIT_KEEP_SCREENSHOT")
        if keep:
            shutil.copyfile(shot, keep)
    finally:
        browser.quit()

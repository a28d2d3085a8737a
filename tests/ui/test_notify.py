"""Notifications through the real apprise, delivered to a loopback HTTP receiver."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from babysit.redact import scrub
from babysit.ui.notify import safe_url
from tests.forked_cli import python_m_babysit

SECRET = "hf_" + "A1b2C3d4E5f6G7h8I9j0"


class Receiver:
    def __init__(self) -> None:
        self.bodies: list[tuple[str, str]] = []  # (path, body)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                outer.bodies.append((self.path, self.rfile.read(length).decode()))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def babysit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return python_m_babysit(*args, cwd=cwd, timeout=120)


def nan_log(tmp_path: Path) -> None:
    lines = [f"step {s}/100 | loss={2.5 - s * 0.01:.3f}" for s in range(1, 20)]
    lines.insert(-3, f"Logging in with HF_TOKEN={SECRET} and WANDB_API_KEY=0123456789abcdef")
    lines.append("step 20/100 | loss=nan")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")


def test_anomaly_and_verdict_arrive_as_json_with_evidence_and_no_secrets(tmp_path: Path,
                                                                         receiver: Receiver):
    nan_log(tmp_path)
    done = babysit("train.log", "--once", "--notify",
                   f"json://127.0.0.1:{receiver.port}/hook", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    messages = [json.loads(body) for _, body in receiver.bodies]
    assert len(messages) == 2  # the NaN, then the verdict
    anomaly, final = messages
    assert "nan-inf at step 20" in anomaly["title"]
    assert "Step: 20/100" in anomaly["message"] and "Last log lines:" in anomaly["message"]
    assert final["title"].startswith("babysit: NO-GO for train.log")
    for message in messages:
        text = json.dumps(message)
        assert SECRET not in text and "0123456789abcdef" not in text
        assert "REDACTED" in message["message"]


def test_form_notifications_and_severity_threshold(tmp_path: Path, receiver: Receiver):
    (tmp_path / "train.log").write_text(
        "".join(f"step {s}/100 | loss={2.0 - 0.005 * s:.3f}\n" for s in range(1, 30))
        + "step 30/100 | loss=9.0\n"
        + "".join(f"step {s}/100 | loss={2.0 - 0.005 * s:.3f}\n" for s in range(31, 40)))
    url = f"form://127.0.0.1:{receiver.port}/form"
    babysit("train.log", "--once", "--notify", url, "--notify-severity", "blocker", cwd=tmp_path)
    assert len(receiver.bodies) == 1  # only the verdict: a spike is below "blocker"
    form = parse_qs(receiver.bodies[0][1])
    assert form["title"][0].startswith("babysit: CONDITIONAL")
    receiver.bodies.clear()
    babysit("train.log", "--once", "--notify", url, "--notify-severity", "high", cwd=tmp_path)
    assert len(receiver.bodies) == 2


def test_the_same_anomaly_is_not_repeated_within_the_hour():
    from babysit.core.reports import NullObserver
    from babysit.model import Anomaly, AnomalyType, Severity
    from babysit.ui.notify import NotifyingObserver, NotifyPolicy

    sent: list[str] = []
    observer = NotifyingObserver(NullObserver(), NotifyPolicy(("json://x",)),
                                 send=lambda urls, title, body, kind: sent.append(title) or True,
                                 now=lambda: 1000.0)

    class Report:
        target, step, target_steps, metrics = "train.log", 5, None, {}

    for step in (5, 9):
        observer.anomaly(Anomaly(AnomalyType.LOSS_SPIKE, Severity.HIGH, step, "spike"),
                         Report())  # type: ignore[arg-type]
    observer.close()  # notifications go out on their own thread
    assert len(sent) == 1


def test_a_failing_notifier_is_reported_and_the_watch_goes_on(tmp_path: Path):
    nan_log(tmp_path)
    done = babysit("train.log", "--once", "--notify", "json://127.0.0.1:9/hook?token=s3cr3t",
                   cwd=tmp_path)
    assert done.returncode == 1  # the verdict is unchanged
    assert "notification to json://… failed" in done.stdout
    assert "s3cr3t" not in done.stdout + done.stderr
    assert (tmp_path / "babysit-training.json").exists()


def test_scrub_and_safe_url():
    assert scrub("token=abc123 and hf_abcdefghijkl") == "token=REDACTED and REDACTED"
    # The host part is often the token itself (pbul://TOKEN): only the scheme is shown.
    assert safe_url("slack://T000/B000/XXXX") == "slack://…"
    assert safe_url("pbul://o.TOKEN123") == "pbul://…"
    assert safe_url("mailto://user:pass@example.org") == "mailto://…"

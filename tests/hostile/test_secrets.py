"""Secrets in what babysit reads never leave it: not on the console, not in JSON lines,
not in the verdict file, not in notifications or the reviewer's packet, not in command
lines it shows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from babysit.redact import redact_argv, scrub
from tests.conftest import artifact_in, installed
from tests.test_cli import babysit

SECRETS = {
    "aws": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
    "password": "hunter2-not-for-logs",
    "hf": "hf_Q2w3E4r5T6y7U8i9O0pA",
    "bearer": "eyJhbGciOi.JIUzI1NiIsInR5cCI6.IkpXVCJ9abcdef",
    "url": "s3cr3tPassw0rd",
}
LEAKY = [
    "step 1/50 | loss=2.50",
    f"export AWS_SECRET_ACCESS_KEY={SECRETS['aws']}",
    f"connecting with password={SECRETS['password']}",
    "step 2/50 | loss=2.40",
    "Traceback (most recent call last):",
    '  File "train.py", line 3, in <module>',
    f"RuntimeError: upload failed: Authorization: Bearer {SECRETS['bearer']} token "
    f"{SECRETS['hf']} https://alice:{SECRETS['url']}@store.example.org/x",
]


def leaked(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text]


def test_log_secrets_stay_out_of_console_json_and_artifact(tmp_path: Path):
    (tmp_path / "train.log").write_text("\n".join(LEAKY) + "\n")
    human = babysit("train.log", "--once", "--out-dir", "h", cwd=tmp_path)
    agent = babysit("train.log", "--once", "--json", "--out-dir", "j", cwd=tmp_path)
    assert human.returncode == agent.returncode == 1
    for done in (human, agent):
        assert leaked(done.stdout + done.stderr) == []
    for out in ("h", "j"):
        text = (tmp_path / out / "babysit-training.json").read_text()
        assert leaked(text) == [] and "REDACTED" in text
        data = artifact_in(tmp_path / out)
        assert data["decision"] == "NO-GO"  # still judged: the crash is there


def test_secrets_stay_out_when_the_watch_is_interrupted(tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("\n".join(LEAKY[:4]) + "\n")
    proc = subprocess.Popen([sys.executable, "-m", "babysit", "train.log", "--interval", "0.2"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    # Signalled once the watch has begun (its first line): a fixed sleep can land before
    # the session on a busy machine, where no verdict is written at all.
    seen = ""
    while "Watching" not in (line := proc.stdout.readline()):
        assert line, "babysit ended before it began watching"
        seen += line
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert leaked(seen + line + out + err
                  + (tmp_path / "babysit-training.json").read_text()) == []


def test_the_reviewer_gets_a_scrubbed_packet(tmp_path: Path):
    lines = [f"step {s}/60 | loss={2.0 - 0.005 * s:.3f}" for s in range(1, 30)]
    lines += [f"key={SECRETS['password']} step 30/60 | loss=40.0"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    reviewer = tmp_path / "reviewer.py"
    reviewer.write_text("import sys, pathlib\npathlib.Path('packet.json').write_text("
                        "sys.stdin.read())\nprint('CONTINUE')\n")
    babysit("train.log", "--once", "--judge", f"{sys.executable} {reviewer}", cwd=tmp_path)
    packet = (tmp_path / "packet.json").read_text()
    assert "loss-spike" in packet and leaked(packet) == []


@pytest.mark.parametrize("argv, hidden", [
    (["python", "t.py", "--passphrase", "p1"], "p1"),
    (["python", "t.py", "--pwd", "p2"], "p2"),
    (["python", "t.py", "--bearer", "p3"], "p3"),
    (["curl", "-k", "p4"], "p4"),
    (["python", "t.py", "sk-abcdefghijklmnopqrstuvwx"], "sk-abcdefghijklmnopqrstuvwx"),
    (["python", "t.py", "hf_abcdefghijklmnopqrs"], "hf_abcdefghijklmnopqrs"),
    (["python", "t.py", "ghp_abcdefghijklmnopqrstuvwxyz0123"],
     "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    (["python", "t.py", "xoxb-1234567890-abcdefghij"], "xoxb-1234567890-abcdefghij"),
    (["python", "t.py", "AKIAIOSFODNN7EXAMPLE"], "AKIAIOSFODNN7EXAMPLE"),
    (["python", "t.py", "--db", "postgres://u:pw0rd@h/db"], "pw0rd"),
    (["python", "t.py", "--hf-token=abc", "--lr", "1e-4"], "abc"),
])
def test_command_lines_are_redacted(argv: list[str], hidden: str):
    shown = " ".join(redact_argv(argv))
    assert hidden not in shown and "REDACTED" in shown
    assert "1e-4" in " ".join(redact_argv(["--lr", "1e-4"]))


def test_ordinary_metrics_are_not_taken_for_secrets():
    text = "tokens_per_second=1234 num_tokens: 500 max_grad_norm=1.0 key_metrics=3"
    assert scrub(text) == text


def test_a_restart_command_with_a_token_is_redacted_in_the_verdict(tmp_path: Path):
    from tests.core.test_fixer import start, watch

    proc = start(tmp_path, "--mode", "transient", "--at", "5", "--steps", "12", "--state",
                 str(tmp_path / "state"), "--fail-times", "1")
    trainer = Path(__file__).parents[1] / "fake_trainer.py"
    restart = [sys.executable, str(trainer), "--mode", "transient", "--at", "5", "--steps",
               "12", "--state", str(tmp_path / "state"), "--fail-times", "1",
               "--api-token", "tok-9f8e7d6c5b4a"]
    result, data = watch(tmp_path, proc, restart_cmd=restart)
    text = json.dumps(data)
    assert "restart-crashed-process" in text and "tok-9f8e7d6c5b4a" not in text


def test_mlflow_credentials_in_the_tracking_uri_are_never_shown(tmp_path: Path):
    if not installed("mlflow"):
        # (without the client babysit stops at the missing extra, before any address)
        pytest.skip("mlflow is not installed (pip install -e '.[test-services]')")
    done = babysit("--mlflow", "abc123", "--tracking-uri", "http://alice:pw-8c7b@127.0.0.1:9",
                   "--once", cwd=tmp_path)
    assert done.returncode == 4
    text = done.stdout + done.stderr + (tmp_path / "babysit-training.json").read_text()
    assert "pw-8c7b" not in text and "alice:REDACTED@" in text


def test_notification_urls_are_never_printed_beyond_their_scheme(tmp_path: Path):
    (tmp_path / "train.log").write_text("step 1/10 | loss=nan\n")
    done = babysit("train.log", "--once", "--notify", "pbul://o.Zx9SecretToken1234",
                   "--notify", "tgram://123456:AAbbCCsecret/42", cwd=tmp_path)
    assert done.returncode == 1
    text = done.stdout + done.stderr
    assert "Zx9SecretToken1234" not in text and "AAbbCCsecret" not in text


def test_check_process_script_redacts_the_command_line(tmp_path: Path):
    script = Path(__file__).parents[2] / "scripts" / "check-process.sh"
    marker = f"babysit-secret-test-{os.getpid()}"
    proc = subprocess.Popen(["bash", "-c", f'exec -a "{marker} --hf-token hf_abcdefghijklmno '
                                           f'API_KEY=zzz123" sleep 30'])
    try:
        time.sleep(0.3)
        done = subprocess.run(["bash", str(script), "--name", marker], capture_output=True,
                              text=True, timeout=30)
        info = json.loads(done.stdout)["info"]
        assert info and "hf_abcdefghijklmno" not in done.stdout and "zzz123" not in done.stdout
    finally:
        proc.kill()

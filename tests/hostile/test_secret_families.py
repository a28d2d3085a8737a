"""The secret families of the second hostile pass: each variant planted in a training
log, and none of it on the console, in `--json`, in the verdict file or in the scrubbed
text; ordinary text around them is kept."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from babysit.redact import clip, redact_argv, scrub
from tests.test_cli import babysit

AZURE_KEY = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFla+/0123456789abcd=="
PEM_BODY = "MIIEowIBAAKCAQEAuXh6pX3q0Zk9mT1yQ7n2Lr8sVbY4cD5eF6gH7iJ8kL9mN0oP1q"
WANDB_KEY = "3f9e1c2b4a5d6e7f8091a2b3c4d5e6f708192a3b"

# (what is planted, the secret part that must not leave)
VARIANTS = [
    (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};"
     "EndpointSuffix=core.windows.net", AZURE_KEY[:30]),
    ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
     "SharedAccessKey=q1W2e3R4t5Y6u7I8o9P0aSdFgHjKlZxCvBnM+/q1W2e=", "q1W2e3R4t5Y6u7I8o9P0"),
    (f"key: -----BEGIN RSA PRIVATE KEY-----\\n{PEM_BODY}\\n-----END RSA PRIVATE KEY-----",
     PEM_BODY[:24]),
    (f"-----BEGIN PRIVATE KEY----- {PEM_BODY} -----END PRIVATE KEY-----", PEM_BODY[:24]),
    ("Authorization: bearer abcDEF123456ghiJKL", "abcDEF123456ghiJKL"),
    ("authorization: BEARER abcDEF123456ghiJKL", "abcDEF123456ghiJKL"),
    ("sending header Bearer x9Y8z7W6v5U4t3S2", "x9Y8z7W6v5U4t3S2"),
    ("Authorization: Token 9a8b7c6d5e4f3a2b1c0d", "9a8b7c6d5e4f3a2b1c0d"),
    ("aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("AWS_SECRET_ACCESS_KEY   wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("pushing to https://alice:p@ss/w0rd@store.example.org/bucket", "ss/w0rd"),
    ("mirror https://bob:s3cr3t@xyz9@host.example.org", "xyz9"),
    ('config: "{\\"api_key\\": \\"k-77aa88bb99cc\\", \\"lr\\": 0.1}"', "k-77aa88bb99cc"),
    ('{"password": "correct horse battery staple"}', "horse battery"),
    (f"python train.py --wandb_key {WANDB_KEY} --lr 1e-4", WANDB_KEY),
    (f"wandb_key={WANDB_KEY}", WANDB_KEY),
    # The third hostile pass: W&B's key under a bare `key` or after `wandb login`; a
    # secret word glued into one name; Redis's URL with no user; a token after `_`; a
    # quoted password holding the other quote.
    (f"wandb.login(key='{WANDB_KEY}')", WANDB_KEY),
    (f"+ wandb login {WANDB_KEY}", WANDB_KEY),
    (f"WANDBKEY={WANDB_KEY}", WANDB_KEY),
    ("+ export PGPASSWORD=Secr3tValue99", "Secr3tValue99"),
    ("DB_PASS=Secr3tValue99 SMTP_PASS=Secr3tValue98", "Secr3tValue9"),
    ("HFTOKEN=abcdef123456 GITHUBTOKEN=ghijkl789012", "123456"),
    ("broker redis://:Secr3tValue99@redis:6379/0", "Secr3tValue99"),
    ("resumed run_hf_AbCdEfGh12345678 from the hub", "AbCdEfGh12345678"),
    ('ValueError: bad password: "abc\'def123456"', "def123456"),
]
# Names and values like these are no secret: kept as written.
PLAIN = ["Pass=49 Batch=100 AvgCost=0.51", "key=val_loss", "monitor key: val_acc",
         "num_tokens=1024 max_tokens: 2048", "sort_key=abc123def4", "login=alice",
         f"at commit {WANDB_KEY}"]


@pytest.mark.parametrize("line, secret", VARIANTS)
def test_each_variant_is_scrubbed(line: str, secret: str):
    shown = scrub(line)
    assert secret not in shown and "REDACTED" in shown, shown
    # Text is scrubbed again on some ways out (a notification after the observer): a
    # second pass changes nothing, and never eats what followed a secret.
    assert scrub(shown + " step 5/10") == shown + " step 5/10"


@pytest.mark.parametrize("line", PLAIN)
def test_ordinary_names_and_values_are_kept(line: str):
    assert scrub(line) == line


def test_the_scrubber_is_linear_on_a_long_run_of_name_characters():
    """Tried at every position inside `x.y-z_x.y-z_…`, a name ran to the run's end each
    time: 48,000 such characters took 29 s of CPU (a 64 KiB log line 51 s). Linear, they
    take milliseconds; the bound is CPU time, two orders of magnitude above that."""
    import time

    text = "x.y-z_" * 8000 + " password=abc123"
    start = time.process_time()
    shown = scrub(text)
    assert time.process_time() - start < 2.0
    assert shown.endswith("password=REDACTED")


def test_a_pem_block_over_several_lines_is_scrubbed_line_by_line_and_whole():
    block = ["-----BEGIN OPENSSH PRIVATE KEY-----", PEM_BODY, PEM_BODY[::-1],
             "-----END OPENSSH PRIVATE KEY-----"]
    assert all(PEM_BODY[:20] not in scrub(line) for line in block)
    whole = scrub("\n".join([*block, "step 5/10 | loss=2.0"]))
    assert PEM_BODY[:20] not in whole and whole.count("REDACTED") == 1  # one block, one mask
    assert whole.endswith("step 5/10 | loss=2.0")  # what follows the block is kept


@pytest.mark.parametrize("text", [
    "tokens_per_second=1234 num_tokens: 500 max_grad_norm=1.0 key_metrics=3",
    "password incorrect for user alice",
    "loading /home/Alice/Projects/MyModel/Checkpoints/Step1000/weights/model",
    "commit 3f9e1c2b4a5d6e7f8091a2b3c4d5e6f708192a3b",
    "sha256 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08",
    "Bearer authentication is enabled",
    "https://host.example.org:8443/path step 3/10 loss=2.5",
])
def test_ordinary_text_is_kept(text: str):
    assert scrub(text) == text


def test_a_secret_straddling_a_cut_is_scrubbed_before_the_cut():
    line = "x" * 280 + " https://alice:s3cr3tpassword@host.example.org/x"
    assert "s3cr" not in clip(line, 300)
    assert "s3cr" in line[:300] and "s3cr" in scrub(line[:300])  # the old order leaked


def test_the_wandb_key_flag_is_masked_in_a_command_line():
    shown = " ".join(redact_argv(["python", "train.py", "--wandb_key", WANDB_KEY,
                                  "--sort_key", "loss"]))
    assert WANDB_KEY not in shown and "--sort_key loss" in shown


def test_no_variant_reaches_console_json_or_artifact(tmp_path: Path):
    lines = ["step 1/50 | loss=2.50"] + [line for line, _ in VARIANTS] + [
        "step 2/50 | loss=2.40", "Traceback (most recent call last):",
        "RuntimeError: upload failed " + VARIANTS[0][0] + " " + VARIANTS[10][0]]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    human = babysit("train.log", "--once", "--out-dir", "h", cwd=tmp_path)
    agent = babysit("train.log", "--once", "--json", "--out-dir", "j", cwd=tmp_path)
    assert human.returncode == agent.returncode == 1
    for text in (human.stdout + human.stderr, agent.stdout + agent.stderr,
                 (tmp_path / "h" / "babysit-training.json").read_text(),
                 (tmp_path / "j" / "babysit-training.json").read_text()):
        assert [secret for _, secret in VARIANTS if secret in text] == []


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_artifact_follows_the_umask_and_is_private_when_it_holds_a_secret(
        tmp_path: Path):
    (tmp_path / "clean.log").write_text("step 1/10 | loss=2.0\nstep 2/10 | loss=nan\n")
    (tmp_path / "leaky.log").write_text("step 1/10 | loss=2.0\n"
                                        "Traceback (most recent call last):\n"
                                        "RuntimeError: login failed: password=hunter2-xyz\n")
    old = os.umask(0o077)
    try:
        babysit("clean.log", "--once", "--out-dir", "private", cwd=tmp_path)
    finally:
        os.umask(old)
    os.umask(0o022)
    try:
        babysit("clean.log", "--once", "--out-dir", "shared", cwd=tmp_path)
        babysit("leaky.log", "--once", "--out-dir", "leaky", cwd=tmp_path)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "private" / "babysit-training.json") == 0o600
    assert _mode(tmp_path / "shared" / "babysit-training.json") == 0o644
    leaky = tmp_path / "leaky" / "babysit-training.json"
    assert "REDACTED" in leaky.read_text() and _mode(leaky) == 0o600
    assert json.loads(leaky.read_text())["decision"] == "NO-GO"


def test_the_command_line_of_a_watched_process_is_scrubbed(tmp_path: Path):
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                              "--wandb_key", WANDB_KEY, "--db=https://u:p@ss/w0rd@h.example.org",
                              "Authorization: token abc123def456ghi"])
    try:
        done = babysit("--pid", str(child.pid), "--once", cwd=tmp_path)
    finally:
        child.kill()
        child.wait()
    text = done.stdout + done.stderr + (tmp_path / "babysit-training.json").read_text()
    assert f"PID {child.pid}" in text
    assert WANDB_KEY not in text and "w0rd" not in text and "abc123def456ghi" not in text


def test_a_secret_split_over_arguments_is_scrubbed_in_the_shown_command():
    from babysit.redact import redacted_command

    shown = redacted_command(["curl", "-H", "Authorization:", "Bearer", "xyz123456abc",
                              "--lr", "3e-4"])
    assert "xyz123456abc" not in shown and shown.endswith("--lr 3e-4")


def test_two_metrics_named_by_tokens_are_both_kept():
    from babysit.redact import scrub_value

    shown = scrub_value({"ghp_abcdefghijklmnopqrstuvwx": 2.0, "hf_AAAAAAAAAAAAAAAA": 3.0,
                         "loss": 1.0})
    assert sorted(shown.values()) == [1.0, 2.0, 3.0]
    assert not any("ghp_" in key or "hf_" in key for key in shown)

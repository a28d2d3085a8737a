"""--judge: a reviewer command consulted on ambiguous signals only."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from babysit.core.reviewer import Answer, Reviewer, parse_answer
from tests.conftest import artifact_in

SPIKE_LOG = "".join(f"step {s}/500 | loss={2.0 - 0.005 * s:.3f}\n" for s in range(1, 30)) + \
    "step 30/500 | loss=9.0\n" + \
    "".join(f"step {s}/500 | loss={2.0 - 0.005 * s:.3f}\n" for s in range(31, 35))


def reviewer_script(tmp_path: Path, body: str) -> Path:
    """A reviewer: a small Python script; it saves the packet it was given."""
    script = tmp_path / "reviewer.py"
    script.write_text("import json, sys, time\n"
                      f"packet = json.load(sys.stdin)\n"
                      f"open({str(tmp_path / 'packet.json')!r}, 'w').write(json.dumps(packet))\n"
                      + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def watch(tmp_path: Path, script: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.log").write_text(SPIKE_LOG)
    return subprocess.run([sys.executable, "-m", "babysit", "train.log", "--once",
                           "--judge", f"{sys.executable} {script}", "--judge-timeout", "3",
                           *extra], cwd=tmp_path, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("text, answer", [("STOP", Answer.STOP), ("continue\n", Answer.CONTINUE),
                                          ("I think: WAIT.", Answer.WAIT),
                                          ("STOP or CONTINUE", None), ("yes", None), ("", None)])
def test_answers_are_exactly_one_word(text: str, answer: Answer | None):
    assert parse_answer(text) is answer


@pytest.mark.parametrize("word", ["CONTINUE", "WAIT"])
def test_reviewer_is_asked_about_a_spike_and_its_answer_recorded(tmp_path: Path, word: str):
    done = watch(tmp_path, reviewer_script(tmp_path, f"print({word!r})\n"))
    packet = json.loads((tmp_path / "packet.json").read_text())
    assert packet["concern"].startswith("loss-spike") and packet["step"] == 34
    assert packet["last_losses"][-1] == 1.83  # the step before the review
    assert f"reviewer says {word}" in done.stdout
    data = artifact_in(tmp_path)
    assert {"kind": "ask-reviewer", "status": "applied"}.items() <= data["actions"][0].items()
    assert done.returncode == 3


def test_stop_becomes_a_proposal_waiting_for_approval(tmp_path: Path):
    done = watch(tmp_path, reviewer_script(tmp_path, "print('STOP')\n"))
    data = artifact_in(tmp_path)
    assert [(a["kind"], a["status"]) for a in data["actions"]] == [
        ("ask-reviewer", "applied"), ("cancel-run", "needs-approval")]
    assert "waiting for your approval" in done.stdout
    assert done.returncode == 3


@pytest.mark.parametrize("body, why", [
    ("time.sleep(30)\n", "no answer within 3s"),
    ("print('the loss looks interesting')\n", "not exactly one of"),
    ("sys.exit(2)\n", "exited with code 2"),
])
def test_a_failing_reviewer_is_reported_and_ignored(tmp_path: Path, body: str, why: str):
    done = watch(tmp_path, reviewer_script(tmp_path, body))
    assert "reviewer ignored" in done.stdout and why in done.stdout
    data = artifact_in(tmp_path)
    assert data["actions"][0]["status"] == "failed"
    assert data["decision"] == "CONDITIONAL"


def test_clear_problems_never_go_to_the_reviewer(tmp_path: Path):
    script = reviewer_script(tmp_path, "print('CONTINUE')\n")
    (tmp_path / "train.log").write_text("step 1/10 | loss=2.0\nstep 2/10 | loss=nan\n")
    subprocess.run([sys.executable, "-m", "babysit", "train.log", "--once", "--judge",
                    f"{sys.executable} {script}"], cwd=tmp_path, capture_output=True, timeout=60)
    assert not (tmp_path / "packet.json").exists()
    assert artifact_in(tmp_path)["actions"] == []


def test_reviewer_runs_without_a_shell(tmp_path: Path):
    reviewer = Reviewer(["/bin/echo", "CONTINUE; touch PWNED"])
    assert reviewer.review({"x": 1}).answer is Answer.CONTINUE
    assert not (tmp_path / "PWNED").exists()

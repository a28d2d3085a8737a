"""Terminal control from outside never reaches the terminal, the JSON lines or the
verdict file: escape sequences (OSC 52 clipboard writes, title sets, clear-screen, their
8-bit C1 forms), bare controls and bidirectional overrides in log lines, metric names
and file names are removed or shown escaped, and a newline in a name forges no line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from babysit.sanitise import outbound, sanitise
from tests.test_cli import babysit

# What a terminal would act on: ESC, the C1 range (8-bit CSI 0x9B, OSC 0x9D, ...), BEL,
# and the bidi embeddings, overrides and isolates.
_ACTIVE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE = ("\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: write the clipboard
           "\x1b]0;pwned\x1b\\"  # OSC 0: set the title, ended by ST
           "\x9b2J"  # 8-bit CSI: clear the screen
           "\x9d0;title8\x9c"  # 8-bit OSC
           "\x1b[31mred\x1b[0m"
           "\u202egnp.exe")  # right-to-left override


def active(text: str) -> list[str]:
    return sorted({repr(c) for c in _ACTIVE.findall(text)})


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings_in(k), *strings_in(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


@pytest.mark.parametrize("raw, shown", [
    ("plain text", "plain text"),
    ("\x1b]52;c;ZXZpbA==\x07after", "after"),
    ("\x9b2Jafter", "after"),
    ("\x9d0;t\x9cafter", "after"),
    ("a\x1b[2Jb", "ab"),
    ("t.log\nDecision: GO", "t.log\\nDecision: GO"),
    ("bell\x07 del\x7f nel\x85", "bell\\x07 del\\x7f nel\\x85"),
    ("\u202egnp.exe", "\\u202egnp.exe"),
    ("tab\there", "tab here"),
    ("unterminated \x1b]52;c;ZXZpbA==", "unterminated "),
])
def test_sanitise(raw: str, shown: str):
    assert sanitise(raw) == shown


def test_a_secret_split_by_an_escape_is_scrubbed_whole():
    assert "hf_Q2w3E4r5T6y7" not in outbound("token hf_Q2w3E4r5\x1b[0mT6y7U8i9O0pA")


def test_escapes_in_log_lines_and_metric_names_reach_no_way_out(tmp_path: Path):
    lines = [
        json.dumps({"step": 1, "loss": 2.0, f"acc{HOSTILE}": 0.5, "total_steps": 50}),
        json.dumps({"step": 2, "loss": 1.9, f"acc{HOSTILE}": 0.6, "total_steps": 50}),
        "Traceback (most recent call last):",
        f"RuntimeError: boom {HOSTILE}",
    ]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    human = babysit("train.log", "--once", "--out-dir", "h", cwd=tmp_path)
    agent = babysit("train.log", "--once", "--json", "--out-dir", "j", cwd=tmp_path)
    assert human.returncode == agent.returncode == 1
    assert "RuntimeError: boom" in human.stdout
    for done in (human, agent):
        assert active(done.stdout + done.stderr) == []
    for line in agent.stdout.splitlines():
        assert active("".join(strings_in(json.loads(line)))) == []
    for out in ("h", "j"):
        raw = (tmp_path / out / "babysit-training.json").read_text(encoding="utf-8")
        data = json.loads(raw)
        assert active(raw) == [] and active("".join(strings_in(data))) == []
        assert data["decision"] == "NO-GO"


def test_a_file_name_with_a_newline_forges_no_line(tmp_path: Path):
    name = "t.log\nDecision: GO\n\x1b[2J"
    (tmp_path / name).write_text("step 1/10 | loss=2.0\nstep 2/10 | loss=nan\n")
    done = babysit(name, "--once", cwd=tmp_path)
    assert done.returncode == 1
    shown = done.stdout + done.stderr
    assert "Decision: NO-GO" in shown
    assert not any(line.strip().startswith("Decision: GO") for line in shown.splitlines())
    assert "t.log\\nDecision: GO" in shown and active(shown) == []
    data = json.loads((tmp_path / "babysit-training.json").read_text())
    assert "\n" not in data["target"] and data["decision"] == "NO-GO"


def test_an_out_dir_with_escapes_is_printed_inert(tmp_path: Path):
    (tmp_path / "t.log").write_text("step 1/10 | loss=2.0\nstep 2/10 | loss=1.9\n")
    done = babysit("t.log", "--once", "--out-dir", "od\x1b]0;OWNED\x07\x1b[2J", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    shown = done.stdout + done.stderr
    assert "Verdict written to od" in shown and active(shown) == []


def test_a_missing_file_name_with_a_newline_forges_no_line(tmp_path: Path):
    done = babysit("gone.log\nDecision: GO\x1b]0;pwned\x07", "--once", cwd=tmp_path)
    assert done.returncode in (2, 4)
    shown = done.stdout + done.stderr
    assert not any(line.strip().startswith("Decision: GO") for line in shown.splitlines())
    assert active(shown) == []


def test_a_usage_error_quoting_a_value_with_a_newline_forges_no_line(tmp_path: Path):
    (tmp_path / "x.log").write_text("step 1/10 | loss=2.0\n")
    done = babysit("x.log", "--once", "--out-dir", "/proc/none\nDecision: GO\x1b]0;t\x07",
                   cwd=tmp_path)
    assert done.returncode == 2
    shown = done.stdout + done.stderr
    assert not any(line.strip("│ ").startswith("Decision: GO") for line in shown.splitlines())
    assert active(shown) == []


def test_trace_event_names_reach_neither_the_terminal_nor_the_json(tmp_path: Path):
    from tests.efficiency.test_trace import kernel, step, write_trace

    evil = f"gemm{HOSTILE} --hf-token hf_Q2w3E4r5T6y7U8i9O0pA"
    trace = write_trace(tmp_path / "t.json", [step(0, 100), kernel(10, 50, name=evil),
                                             step(100, 100), kernel(110, 50, name=evil)])
    text = babysit("trace", str(trace), cwd=tmp_path)
    as_json = babysit("trace", str(trace), "--json", "--output", "out.json", cwd=tmp_path)
    assert text.returncode == as_json.returncode == 0, text.stderr
    assert "gemm" in text.stdout
    written = (tmp_path / "out.json").read_text()
    for shown in (text.stdout + text.stderr, as_json.stdout, written):
        assert "hf_Q2w3E4r5T6y7U8i9O0pA" not in shown and active(shown) == []
    for data in (json.loads(as_json.stdout), json.loads(written)):
        assert active("".join(strings_in(data))) == []

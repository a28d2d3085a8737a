"""The words that start the running babysit again (for next commands and crontab lines)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from babysit.invocation import running_babysit


def test_python_dash_m_is_the_interpreter_by_its_full_path() -> None:
    argv = ["/opt/src/babysit/babysit/__main__.py", "train.log"]
    assert running_babysit(argv, "/opt/venv/bin/python3") == \
        ["/opt/venv/bin/python3", "-m", "babysit"]


def test_a_console_script_on_no_path_is_named_by_its_full_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "bin" / "babysit"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    assert running_babysit([os.path.join("bin", "babysit")]) == [str(program)]
    monkeypatch.setenv("PATH", str(program.parent))
    # On PATH, it reads as people type it; cron still gets the full path.
    assert running_babysit([str(program)]) == ["babysit"]
    assert running_babysit([str(program)], absolute=True) == [str(program)]

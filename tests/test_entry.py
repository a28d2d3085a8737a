"""The one way out (babysit/entry.py): whatever stops the command, the status and the
words a script sees come from one place."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from babysit import entry, stopping
from babysit.exit_codes import HELP, NO_VERDICT, ExitCode


def _stay_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # entry leaves at once (os._exit) when threads it did not start are still alive, as
    # a test runner's own are: in a test, that would end the test process itself.
    monkeypatch.setattr(entry, "_leave_stragglers", lambda code: None)


def test_an_interruption_before_any_watch_says_no_verdict_was_written_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    import babysit.cli

    def interrupted(argv: list[str] | None = None) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(babysit.cli, "main", interrupted)
    monkeypatch.setattr(stopping, "_SESSION_STARTED", [False])
    _stay_in_process(monkeypatch)
    assert entry.main(["train.log"]) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err.count(NO_VERDICT) == 1


def test_an_interruption_while_a_class_is_built_is_an_interruption_too(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    # Python 3.11 wraps what `__set_name__` raises (a signal landing while an import
    # builds a dataclass) in a RuntimeError: seen in CI as a traceback after SIGINT.
    import babysit.cli

    class Landing:
        def __set_name__(self, owner: type, name: str) -> None:
            raise KeyboardInterrupt

    def importing(argv: list[str] | None = None) -> int:
        type("Built", (), {"field": Landing()})
        return 0

    monkeypatch.setattr(babysit.cli, "main", importing)
    monkeypatch.setattr(stopping, "_SESSION_STARTED", [False])
    _stay_in_process(monkeypatch)
    assert entry.main(["train.log"]) == ExitCode.INTERRUPTED
    assert capsys.readouterr().err.count(NO_VERDICT) == 1


def test_a_runtime_error_of_its_own_is_not_taken_for_an_interruption(
        monkeypatch: pytest.MonkeyPatch):
    import babysit.cli

    def broken(argv: list[str] | None = None) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(babysit.cli, "main", broken)
    _stay_in_process(monkeypatch)
    with pytest.raises(RuntimeError, match="a bug"):
        entry.main(["train.log"])


def test_an_interruption_after_the_watch_began_leaves_the_talking_to_the_verdict(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    import babysit.cli

    monkeypatch.setattr(babysit.cli, "main", lambda argv=None: int(ExitCode.INTERRUPTED))
    monkeypatch.setattr(stopping, "_SESSION_STARTED", [True])
    _stay_in_process(monkeypatch)
    assert entry.main(["train.log"]) == ExitCode.INTERRUPTED
    assert NO_VERDICT not in capsys.readouterr().err


def test_the_help_lists_each_exit_code_once_in_order():
    listed = [int(code) for code in re.findall(r"(\d+) [A-Za-z]", HELP)]
    assert listed == [int(code) for code in ExitCode]


def test_a_usage_error_is_status_2_from_the_real_command(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "babysit", "train.log", "--total-steps", "0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.USAGE
    assert "--total-steps" in done.stderr and "Traceback" not in done.stderr


def test_a_stop_asked_before_the_first_watch_began_is_that_watchs(
        monkeypatch: pytest.MonkeyPatch):
    # A SIGTERM whose KeyboardInterrupt importlib's module-lock callback swallowed during
    # start-up ("Exception ignored in: <function _get_module_lock.<locals>.cb>", seen in
    # CI): the handler noted it, and the watch must still hear it — it ran on, deaf, for
    # its 45 s backoff. A stop asked of an earlier watch in the process is not the next's.
    monkeypatch.setattr(stopping, "_SESSION_STARTED", [False])
    monkeypatch.setattr(stopping, "_REQUESTED", [False])
    stopping.note("terminated (SIGTERM)")
    stopping.mark_session_started()
    assert stopping.requested() and stopping.reason() == "terminated (SIGTERM)"
    stopping.mark_session_started()  # the next watch in this process
    assert not stopping.requested()

"""An exception in a helper thread after the run said it finished is not a failed run
(issue 23, point 4); the same traceback with no completion is still a crash."""

from __future__ import annotations

from pathlib import Path

from babysit.model import EventKind, LogEvent
from babysit.parsing.thread_failures import IN_THREAD, ThreadFailures
from tests.rules.test_loss_rules import verdict_of


def _thread_traceback(name: str, error: str) -> list[str]:
    return [f"Exception in thread {name}:",
            "Traceback (most recent call last):",
            '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner',
            "    self.run()",
            '  File "/site-packages/writer/event_file_writer.py", line 202, in run',
            "    data = self._queue.get(True, 1)",
            error]


def _steps(last: int) -> list[str]:
    return [f"step {s} loss {1 / s:.4f}" for s in range(10, last + 1, 10)]


def test_a_helper_thread_failing_after_the_end_is_no_failed_run(tmp_path: Path):
    lines = [*_steps(500), "End training....",
             *_thread_traceback("Thread-1", "OSError: handle is closed")]
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_helper_thread_failing_mid_run_is_reported_but_is_not_the_process_ending(
        tmp_path: Path):
    # Python goes on when a thread dies: nothing says the run ended, but a run that
    # waits on that thread hangs, so it is reported, and the run is not GO.
    lines = [*_steps(500), *_thread_traceback("Thread-2", "ValueError: bad batch")]
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("CONDITIONAL", "RUNNING")
    [thread] = verdict["anomalies_detected"]
    assert (thread["type"], thread["severity"]) == ("crash", "high")
    assert "helper thread" in thread["description"] and "ValueError: bad batch" in \
        thread["description"]


def test_training_after_a_helper_thread_died_resolves_it(tmp_path: Path):
    lines = [*_steps(300), *_thread_traceback("Thread-2", "ValueError: bad batch"),
             *[f"step {s} loss {1 / s:.4f}" for s in range(310, 500, 10)]]
    verdict = verdict_of(tmp_path, lines)
    [thread] = verdict["anomalies_detected"]
    assert "resolved: training went on to step 310" in thread["description"]


def test_the_main_threads_exception_is_not_marked():
    threads = ThreadFailures()
    for line in ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>']:
        threads.line(line, in_traceback=line.startswith(" "))
    events = [LogEvent(EventKind.EXCEPTION, "KeyError: 'x'", "KeyError: 'x'")]
    threads.mark(events)
    assert not events[0].detail.endswith(IN_THREAD)


def test_the_bootstrap_frame_alone_marks_it():
    threads = ThreadFailures()
    threads.line('  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
                 in_traceback=True)
    events = [LogEvent(EventKind.EXCEPTION, "OSError: closed", "OSError: closed")]
    threads.mark(events)
    assert events[0].detail == "OSError: closed" + IN_THREAD

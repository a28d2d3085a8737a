"""A Python script whose stdout goes to a file buffers it by the block and flushes it as
the process exits, after stderr's traceback: the run's last prints come after the
exception that ended it. Those records do not show the run going on."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of

_INTERRUPT = ["Traceback (most recent call last):",
              '  File "/nfs/users/me/week2/mytry.py", line 184, in <module>',
              "    X_from_slf = get_tensor(slf_complete, torch.log(1 + torch.exp(C)))",
              '  File "/nfs/users/me/week2/utils.py", line 42, in outer',
              "    prod = torch.zeros((*mat.shape, *vec.shape)).to(device)",
              "KeyboardInterrupt"]


def _prints(first: int, last: int) -> list[str]:
    return [f"ite {i}, loss is {2.5 - i / 2000:.6f}" for i in range(first, last)]


def test_prints_flushed_after_an_uncaught_exception_are_its_last_output(tmp_path: Path):
    data = verdict_of(tmp_path, _prints(0, 300) + _INTERRUPT + _prints(300, 306))
    assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO")


def test_more_than_a_buffer_of_records_after_it_is_training_going_on(tmp_path: Path):
    data = verdict_of(tmp_path, _prints(0, 300) + _INTERRUPT + _prints(300, 473))
    assert data["terminal_state"] == "RUNNING"


def test_a_loggers_lines_after_it_were_written_when_they_say(tmp_path: Path):
    # Another process's logger, its handler flushing each line (sealed-7's second
    # torchrun, alive beside a third that died on EADDRINUSE).
    stamped = [f"2024-05-02 22:4{i // 10}:{i % 10}0,000 INFO: [epoch:  6, iter: {600 + i * 10}] "
               f"loss: {0.5 - i / 100:.3f}" for i in range(5)]
    lines = [f"2024-05-02 22:3{i // 10}:{i % 10}0,000 INFO: [epoch:  5, iter: {100 + i * 10}] "
             f"loss: {0.9 - i / 100:.3f}" for i in range(50)]
    died = ["Traceback (most recent call last):",
            '  File "/opt/conda/bin/torchrun", line 33, in <module>',
            "    sys.exit(load_entry_point()())",
            "RuntimeError: The server socket has failed to listen on any local network "
            "address. port: 4321, code: -98, name: EADDRINUSE"]
    data = verdict_of(tmp_path, [*lines, *died, *stamped])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_stop_signal_right_after_an_uncaught_exception_is_its_aftermath(tmp_path: Path):
    # PaddlePaddle's worker (sealed-28): the ValueError that ended it, then the launcher's
    # SIGTERM reported by Paddle's own signal handler. The exception is how it ended.
    died = ["Traceback (most recent call last):",
            '  File "main_ibot.py", line 475, in <module>',
            "    train_ibot(args)",
            '  File "main_ibot.py", line 408, in train_one_epoch',
            "    student_local_cls = student(images)[0]",
            "ValueError: (InvalidArgument) The 'shape' in ReshapeOp is invalid.",
            "", "--------------------------------------",
            "C++ Traceback (most recent call last):",
            "--------------------------------------",
            "No stack trace in paddle, may be caused by external reasons.", "",
            "----------------------", "Error Message Summary:", "----------------------",
            "FatalError: `Termination signal` is detected by the operating system.",
            "  [SignalInfo: *** SIGTERM (@0x3f4002bdc34) received by PID 2874711 (TID "
            "0x7f8d95a6b4c0) from PID 2874420 ***]"]
    data = verdict_of(tmp_path, [f"Epoch: [0]  [ {i}/500]  loss: {9 - i / 100:.4f}"
                                 for i in range(0, 100, 10)] + died)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO"), data["summary"]
    assert "ValueError" in data["summary"]

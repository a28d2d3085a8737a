"""How runs end, round two: stops said by a signal handler or by the parent process,
and ends read from a run's own words. Each line is written in the shape its program
prints (cited at each), with made-up values."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.events import find_events
from tests.core.test_endings import once


def kinds(line: str) -> list[EventKind]:
    return [e.kind for e in find_events(line)]


# --- a stop signal reported by Abseil's handler, or by the parent -----------------------
# absl/debugging/failure_signal_handler.cc: `*** %s received at time=%ld on cpu %d ***`
_ABSL_TERM = "*** SIGTERM received at time=1700000123 on cpu 3 ***"
# subprocess.CalledProcessError.__str__: `Command '%s' died with %r.` (a Signals member)
_CHILD_TERM = "Command '['python', 'train.py', '--rounds', '50']' died with <Signals.SIGTERM: 15>."


@pytest.mark.parametrize("line", [
    _CHILD_TERM,
    "subprocess.CalledProcessError: Command '['bash', 'run.sh']' died with <Signals.SIGHUP: 1>.",
])
def test_a_stop_signal_said_by_the_parent_is_a_stop(line: str) -> None:
    assert EventKind.STOPPED_BY_SIGNAL in kinds(line)


@pytest.mark.parametrize("line", [
    _ABSL_TERM,
    "[2025-01-02 10:00:00,123 E 4242 4242] logging.cc:440: *** SIGINT received at "
    "time=1700000123 on cpu 0 ***",
])
def test_abseils_report_of_a_stop_is_a_stop(line: str) -> None:
    assert EventKind.STOPPED_BY_SIGNAL in kinds(line)


def test_abseils_stop_of_a_worker_while_the_driver_trains_on_is_no_end(tmp_path: Path) -> None:
    # Ray prints it for each worker it tears down while the driver trains on (sealed-13's
    # LMAPF run: the stack, then more episodes, then the final model saved).
    text = (_rounds(1, 30) + _ABSL_TERM + "\nPC: @     0x7f00a0b1c117  (unknown)  (unknown)\n"
            + _rounds(31, 60))
    assert once(tmp_path, text)["terminal_state"] == "RUNNING"


def test_a_clean_exit_after_a_stop_signal_is_no_finish(tmp_path: Path) -> None:
    # sealed-29's LMAPF run: SIGTERM, Ray's stacks, then W&B's `(success)` as the process
    # handled the signal and exited 0, nothing trained between.
    text = (_rounds(1, 30) + _ABSL_TERM + "\nPC: @     0x7f00a0b1c117  (unknown)  (unknown)\n"
            "wandb: Waiting for W&B process to finish... (success).\n")
    data = once(tmp_path, text)
    assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO"), data["summary"]


@pytest.mark.parametrize("line", [
    "*** SIGSEGV received at time=1700000123 on cpu 3 ***",
    "Command '['python', 'train.py']' died with <Signals.SIGSEGV: 11>.",
])
def test_a_fault_said_the_same_way_is_no_stop(line: str) -> None:
    found = kinds(line)
    assert EventKind.STOPPED_BY_SIGNAL not in found
    assert EventKind.SEGFAULT in found


def _rounds(first: int, last: int) -> str:
    return "".join(f"INFO :      [ROUND {r}]\n"
                   f"INFO :      fit progress: ({r}, {2.5 - 0.01 * r:.3f}, "
                   f"{{'cen_accuracy': {0.1 + 0.004 * r:.3f}}}, {100.0 * r:.1f})\n"
                   for r in range(first, last + 1))


def test_a_simulation_whose_launcher_saw_it_die_of_sigterm_is_cancelled(tmp_path: Path) -> None:
    text = (_rounds(1, 30) + _ABSL_TERM + "\nPC: @     0x7f00a0b1c117  (unknown)  (unknown)\n"
            + _CHILD_TERM + "\n")
    data = once(tmp_path, text)
    assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO"), data["summary"]


# --- the closing block: a hand-written network writing itself out, the time it ran ------
def _online_accuracy(images: int) -> str:
    """A from-scratch C network's print every 100 images: the image, then the running
    accuracy (its first is 0/0 before any image is counted)."""
    lines = ["+ ./main", "Img No. 0", "Training Accuracy: -nan"]
    for i in range(1, images):
        lines += [f"Img No. {100 * i}", f"Training Accuracy: {0.4 + 0.005 * i:.6f}"]
    return "\n".join(lines) + "\n"


_WRITTEN_OUT = ("Successfully saved matrix to layer1\nSuccessfully saved matrix to layer2\n"
                "Successfully written to 'trained_net'\n")


def test_a_network_that_writes_its_matrices_out_after_its_loop_finished(tmp_path: Path) -> None:
    data = once(tmp_path, _online_accuracy(40) + _WRITTEN_OUT)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def test_the_same_loop_without_the_save_is_not_said_to_have_finished(tmp_path: Path) -> None:
    data = once(tmp_path, _online_accuracy(40))
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def _epochs(n: int) -> str:
    return "".join(f"Epoch {e}: loss {1.0 / e:.4f}, acc {0.5 + 0.01 * e:.3f}\n"
                   for e in range(1, n + 1))


@pytest.mark.parametrize("closing", ["### Time ran: 1877.4751", "Time taken: 812.3 s",
                                     "Running time = 0:13:00"])
def test_the_time_the_run_took_said_after_its_last_epoch_closes_it(tmp_path: Path,
                                                                   closing: str) -> None:
    data = once(tmp_path, _epochs(12) + closing + "\n")
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def test_a_time_printed_after_every_epoch_is_no_end(tmp_path: Path) -> None:
    text = "".join(f"Epoch {e}: loss {1.0 / e:.4f}\nTime taken: {80 + e}.1 s\n"
                   for e in range(1, 13))
    data = once(tmp_path, text)
    assert data["terminal_state"] == "RUNNING", data["summary"]


# --- Nielsen's `Epoch j: right / size`, once per epoch trained -------------------------
def _nielsen(planned: int, reached: int) -> str:
    header = (f"* epochs: {planned}\n"
              "* Learning Algorithm: Stochastic Gradient Descent with Mini batch size of: 10 "
              "and Learning Rate: 3\n---\n")
    epochs = "".join(f"_Epoch {e}: {8000 + 40 * e} / 10000_\t\t\n" for e in range(1, reached + 1))
    return header + epochs + "\n---\n### Time ran: 912.5\n"


def test_nielsens_per_epoch_count_right_marks_the_epoch_trained(tmp_path: Path) -> None:
    data = once(tmp_path, _nielsen(planned=20, reached=20))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def test_the_same_run_stopping_well_short_of_its_plan_did_not_succeed(tmp_path: Path) -> None:
    data = once(tmp_path, _nielsen(planned=20, reached=8))
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


# --- a closing in a log of epochs, checked against the epochs it planned ------------------
def _epoch_losses(planned: int, first: int, last: int) -> str:
    return f"epochs = {planned}\n" + "".join(
        f"Epoch {e}: loss {1.0 / (e + 1):.4f}, acc {0.5 + 0.01 * e:.3f}\n"
        for e in range(first, last + 1)) + "Total time: 812.3\n"


@pytest.mark.parametrize(("first", "last"), [(1, 20), (0, 19)])
def test_a_closing_at_the_last_planned_epoch_is_the_end(tmp_path: Path, first: int,
                                                        last: int) -> None:
    data = once(tmp_path, _epoch_losses(20, first, last))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]


def test_a_closing_well_short_of_the_planned_epochs_is_no_success(tmp_path: Path) -> None:
    data = once(tmp_path, _epoch_losses(20, 1, 8))
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def test_a_launcher_whose_check_call_raised_for_a_child_stopped_by_sigterm_is_cancelled(
        tmp_path: Path) -> None:
    text = (_rounds(1, 30) + "Traceback (most recent call last):\n"
            '  File "launch.py", line 12, in <module>\n'
            "    subprocess.run(cmd, check=True)\n"
            "subprocess.CalledProcessError: Command '['python', 'train.py']' died with "
            "<Signals.SIGTERM: 15>.\n")
    data = once(tmp_path, text)
    assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO"), data["summary"]


def test_a_child_that_died_of_a_segfault_is_a_crash(tmp_path: Path) -> None:
    text = (_rounds(1, 30) + "Traceback (most recent call last):\n"
            '  File "launch.py", line 12, in <module>\n'
            "    subprocess.run(cmd, check=True)\n"
            "subprocess.CalledProcessError: Command '['python', 'train.py']' died with "
            "<Signals.SIGSEGV: 11>.\n")
    data = once(tmp_path, text)
    assert data["terminal_state"] == "FAILED", data["summary"]

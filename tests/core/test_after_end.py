"""A results table printed after the run said it finished is no training (see
`core.after_end`). The logs are written here in the shape such runs print, with made-up
values."""

from __future__ import annotations

from pathlib import Path

from babysit.core.after_end import table_after_the_end
from babysit.model import Record
from tests.core.test_endings import once


def _row(step: int, fmt: str = "table", names: tuple[str, ...] = ("col2", "col3")) -> Record:
    return Record(step=step, metrics=dict.fromkeys(names, 0.5), fmt=fmt)


def test_a_bare_row_behind_the_step_after_the_end_is_a_table():
    assert table_after_the_end(_row(40), True, 300)


def test_what_is_still_training():
    assert table_after_the_end(_row(40), True, None)  # a step for a run that printed none
    assert not table_after_the_end(_row(40), False, 300)  # the run has not said it finished
    assert not table_after_the_end(_row(301), True, 300)  # the step went on
    assert not table_after_the_end(_row(40, names=("loss", "col3")), True, 300)  # named
    assert not table_after_the_end(_row(40, fmt="key-value"), True, 300)


def _epochs(count: int) -> str:
    return "".join(f"epoch={e} loss={1.5 - e * 0.01:.4f} lr=0.001\n" for e in range(1, count + 1))


def test_per_class_rows_after_an_early_stop_leave_the_run_finished(tmp_path: Path):
    text = _epochs(120) + (
        "Stopping training early as no improvement observed in last 30 epochs.\n"
        "120 epochs completed in 0.50 hours.\n"
        "   all   50   80   0.91   0.88   0.93   0.61\n"
        "    10   50   20   0.95   0.90   0.97   0.66\n"
        "    20   50   25   0.90   0.85   0.92   0.58\n"
        "    30   50   35   0.88   0.89   0.90   0.59\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")

"""Out of memory caught and skipped batch after batch is the run's out of memory; one
skip now and then between training records is not (issue 24)."""

from __future__ import annotations

import pytest

from babysit.model import EventKind
from babysit.parsing.oom_skips import OOM_SKIPS_IN_A_ROW
from babysit.parsing.parser import LogParser


def ooms(lines: list[str]) -> list[str]:
    return [e.detail for r in LogParser().feed_lines(lines) for e in r.events
            if e.kind is EventKind.OOM]


@pytest.mark.parametrize("skip", [
    "INFO - WARNING: ran out of memory",
    "| WARNING: ran out of memory with exception: CUDA error; Skipping batch",
    "WARNING: ran out of GPU memory, skipping batch",
])
def test_every_batch_skipped_for_memory_is_an_oom(skip: str) -> None:
    # Each with its own time, as a logger writes them (a line repeated verbatim may be
    # a console's redraw).
    lines = ["2022-07-06 11:53:54,549 - INFO - start training"] + [
        f"2022-07-06 11:53:{55 + i // 10},{100 + i:03d} - {skip}" for i in range(50)]
    found = ooms(lines)
    assert len(found) == 1 and "every batch ran out of memory" in found[0]


def test_a_few_skips_between_training_records_are_not_an_oom() -> None:
    lines = []
    for step in range(1, 40):
        lines.append(f"step {step} | loss {2.0 - 0.01 * step:.3f}")
        lines += ["WARNING: ran out of memory, skipping batch"] * (OOM_SKIPS_IN_A_ROW // 2)
    assert ooms(lines) == []


def test_a_traceback_oom_is_still_one_event_of_its_own() -> None:
    lines = ["WARNING: ran out of memory"] * 3 + [
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    assert len(ooms(lines)) == 1


def test_a_skip_printed_verbatim_batch_after_batch_is_counted_too() -> None:
    lines = ["start training"] + ["WARNING: ran out of memory"] * (OOM_SKIPS_IN_A_ROW + 5)
    assert len(ooms(lines)) == 1

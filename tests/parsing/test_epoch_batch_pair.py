"""The `[epoch, batch/batches]` pair (the PyTorch tutorial's, I-JEPA's): the batch of that
epoch, counted into the run's step, and the planned epochs times the batches its plan
(issue 23, points 3 and 4)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _ijepa(first: int, last: int, batches: int = 1000, every: int = 10) -> list[str]:
    lines = []
    for epoch in range(first, last + 1):
        for i in range(0, batches, every):
            lines.append(f"INFO:root:[{epoch}, {i:5d}/{batches:5d}] - train_losses - "
                         f"Children class: {3 / (1 + epoch + i / batches):.4f} - "
                         f"[wd: 4.00e-02] [lr: 1.00e-05] [mem: 2.21e+04] (2143.8 ms)")
            lines.append(f"INFO:root:[{epoch}, {i:5d}] grad_stats: [4.17e-02 8.05e-01]")
        lines += [f"INFO:root:avg. train_loss {2 / (epoch + 1):.3f}",
                  f"INFO:root:avg. test_loss 0.4 avg. Accuracy@1 {70 + epoch / 10:.3f}"]
    return lines


def test_the_pair_gives_the_runs_step_and_epoch():
    parser = LogParser()
    records = [r for r in parser.feed_lines(_ijepa(1, 2)) if r.step is not None]
    assert parser.step == 1000 + 990
    assert any(r.epoch is not None and 1 < r.epoch < 2 for r in records)


def test_a_zero_based_pair_counts_its_first_epoch_from_zero():
    parser = LogParser()
    parser.feed_lines(_ijepa(0, 1))
    assert parser.step == 1000 + 990


def test_the_last_planned_epochs_last_batch_then_its_summary_ends_the_run(tmp_path: Path):
    lines = ["    'optimization': {   'epochs': 5,", *_ijepa(1, 5)]
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_an_earlier_epoch_is_running(tmp_path: Path):
    lines = ["    'optimization': {   'epochs': 5,", *_ijepa(1, 3)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"

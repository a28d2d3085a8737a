"""A bar drawn only at its start, then one record an epoch (issue 23, point 4): a
notebook's tqdm bar over the epochs (`0%| 0/10`) is frozen at its first draw, and the
records that follow (`Epoch: 1 | train_loss: …`) are its counter; the last planned
epoch is the end, not step 0 of 10."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of

_BAR = "  0%|          | 0/{total} [00:00<?, ?it/s]"


def _records(epochs: range, total: int, moved: bool = False) -> list[str]:
    lines = [_BAR.format(total=total)]
    if moved:
        lines.append(f" 30%|###       | 3/{total} [00:09<00:21, 3.1s/it]")
    return lines + [f"Epoch: {e} | train_loss: {1 / (e + 1):.4f} | train_acc: 0.9 | "
                    f"test_loss: {1.2 / (e + 1):.4f} | test_acc: 0.8" for e in epochs]


@pytest.mark.parametrize("epochs,total", [(range(1, 11), 10), (range(0, 10), 10),
                                          (range(1, 6), 5)])
def test_the_last_epoch_of_the_bar_ends_the_run(tmp_path: Path, epochs: range, total: int) -> None:
    verdict = verdict_of(tmp_path, _records(epochs, total))
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_an_epoch_short_of_the_bar_is_running(tmp_path: Path) -> None:
    assert verdict_of(tmp_path, _records(range(1, 7), 10))["terminal_state"] == "RUNNING"


def test_the_epochs_are_the_bars_counter() -> None:
    parser = LogParser()
    for line in _records(range(1, 5), 10):
        parser.feed(line + "\n")
    assert (parser.step, parser.target) == (4, 10)


def test_a_bar_that_moved_is_not_over_the_epochs() -> None:
    parser = LogParser()
    for line in _records(range(1, 5), 10, moved=True):
        parser.feed(line + "\n")
    assert parser.step == 3


def test_epochs_past_the_bars_total_withdraw_it(tmp_path: Path) -> None:
    parser = LogParser()
    for line in _records(range(1, 4), 2):
        parser.feed(line + "\n")
    assert (parser.step, parser.target) == (3, None)
    assert verdict_of(tmp_path, _records(range(1, 9), 5))["terminal_state"] == "RUNNING"


def test_epochs_that_go_back_are_not_the_bars_counter() -> None:
    parser = LogParser()
    for line in [*_records(range(1, 4), 10), "Epoch: 1 | train_loss: 0.3 | train_acc: 0.9"]:
        parser.feed(line + "\n")
    assert parser.step == 3

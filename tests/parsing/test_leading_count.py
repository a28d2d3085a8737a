"""A line the run prints over and over that begins with a bare count (CatBoost's
`999:<TAB>learn: 0.249<TAB>total: 12m 12s<TAB>remaining: 0us`): the count is its iteration
(issue 23, points 3 and 4)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _catboost(last: int, total: int, indent: str = "") -> list[str]:
    lines = [f"{indent}Learning rate set to 0.5"]
    for i in range(last + 1):
        left = total - 1 - i
        lines.append(f"{indent}{i}:\tlearn: {0.3 - i / (10 * total):.7f}\ttotal: {i}s\t"
                     f"remaining: {f'{left}s' if left else '0us'}")
    return lines


def test_the_leading_count_is_the_iteration():
    parser = LogParser()
    records = parser.feed_lines(_catboost(40, 1000, indent="    "))
    assert parser.step == 40
    assert any(r.metrics.get("learn") for r in records)


def test_the_last_iteration_with_nothing_remaining_ends_the_run(tmp_path: Path):
    for indent in ("", "    "):
        verdict = verdict_of(tmp_path, _catboost(199, 200, indent))
        assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_iterations_still_remaining_are_running(tmp_path: Path):
    assert verdict_of(tmp_path, _catboost(120, 200))["terminal_state"] == "RUNNING"


def test_a_count_that_never_moves_is_no_iteration():
    # `srun -l` labels every line of task 0 with `0: `: a label, not a step
    parser = LogParser()
    parser.feed_lines([f"0: epoch {e} train_loss: {1 / e:.3f}" for e in range(1, 30)])
    assert parser.step in (None, 29)

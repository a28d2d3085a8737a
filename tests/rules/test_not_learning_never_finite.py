"""A loss that was never finite, from the run's start: the run has learned nothing."""

from __future__ import annotations

from tests.rules.test_not_learning_short import not_learning


def _lines(losses: list[str], first: int = 1) -> list[str]:
    return [f"| epoch {1 + i // 5} | step {first + 10 * i} | lr 1.0 | loss {v}"
            for i, v in enumerate(losses)]


def test_nan_on_every_point_from_the_start_is_not_learning() -> None:
    assert not_learning(_lines(["nan"] * 6)) == ["never finite"]


def test_nan_after_finite_losses_is_the_nan_rules_alone() -> None:
    assert "never finite" not in not_learning(_lines(["2.31", "2.10", *["nan"] * 6]))


def test_an_excerpt_that_begins_mid_run_says_nothing_of_the_start() -> None:
    assert not_learning(_lines(["nan"] * 6, first=5000)) == []


def test_a_config_dump_before_the_nan_does_not_count_as_a_finite_loss() -> None:
    lines = ["Namespace(epochs=12, lr=20, annealing_loss_improvement_pct=1.0, clip=0.25)",
             *_lines(["nan"] * 6, first=200)[:0], *_lines(["nan"] * 6)]
    assert not_learning(lines) == ["never finite"]

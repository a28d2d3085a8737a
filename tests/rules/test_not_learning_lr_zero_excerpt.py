"""A learning rate of exactly 0 on every point of an excerpt that begins mid-run."""

from __future__ import annotations

from tests.rules.test_not_learning_short import not_learning


def _megatron_like(rates: list[str], losses: list[float], first: int = 400) -> list[str]:
    return [f" iteration {first + 10 * i:8d}/ 1000 | learning rate: {lr} | "
            f"lm loss: {loss:.6E} | grad norm: 3448.131 |"
            for i, (lr, loss) in enumerate(zip(rates, losses, strict=True))]


def test_two_points_at_a_rate_of_zero_mid_run_are_not_learning() -> None:
    lines = _megatron_like(["0.000E+00"] * 2, [10.648, 10.650])
    assert not_learning(lines) == ["learning rate"]


def test_a_rate_that_is_positive_somewhere_in_the_excerpt_is_left_alone() -> None:
    lines = _megatron_like(["1.000E-05", "0.000E+00", "0.000E+00"], [10.6, 10.6, 10.6])
    assert not_learning(lines) == []


def test_a_log_from_the_start_still_waits_out_its_warm_up_and_five_points() -> None:
    lines = _megatron_like(["0.000E+00"] * 3, [10.648, 10.650, 10.649], first=0)
    assert not_learning(lines) == []

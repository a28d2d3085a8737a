"""A short excerpt whose loss rises at every logged point by a large total is diverging
(issue 24): a five-line Megatron excerpt 6.37 → 10.24 gives no room for a level to
catch up or for the noise to be known. A short log that wobbles, or climbs by a few per
cent, is not."""

from __future__ import annotations

from tests.rules.test_loss_rules import losses, run_of, serious


def _diverging(values: list[float], every: int = 10) -> bool:
    return any(s[0] == "divergence" for s in serious(run_of(losses(values, 6900, every))))


def test_a_five_point_climb_by_sixty_per_cent_is_divergence():
    assert _diverging([6.365808, 6.598378, 7.314456, 9.121927, 10.23865])


def test_a_longer_short_log_ending_in_a_climb_is_divergence():
    assert _diverging([5.0, 4.1, 3.9, 3.7, 3.8, 4.4, 5.3, 6.9, 8.8], every=100)


def test_a_short_climb_of_a_few_per_cent_is_not():
    assert not _diverging([2.00, 2.01, 2.03, 2.05, 2.07])


def test_a_short_wobble_is_not():
    assert not _diverging([3.0, 3.4, 2.9, 3.5, 3.1, 3.6])

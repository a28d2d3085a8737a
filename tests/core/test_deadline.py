"""The deadline rule: when the run, at its present rate, reaches its time limit before
its last step."""

from __future__ import annotations

from babysit.core.deadline import deadline_warning, save_every
from babysit.snapshot import TimeLimit

HOUR = 3600.0


def test_a_run_that_finishes_within_its_limit_is_not_warned_about():
    limit = TimeLimit(4 * HOUR, HOUR, "Slurm TimeLimit")
    # 3000 steps left at 1 step/s: 50 min, with 3 h left.
    assert deadline_warning(limit, 2000, 5000, 1.0, [500, 1000, 1500, 2000]) is None


def test_a_run_that_cannot_finish_is_told_where_it_stops_and_its_last_checkpoint():
    limit = TimeLimit(4 * HOUR, 3 * HOUR, "Slurm TimeLimit",
                      ("scontrol update JobId=42 'TimeLimit={minutes}'",))
    found = deadline_warning(limit, 2000, 10000, 0.5, [500, 1000, 1500, 2000])
    assert found is not None
    # 1 h left at 0.5 steps/s: step 3800; saves every 500 steps: the last at 3500.
    assert found.step_at_limit == 3800
    text = found.description
    assert "it will stop near step 3800 of 10000" in text
    assert "the last checkpoint before the limit is due at step 3500 (every 500 steps), " \
           "in about 50m" in text
    # 3 h used + 8000 steps at 0.5/s (4h 26m 40s) × 1.1 → 7h 53m 20s, rounded up to minutes.
    assert "scontrol update JobId=42 'TimeLimit=474'" in text
    assert "babysit runs none of these" in text


def test_without_a_rate_or_a_last_step_nothing_is_said():
    limit = TimeLimit(HOUR, 3500, "Slurm TimeLimit")
    assert deadline_warning(limit, 10, None, 1.0, []) is None
    assert deadline_warning(limit, 10, 1000, None, []) is None
    assert deadline_warning(limit, None, 1000, 1.0, []) is None


def test_the_save_cadence_is_the_most_common_gap():
    assert save_every([100, 200, 300, 350, 400]) == 100
    assert save_every([100]) is None

"""rules/last_weights: a run that stopped itself early and kept its last weights far from
its best evaluation. Values quoted from a tf.keras run's `val_loss` column
(tests/fixtures/logs/public/keras2_val_spike_early_stop_clean.log, epochs 10-27: the
best 0.1037 at epoch 17, then stopped at epoch 27 of 1000 and `Saving the model.`)."""

from __future__ import annotations

from babysit.config import RuleSettings
from babysit.rules.last_weights import last_far_from_best

_KERAS2 = [0.1885, 0.3727, 1.1931, 0.5890, 0.1316, 0.1739, 0.1490, 0.1037, 0.1553, 0.1140,
           0.1948, 0.1319, 0.2002, 0.1384, 0.1454, 0.1390, 0.1422, 0.1466]


def test_last_evaluations_far_from_the_best_are_found():
    found = last_far_from_best(_KERAS2, -1, RuleSettings())
    assert found is not None
    assert found[0] == _KERAS2.index(0.1037)
    assert "41% worse than its best 0.1037" in found[1]


def test_a_plateau_a_little_above_its_best_is_not():
    """The last three within 25 % of the best (0.1037 × 1.25 = 0.1296)."""
    values = [*_KERAS2[:-3], 0.125, 0.121, 0.128]
    assert last_far_from_best(values, -1, RuleSettings()) is None


def test_a_best_among_the_last_evaluations_is_not():
    assert last_far_from_best([*_KERAS2, 0.09], -1, RuleSettings()) is None


def test_higher_is_better_is_mirrored():
    accuracy = [0.5, 0.6, 0.7, 0.8, 0.95, 0.9, 0.85, 0.6, 0.55, 0.5]
    assert last_far_from_best(accuracy, 1, RuleSettings()) is not None
    assert last_far_from_best(accuracy, 0, RuleSettings()) is None


def test_a_best_written_in_the_first_quarter_far_behind_the_end_is_long_behind():
    from babysit.rules.last_weights import best_long_behind

    climbing = [1.51, 1.34, *(1.5 + 0.1 * i for i in range(10))]  # best at step 200
    found = best_long_behind(climbing, -1, RuleSettings(), 200, 1200)
    assert found is not None and "written at step 200 of 1200" in found
    # Written a third of the way in: an ordinary early-stopped run's best.
    assert best_long_behind(climbing, -1, RuleSettings(), 400, 1200) is None
    # The Keras run's last evaluations near enough its best are not far behind it.
    assert best_long_behind([*_KERAS2[:-3], 0.125, 0.121, 0.128], -1, RuleSettings(),
                            100, 2700) is None

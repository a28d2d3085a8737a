"""A peak then a decline on few evaluations (issue 24): a dev BLEU that peaks and stays
below its peak for several evaluations, by more than their own spread, while the
training loss keeps falling, is over-fitting; a noisy plateau whose best is only its
luckiest evaluation is not. Metrics only scored on held-out data (BLEU, mIoU, WER) count
as evaluations without an eval prefix."""

from __future__ import annotations

import random

from babysit.config import RuleSettings
from babysit.rules.eval_trends import degradation, held_out_direction

_BLEU = [0.01, 0.27, 1.43, 2.97, 5.11, 5.16, 7.03, 7.65, 6.72, 7.79, 8.54, 8.63, 8.18, 7.45,
         7.71, 7.89, 7.57, 7.56]


def _with_train(values: list[float]) -> list[tuple[float, float | None]]:
    return [(v, 8.0 * 0.9 ** i) for i, v in enumerate(values)]


def test_a_bleu_that_peaked_and_stays_below_is_degrading():
    assert degradation(_with_train(_BLEU), 1, RuleSettings()) is not None


def test_an_accuracy_that_peaked_and_slid_is_degrading():
    acc = [0.31, 0.45, 0.52, 0.58, 0.61, 0.63, 0.60, 0.55, 0.53, 0.54, 0.52, 0.53, 0.52]
    assert degradation(_with_train(acc), 1, RuleSettings()) is not None


def test_a_noisy_plateau_is_not_a_peak_left_behind():
    for seed in range(20):
        draw = random.Random(seed)
        rise = [2.0 + 0.8 * i for i in range(8)]
        plateau = [8.0 + draw.gauss(0, 0.3) for _ in range(12)]
        assert degradation(_with_train(rise + plateau), 1, RuleSettings()) is None, seed


def test_a_peak_the_training_loss_shares_is_not_the_evaluation_s():
    values = [(v, 2.0 + 0.1 * i) for i, v in enumerate(_BLEU)]  # training loss rising too
    assert degradation(values, 1, RuleSettings()) is None


def test_held_out_names():
    assert held_out_direction("bleu") == 1
    assert held_out_direction("miou") == 1
    assert held_out_direction("test/wer") == -1
    assert held_out_direction("spmiou") == 0  # not a name this table knows
    assert held_out_direction("accuracy") == 0  # a training accuracy too

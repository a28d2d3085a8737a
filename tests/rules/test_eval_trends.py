"""Eval degradation judged against the metric's own noise (issue 24): a validation loss
that climbs steadily while the training loss falls is over-fitting, a word error rate
that jumps after one epoch is broken decoding, and a validation metric that wanders
within its noise is neither."""

from __future__ import annotations

import random

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import AnomalyType
from babysit.parsing.parser import LogParser
from babysit.rules import eval_trends


def open_degradations(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.description for a in run.ledger.anomalies
            if a.type is AnomalyType.EVAL_DEGRADATION and not a.resolved]


def test_a_word_error_rate_jumping_from_39_to_154_after_one_epoch_is_flagged():
    # speechbrain_crdnn (public): two evaluations only.
    lines = ["speechbrain.utils.train_logger - epoch: 1, lr: 1.00e+00 - train loss: 9.45e-01 "
             "- valid loss: 1.23, valid CER: 35.42, valid WER: 39.14",
             "speechbrain.utils.train_logger - epoch: 2, lr: 1.00e+00 - train loss: 7.26e-01 "
             "- valid loss: 1.27, valid CER: 1.54e+02, valid WER: 1.54e+02"]
    found = open_degradations(lines)
    assert any("valid_wer jumped from 39.14" in d for d in found), found


def test_a_validation_loss_climbing_with_ups_and_downs_while_train_falls_is_overfitting():
    # The shape of hf_trainer_qwen_lora (public): eval_loss bottoms out, then climbs
    # with wobbles for twenty evaluations while the train loss keeps falling.
    rng = random.Random(1)
    evals = [2.4 - 0.1 * i for i in range(7)] + \
        [1.8 + 0.016 * i + rng.uniform(-0.02, 0.02) for i in range(23)]
    lines = []
    for i, val in enumerate(evals):
        step = 100 * (i + 1)
        lines += [f"{{'loss': {4.0 - 0.1 * i:.3f}, 'learning_rate': 1e-4, 'epoch': {i + 1}}}",
                  f"{{'eval_loss': {val:.4f}, 'epoch': {i + 1}, 'step': {step}}}"]
    assert open_degradations(lines)


def test_a_validation_loss_wandering_within_its_noise_near_its_best_is_not_flagged():
    # lightning_csvlogger_gaze (public): val_loss wanders 0.014..0.018 once converged;
    # three small rises in a row happen by chance.
    for seed in range(5):
        rng = random.Random(seed)
        lines = []
        for i in range(40):
            val = 0.016 + rng.gauss(0, 0.001)
            lines += [f"step={100 * (i + 1)} loss={0.5 * 0.95 ** i:.4f}",
                      f"step={100 * (i + 1)} val_loss={val:.5f}"]
        assert open_degradations(lines) == [], seed


def test_three_rises_within_the_metrics_noise_are_not_degradation():
    rules = RuleSettings()
    rng = random.Random(7)
    history = [(1.0 + rng.gauss(0, 0.05), 2.0 - 0.01 * i) for i in range(12)]
    drift = [(0.99, 1.8), (1.0, 1.79), (1.015, 1.78)]  # +2.5 %, a fifth of one σ-step
    assert eval_trends.degradation(history + drift, -1, rules) is None


def test_a_rise_shared_by_the_training_loss_is_not_the_evaluations():
    rules = RuleSettings()
    assert eval_trends.degradation([(39.1, 0.9), (154.0, 1.1)], -1, rules) is None

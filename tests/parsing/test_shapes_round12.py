"""Shapes read since the twelfth session: an epoch's measures under names of the run's
own, a JSON record behind a label with its counters written as text, a model saved at
an epoch without a path, a learning rate that fades to 0 at its schedule's end."""

from __future__ import annotations

import json
import math

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import AnomalyType, EventKind
from babysit.parsing.parser import LogParser


def records(lines: list[str]):
    return [r for r in LogParser().feed_lines(lines) if r.metrics]


def test_an_epochs_measures_by_names_no_hint_knows_are_records():
    # A slot-attention run prints only `[epoch N] FG-ARI=… mBO=…` (sealed-18's dinov3):
    # before, no line of it was read and the run had no progress at all.
    lines = [f"[epoch {i}] FG-ARI={0.40 - i / 100:.4f} mBO={0.35 + i / 1000:.4f}"
             for i in range(10)]
    read = records(lines)
    assert [r.epoch for r in read] == [float(i) for i in range(1, 10)]
    assert read[-1].metrics == {"fg_ari": 0.31, "mbo": 0.359}


def test_a_counter_alone_or_a_loggers_source_line_is_no_measure():
    said = [f"starting epoch: {i}" for i in range(6)]
    assert records(said) == []
    heads = [f"[06/22 0{i}:12:19][INFO] train_net.py:  692: Epoch {i} takes 13770.57s."
             for i in range(6)]
    assert all("train_net.py" not in r.metrics for r in records(heads))


def _stats(kind: str, epoch: int, it: int | None, loss: float) -> str:
    body = {"_type": kind, "epoch": f"{epoch}/20", "loss": loss, "lr": 0.01}
    if it is not None:
        body["iter"] = f"{it}/316"
    if kind.startswith("val"):
        body = {"_type": kind, "epoch": f"{epoch}/20", "top1_err": loss}
    return f"[06/21 19:35:15][INFO] logging.py:   99: json_stats: {json.dumps(body)}"


def test_a_labelled_json_record_with_counters_as_text_is_placed_in_the_run():
    # PySlowFast: `json_stats: {"_type": "train_iter_", "epoch": "1/20", "iter": "10/316"…}`
    lines = [_stats("train_iter_", 1, 10, 3.5), _stats("train_iter_", 1, 20, 3.4),
             _stats("train_iter_", 2, 10, 3.3)]
    read = records(lines)
    assert [(r.step, r.target_steps) for r in read] == [(10, 6320), (20, 6320), (326, 6320)]
    assert read[0].metrics["loss"] == 3.5


def test_a_json_record_of_a_held_out_split_keeps_its_name_and_moves_no_step():
    lines = [_stats("train_iter_", 1, 310, 3.3), _stats("val_epoch", 1, None, 77.2)]
    last = records(lines)[-1]
    assert last.metrics == {"val_top1_err": 77.2}
    assert last.step in (None, 310)


def test_a_label_that_is_prose_does_not_open_a_json_record():
    assert records(['see {"loss": 1.0}', 'see {"loss": 2.0}']) == []


def test_a_model_saved_at_an_epoch_without_a_path_is_a_save():
    # The CycleGAN/pix2pix loop's words, copied by many research loops.
    for line, at in (("saving the model at the end of epoch 300, total_steps 96000", "epoch 300"),
                     ("saving the latest model (epoch 3, total_iters 5000)", "epoch 3")):
        [record] = LogParser().feed_lines([line])
        assert [(e.kind, e.detail) for e in record.events] == [(EventKind.CHECKPOINT_SAVED, at)]
    # A failed save is none; a best model's save comes at no cadence (a meta-learning
    # run's `saving best model at iter 9` then nothing for 15 iterations is no overdue save)
    for line in ("saving the model at epoch 5 failed", "saving best model at iter 9"):
        read = LogParser().feed_lines([line])
        assert all(e.kind is not EventKind.CHECKPOINT_SAVED for r in read for e in r.events)


def test_a_save_at_an_epoch_resolves_an_earlier_launchs_failed_save():
    lines = ["step=1 loss=1.0", "Traceback (most recent call last):",
             '  File "train.py", line 9, in <module>', "    model.save(save_path)",
             "NameError: name 'save_epoch_freq' is not defined",
             *[f"step={i} loss={1 / i:.3f}" for i in range(1, 30)],
             "saving the model at the end of epoch 5, total_steps 1600"]
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    failures = [a for a in run.ledger.anomalies if a.type is AnomalyType.CHECKPOINT_FAILURE]
    assert failures and all(a.resolved for a in failures)


def _lr_lines(rates: list[float]) -> list[str]:
    return [f"step={i + 1} loss={2 - i / 100:.3f} lr={rate:.5f}" for i, rate in enumerate(rates)]


def _lr_anomalies(lines: list[str], target: int | None = None) -> list[str]:
    head = [f"Total optimization steps = {target}"] if target else []
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(head + lines))
    return [a.description for a in run.ledger.anomalies if a.type is AnomalyType.LR_SCHEDULE]


def test_a_rate_printed_as_zero_at_its_cosine_tail_is_no_fault():
    peak = 0.01
    rates = [peak * (1 + math.cos(math.pi * i / 100)) / 2 for i in range(100)] + [0.0] * 10
    assert _lr_anomalies(_lr_lines(rates), target=110) == []


def test_a_rate_cut_to_zero_or_faded_to_zero_early_is_still_flagged():
    cut = [0.01] * 50 + [0.0] * 10  # from its peak straight to 0
    assert any("has been 0" in d for d in _lr_anomalies(_lr_lines(cut)))
    faded = [0.01 * 0.5 ** i for i in range(10)] + [0.0] * 10  # at step 11 of 100
    assert any("has been 0" in d for d in _lr_anomalies(_lr_lines(faded), target=100))

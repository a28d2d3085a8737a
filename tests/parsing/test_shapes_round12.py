"""Shapes read since the twelfth session: an epoch's measures under names of the run's
own, a JSON record behind a label with its counters written as text, a model saved at
an epoch without a path, a learning rate that fades to 0 at its schedule's end."""

from __future__ import annotations

import json
import math

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import AnomalyType, EventKind
from babysit.parsing.events import NAN_GUARD_STOP
from babysit.parsing.parser import LogParser


def records(lines: list[str]):
    return [r for r in LogParser().feed_lines(lines) if r.metrics]


def test_an_epochs_measures_by_names_no_hint_knows_are_records():
    # A slot-attention run prints only `[epoch N] FG-ARI=… mBO=…` (sealed-18's dinov3):
    # before, no line of it was read and the run had no progress at all.
    lines = [f"[epoch {i}] FG-ARI={0.40 - i / 100:.4f} mBO={0.35 + i / 1000:.4f}"
             for i in range(10)]
    read = records(lines)
    # (the first line too, once the second shows the template a metric line's)
    assert [r.epoch for r in read] == [float(i) for i in range(10)]
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


def test_a_loggers_dotted_name_after_its_level_is_no_part_of_the_message():
    from babysit.parsing.log_prefix import message
    assert message("2018-04-24 13:47:43,274 INFO     main.train_DNN: epoch 1, validation "
                   "error nan") == "epoch 1, validation error nan"
    assert message("2018-04-24 13:47:43,274 INFO loss: 0.5") == "loss: 0.5"  # a bare word


def test_a_nan_in_fields_behind_a_loggers_name_is_read():
    # Merlin's DNN trainer (sealed-21): before, the line was not read and the NaN missed.
    [record] = records(["2018-04-24 13:47:43,274 INFO     main.train_DNN: epoch 1, "
                        "validation error nan, train error nan  time spent 775.23"])
    assert math.isnan(record.metrics["validation_error"])
    assert math.isnan(record.metrics["train_error"])


def test_a_script_that_says_it_exits_on_an_error_failed():
    for line in ("Exiting due to exception: Loss Exploded", "Fatal error in main loop",
                 "FATAL ERROR: the data loader died"):
        [record] = LogParser().feed_lines(["step=1 loss=0.5", line])[-1:]
        assert [e.kind for e in record.events] == [EventKind.EXCEPTION], line
    for line in ("exiting due to the end of the data", "a fatal error would be raised if"):
        read = LogParser().feed_lines(["step=1 loss=0.5", line])
        assert all(e.kind is not EventKind.EXCEPTION for r in read for e in r.events), line


def test_a_padded_bracket_counter_before_pairs_of_any_names_is_the_step():
    # Wapiti's CRF trainer: the columns pad by their values' widths, so the lines' templates
    # differ in spaces only.
    lines = ["  [   1] obj=53109.96   act=240660   err= 3.71%/25.41% time=0.23s/0.23s",
             "  [   2] obj=16052.89   act=201733   err= 3.71%/25.41% time=0.14s/0.37s",
             "  [   3] obj=13922.99   act=125481   err= 3.71%/25.41% time=0.15s/0.52s",
             "  [   4] obj=12309.84   act=88905    err= 3.71%/25.41% time=0.15s/0.67s"]
    # (the first line's count is where the counter starts: read from the second on)
    assert [(r.step, r.metrics["obj"]) for r in records(lines)] == [(2, 16052.89),
                                                                    (3, 13922.99),
                                                                    (4, 12309.84)]


def test_the_time_the_training_took_said_after_the_loop_closes_it():
    lines = [line for i in range(1, 8)
             for line in (f"--- Epoch {i} ---", f"train loss:  {1 / i:.4f}")]
    read = LogParser().feed_lines([*lines, "Time for training:  54.61 s"])
    assert any(e.kind is EventKind.COMPLETED for r in read for e in r.events)


def _chance_run(values: list[float]) -> list[tuple[str, str]]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines([f"step={i + 1} loss={v:.5f}" for i, v in enumerate(values)]))
    return [(a.severity.value, a.description) for a in run.ledger.unresolved()
            if a.type is AnomalyType.NOT_LEARNING]


def test_a_loss_that_began_at_ln_k_and_is_there_still_is_not_learning():
    # sealed-21's NumPy MNIST CNN: 2.355 at epoch 1 (ln 10 = 2.303), up to 3.0, down to
    # 1.77, back to 2.23 at epoch 30.
    values = [2.355, 2.44, 2.57, 2.66, 2.72, 2.77, 2.85, 3.02, 2.30, 2.01, 1.84, 1.77, 1.90,
              1.93, 2.09, 2.01, 2.05, 2.08, 2.09, 2.09, 2.08, 2.09, 2.10, 2.11, 2.11, 2.20,
              2.21, 2.23, 2.23, 2.23]
    [(_, why)] = _chance_run(values)
    assert "ln(10)" in why


def test_a_classifier_that_leaves_ln_k_or_a_loss_that_began_elsewhere_is_left_alone():
    learned = [2.30 * 0.9 ** i for i in range(40)]  # from ln 10 down
    assert _chance_run(learned) == []
    slow = [2.302 - 0.004 * i for i in range(40)]  # from ln 10, slowly but steadily down
    assert _chance_run(slow) == []
    # between the class counts tasks commonly have, a level is no guess's (2.0, 1.9)
    assert _chance_run([2.0] * 10 + [1.9] * 30) == []
    summed = [147.3 - i * 0.01 for i in range(40)]  # a sum over a batch: no ln K
    assert all("began at" not in why for _, why in _chance_run(summed))


def test_an_epochs_batch_counter_of_unknown_names_counts_on_across_epochs():
    lines = [f"[epoch: {e}/200, iter: {i}/489] total: {1.3 - e / 100:.6f} "
             for e in (1, 2) for i in (400, 425, 25, 50) if (e == 1) == (i >= 400)]
    assert [r.step for r in records(lines)][-2:] == [489 + 25, 489 + 50]


def test_a_nan_guards_stop_is_no_early_stop():
    line = ("Monitored metric val_rec_loss = nan is not finite. Previous best value was "
            "0.045. Signaling Trainer to stop.")
    read = LogParser().feed_lines(["step=1 loss=0.5", line])
    # (the trainer stops there: the run is over, by its NaN guard, not by patience spent;
    # the lifecycle makes it ENDED, never SUCCEEDED)
    assert [e.detail for r in read for e in r.events if e.kind is EventKind.COMPLETED] \
        == [NAN_GUARD_STOP]
    patience = ("Monitored metric val_loss did not improve in the last 3 records. "
                "Signaling Trainer to stop.")
    read = LogParser().feed_lines(["step=1 loss=0.5", patience])
    assert any(e.kind is EventKind.COMPLETED for r in read for e in r.events)


def test_a_comma_between_pairs_is_no_thousands_separator():
    assert [(r.epoch, r.metrics) for r in records([" Epoch:198,Loss:0.318747"] * 2)][-1] == \
        (198.0, {"loss": 0.318747})
    [record] = records(["step: 1,234 loss: 2.5"])
    assert record.step == 1234


def test_a_configuration_dict_says_the_planned_epochs():
    parser = LogParser()
    parser.feed_lines(["{'embedding_dim': 50, 'batch_size': 16, 'learning_rate': 0.0001, "
                       "'epoch_num': 200, 'log_num': 2}"])
    assert parser.plan.epochs == 200
    metric = LogParser()
    metric.feed_lines(["{'loss': 0.5, 'epoch_num': 5}"])  # a metric line's epoch: no plan
    assert metric.plan.epochs is None


def test_a_named_nan_the_run_prints_again_and_again_is_read():
    # DL4J's line search (sealed-21): `tmpStep: NaN` at every step, never a number.
    head = "15:49:08.110 [main] DEBUG o.d.o.solvers.BackTrackLineSearch - "
    lines = [f"{head}Model score after step = 0.0", f"{head}tmpStep: NaN"] * 3
    found = [r.metrics for r in LogParser().feed_lines(lines)
             if any(not math.isfinite(v) for v in r.metrics.values())]
    assert found and math.isnan(found[-1]["tmpstep"])
    # said once, or an infinity (a bound, a best-so-far's start), it is no measurement
    for said in ([f"{head}tmpStep: NaN"], [f"{head}upperBound: Infinity"] * 3):
        assert all(math.isfinite(v) for r in LogParser().feed_lines(said)
                   for v in r.metrics.values())


def test_an_early_stop_then_the_scripts_own_finished_line_is_a_success(tmp_path):
    # A ResNet loop (sealed-7) whose configuration says 25 epochs: its early stop at epoch
    # 11, then `Training finished.`, is the end the early stop explains, not an early end.
    from dataclasses import replace as with_

    from babysit.config import PollSettings, Settings
    from babysit.core.reports import NullObserver
    from babysit.core.session import run_session
    from babysit.targets.common.log_file import LocalLogTarget
    from tests.conftest import FakeClock, artifact_in

    head = "2025-05-14 16:59:24,567 - ResNet_train - INFO - "
    lines = [f"{head}Full configuration: {{'model_type': 'resnet152', 'num_epochs': 25, "
             f"'batch_size': 80, 'lr': 0.05}}"]
    for e in range(1, 12):
        lines += [f"Epoch {e}/25 [Train]: 100%|##########| 1113/1113 [01:00<00:00, 18.5it/s, "
                  f"loss={2 - e / 10:.4f}]",
                  f"{head}Epoch [{e}/25], Training Loss: {2 - e / 10:.4f}, Validation Loss: "
                  f"{1 + abs(e - 8) / 10:.4f}, Accuracy: {40 + e}.00%"]
    lines += [f"{head}Validation loss has not improved for 3 epochs. Stopping training.",
              f"{head}Training finished."]
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=with_(PollSettings(), once=True), out_dir=tmp_path),
                NullObserver(), clock=FakeClock())
    assert artifact_in(tmp_path)["terminal_state"] == "SUCCEEDED"

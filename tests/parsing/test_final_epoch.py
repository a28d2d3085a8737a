"""The outermost counter at its declared total (issue 23, point 4): the last planned epoch,
trained and then printed past (or one record an epoch), is the run's end; an inner
counter's total is not the plan, and a run still inside its last epoch is running."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.final_epoch import FinalEpoch
from tests.rules.test_loss_rules import verdict_of


def _keras(epochs: int, planned: int) -> list[str]:
    lines = []
    for e in range(1, epochs + 1):
        lines += [f"Epoch {e}/{planned}",
                  f"12s - loss: {1 / e:.4f} - acc: 0.9 - val_loss: {1.2 / e:.4f} - val_acc: 0.8"]
    return lines


def _loguru(epochs: int, planned: int, iters: int = 14, every: int = 5) -> list[str]:
    # an inner counter (`iter: 10/14`) inside the outer one (`epoch: 20/20`)
    return [f"2023-01-13 19:49:20.803 | INFO | trainer:after_iter - epoch: {e}/{planned}, "
            f"iter: {i}/{iters}, total_loss: {9 / (e + i / iters):.3f}"
            for e in range(1, epochs + 1) for i in range(every, iters + 1, every)]


def test_the_last_planned_epoch_of_one_record_each_ends_the_run(tmp_path: Path):
    verdict = verdict_of(tmp_path, _keras(15, 15))
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_an_epoch_short_of_the_plan_is_running(tmp_path: Path):
    assert verdict_of(tmp_path, _keras(14, 15))["terminal_state"] == "RUNNING"


def test_the_last_epoch_printed_past_ends_the_run_whatever_the_inner_counter(tmp_path: Path):
    lines = [*_loguru(20, 20), "Evaluate in main process...",
             "Average Precision (AP) @[ IoU=0.50:0.95 ] = 0.91"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_a_run_inside_its_last_epoch_is_running(tmp_path: Path):
    # several records an epoch, nothing printed past the last one: it may go on
    assert verdict_of(tmp_path, _loguru(20, 20))["terminal_state"] == "RUNNING"


def test_a_bracketed_header_counts_like_keras():
    final = FinalEpoch()
    for epoch in (195, 196, 197, 198, 199):
        final.counted(epoch, 199)  # `=== EPOCH 199/199 ===`, then two records
        final.trained()
        final.trained()
    assert final.over() is None  # nothing after the last record yet
    final.printed_on("DEVICE : cuda")
    event = final.over()
    assert event is not None and "199 of 199" in event.detail + event.line
    assert final.over() is None  # said once


def test_a_zero_based_counter_ends_one_short_of_its_total():
    final = FinalEpoch()
    for epoch in range(0, 100):
        final.counted(epoch, 100)  # `Epoch: [99/100]` after `Epoch: [0/100]`
        final.trained()
        final.trained()
    final.printed_on("Averaged stats: loss: 3.58")
    assert final.over() is not None


def test_a_run_in_its_only_epoch_is_not_over_when_it_prints_something_else():
    final = FinalEpoch()
    final.counted(1, 1)  # `Beginning of Epoch 1/1`
    final.trained()
    final.printed_on("[rank3] step 20: loss 0.61")
    assert final.over() is None


def test_a_last_epoch_short_of_the_records_of_the_one_before_is_not_over():
    final = FinalEpoch()
    for epoch, records in ((1, 20), (2, 20), (3, 7)):
        final.counted(epoch, 3)
        for _ in range(records):
            final.trained()
    final.printed_on("Evaluating ...")  # a periodic evaluation inside the epoch
    assert final.over() is None
    for _ in range(13):
        final.trained()
    final.printed_on("Evaluating ...")
    assert final.over() is not None


def test_a_bar_part_way_through_the_last_epoch_is_running(tmp_path: Path):
    # Keras `verbose=1`: one bar line an epoch, and the last epoch's bar at 37/100
    lines = []
    for e in range(1, 10):
        lines += [f"Epoch {e}/10", f"100/100 [==============================] - 5s 50ms/step - "
                  f"loss: {1 / e:.4f} - accuracy: 0.9 - val_loss: {1.1 / e:.4f}"]
    lines += ["Epoch 10/10",
              " 37/100 [==========>...................] - ETA: 3s - loss: 0.1020"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"
    lines[-1] = ("100/100 [==============================] - 5s 50ms/step - loss: 0.0990 - "
                 "accuracy: 0.9 - val_loss: 0.1100")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def _evaluated_epochs(first: int, last: int, planned: int, evals: list[str]) -> list[str]:
    # a run that prints its own step, and after each epoch its evaluation under the epoch's
    # counter but without a step (`Epoch: 19/20,top 1 acc: 0.26`)
    lines, step = [], 0
    for epoch in range(first, last + 1):
        for _ in range(3):
            step += 1300
            lines.append(f"INFO: Epoch: {epoch}/{planned}, Iteration step: {step}, "
                         f"loss: {5 / (1 + step / 10000):.4f}")
        lines += [f"=====Epoch: {epoch}/{planned},{name}: 0.{epoch + 10}=====" for name in evals]
    return lines


def test_an_evaluation_under_the_last_epochs_counter_is_printed_past_it(tmp_path: Path):
    for evals in (["top 1 acc", "top 5 acc"], ["val_acc"], ["mAP"]):
        verdict = verdict_of(tmp_path, _evaluated_epochs(0, 19, 20, evals))
        assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED"), evals


def test_an_evaluation_under_an_earlier_epochs_counter_is_running(tmp_path: Path):
    verdict = verdict_of(tmp_path, _evaluated_epochs(0, 18, 20, ["top 1 acc"]))
    assert verdict["terminal_state"] == "RUNNING"



def _bars(epochs: int, planned: int, batches: int = 8, last: int | None = None) -> list[str]:
    # a tqdm bar per epoch, its description the outer counter, redrawn in place
    lines = []
    for e in range(1, epochs + 1):
        end = batches if e < epochs or last is None else last
        lines.append("\r".join(
            f"Epoch {e}/{planned}:: {100 * b // batches:3d}%|####| {b}/{batches} "
            f"[00:{b:02d}<00:01, 1.2s/batch, loss={2 / (e + b / batches):.4f}]"
            for b in range(1, end + 1)))
    return lines


def test_the_last_batch_of_the_last_epoch_ends_the_run(tmp_path: Path):
    # the inner counter at its total in the last planned epoch: nothing need follow
    assert verdict_of(tmp_path, _loguru(20, 20, every=7))["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _bars(12, 12))["terminal_state"] == "SUCCEEDED"


def test_the_last_epoch_short_of_its_last_batch_is_running(tmp_path: Path):
    assert verdict_of(tmp_path, _bars(12, 12, last=6))["terminal_state"] == "RUNNING"
    assert verdict_of(tmp_path, _loguru(20, 20, iters=15, every=7))["terminal_state"] \
        == "RUNNING"


def test_the_last_batch_of_an_earlier_epoch_is_no_end(tmp_path: Path):
    assert verdict_of(tmp_path, _bars(11, 12))["terminal_state"] == "RUNNING"
    assert verdict_of(tmp_path, _bars(11, 12, batches=5))["terminal_state"] == "RUNNING"


def test_an_inner_counter_at_its_total_is_said_of_the_last_record_only():
    final = FinalEpoch()
    for epoch in (1, 2, 3):
        for batch in (5, 10):
            final.new_line(batch < 10, batch == 10)
            final.counted(epoch, 3, trains=True)
    assert final.over() is not None
    final = FinalEpoch()
    for epoch in (1, 2, 3):
        for batch in (10, 5):  # the last record is part-way (a new pass began)
            final.new_line(batch < 10, batch == 10)
            final.counted(epoch, 3, trains=True)
    assert final.over() is None

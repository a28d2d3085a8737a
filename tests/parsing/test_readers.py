"""The readers behind LogParser's seams (parsing/readers.py): each asked only about the
lines it wants, each keeping its own state; and the small readers moved out of the
parser (headers, the run's plan, a line's facts, the text's formats), on their own."""

from __future__ import annotations

from collections import Counter

import pytest

from babysit.model import EventKind, Record
from babysit.parsing.bar_steps import BarSteps
from babysit.parsing.evaluation import trains
from babysit.parsing.facts import FactsReader
from babysit.parsing.final_epoch import FinalEpoch
from babysit.parsing.headers import HeaderReader
from babysit.parsing.metric_lines import MetricLineReader
from babysit.parsing.nonfinite_words import NonFiniteWords
from babysit.parsing.parser import LogParser
from babysit.parsing.plan import RunPlan, saved_step, target_in
from babysit.parsing.readers import Line
from babysit.parsing.shapes import ShapeReader
from babysit.parsing.stray_values import StrayNonFinite


class _Context:
    def __init__(self, step: int | None = None, target: int | None = None) -> None:
        self.step = step
        self.target = target


def test_a_metric_line_is_wanted_by_no_record_reader() -> None:
    line = Line("{'loss': 2.1, 'grad_norm': 0.87, 'epoch': 0.02}", None, False)
    assert not NonFiniteWords().wants(line)
    assert not StrayNonFinite(ShapeReader()).wants(line)
    assert not FactsReader().wants(line)


def test_a_sentence_about_a_nan_loss_gives_the_loss_at_its_step() -> None:
    reader, context = NonFiniteWords(), _Context(step=10, target=100)
    line = Line("FloatingPointError: Loss became infinite or NaN at iteration=12!", 2, False)
    assert reader.wants(line)
    record = reader.amend(line, None, context)
    assert record is not None and line.claimed
    assert record.step == 12 and context.step == 12 and record.rank == 2
    assert [e.kind for e in record.events] == [EventKind.EXCEPTION]
    assert reader.guarding  # said again after the bar's last redraw


def test_a_guard_stop_is_said_again_on_the_next_record_with_a_step() -> None:
    reader = NonFiniteWords()
    stop = Line("Batch 3: Invalid loss, terminating training", None, False)
    said = reader.amend(stop, None, _Context(step=3))
    assert said is not None
    redraw = reader.after_guard(Record(step=4, metrics={"loss": float("inf")}))
    assert redraw is not None and said.events[0] in redraw.events and not reader.guarding


def test_a_header_line_is_claimed_with_the_epoch_it_opens() -> None:
    bars, formats = BarSteps(), Counter[str]()
    reader = HeaderReader(bars, FinalEpoch(), formats)
    line = Line("Epoch 3/10", None, False)
    assert reader.wants(line)
    record = reader.read(line, _Context(step=40))
    assert line.claimed and record is not None
    # Epochs done when the third begins: where its bars' `2 + n/total` start.
    assert (record.epoch, record.total_epochs, record.step) == (2.0, 10, 40)
    assert formats["keras"] == 1 and bars.keras_epoch is not None


def test_a_hand_written_epoch_header_is_left_to_the_other_readers() -> None:
    bars = BarSteps()
    reader = HeaderReader(bars, FinalEpoch(), Counter())
    line = Line("Epoch 4", None, False)
    assert reader.read(line, _Context()) is None and not line.claimed
    assert bars.epoch_hint == 4


def test_the_plan_a_header_announces() -> None:
    plan = RunPlan()
    assert plan.read("  Total optimization steps = 1,200", parsed=False) == 1200
    assert plan.announced == 1200
    assert plan.read("lr_scheduler_type: cosine", parsed=False) is None
    assert plan.lr_schedule == "cosine"
    assert plan.read("gradient_accumulation_steps=4", parsed=False) is None
    assert plan.accumulation == 4
    assert target_in("max_steps=0") is None


def test_a_plan_said_in_words_is_the_planned_total():
    # sealed-3/emcad_pvt_tom500_12500_of_12500_iters_val_dice_near_zero.log: `125 iterations
    # per epoch. 12500 max iterations`; an evaluation's count is no plan.
    assert target_in("125 iterations per epoch. 12500 max iterations ") == 12500
    assert target_in("Max iterations: 12500") == 12500
    assert target_in("maximum number of steps = 5,000") == 5000
    assert target_in("100 test iterations per epoch") is None
    assert saved_step("Saving model checkpoint to out/checkpoint-3048") == 3048


def test_a_header_lines_facts_go_to_its_own_record() -> None:
    reader = FactsReader()
    reader.configured('"vocab_size": 32000')
    line = Line('"vocab_size": 32000', None, False)
    assert reader.wants(line)
    record = reader.amend(line, None, _Context(step=5))
    assert record is not None and record.facts and record.step == 5
    assert not reader.wants(line)  # given once
    assert reader.facts == record.facts


def test_the_format_that_matched_last_is_tried_first() -> None:
    reader = MetricLineReader(ShapeReader(), RunPlan())
    first = reader.read(Line("{'loss': 2.5, 'epoch': 0.1}", None, False), False, [])
    again = reader.read(Line("{'loss': 2.4, 'epoch': 0.2}", None, False), False, [])
    assert first is not None and again is not None
    assert first.fmt == again.fmt == "hf-trainer" and again.metrics == {"loss": 2.4}


def test_the_parser_runs_its_readers_in_order_and_only_on_wanted_lines() -> None:
    calls: list[str] = []

    class Recording:
        def __init__(self, name: str, wanted: bool) -> None:
            self.name, self.wanted = name, wanted

        def wants(self, line: Line) -> bool:
            return self.wanted

        def amend(self, line: Line, record: Record | None, context: object) -> Record | None:
            calls.append(self.name)
            return record

    parser = LogParser()
    parser._record_readers = (Recording("first", True), Recording("skipped", False),
                              Recording("second", True))
    parser.feed("step 5 loss 2.0")
    assert calls == ["first", "second"]


@pytest.mark.parametrize("line", ["Test Accuracy: 89.86  Loss: 0.3443",
                                  "Validation Loss = 0.41, Accuracy = 0.88"])
def test_a_line_whose_first_field_is_an_evaluations_is_all_evaluation(line: str):
    # SambaFlow's workers each print `Test Accuracy: 89.86  Loss: 0.3443` (sealed-7): the
    # loss beside the test accuracy is the test pass's, not a training loss.
    [record] = LogParser().feed_lines([line])
    assert not trains(record.metrics), record.metrics


def test_a_training_field_beside_an_evaluation_one_stays_the_trainings():
    [record] = LogParser().feed_lines(["Validation Accuracy: 0.9, Train Loss: 0.3"])
    assert record.metrics["train_loss"] == 0.3


@pytest.mark.parametrize("banner", ["Epoch 3", "EPOCH 3", "==== Epoch 3 ====", "Epoch: 3",
                                    "################### EPOCH 3 #####################",
                                    "----- epoch 3 -----"])
def test_an_epoch_header_gives_the_lines_under_it_their_epoch(banner: str):
    # sonnet's transfer-learning script (sealed-7) prints `#### EPOCH 3 ####`, then
    # `TRAIN CROSS ENTROPY: 0.0696` with no counter of its own.
    lines = [banner, "TRAIN CROSS ENTROPY: 0.47", "VALID CROSS ENTROPY: 0.53"]
    assert [r.epoch for r in LogParser().feed_lines(lines)] == [3.0, 3.0]


def test_keras_own_epoch_count_wins_over_an_outer_epoch_header():
    # deep-learning-with-python's char-LSTM notebook (sealed-5): `epoch 56`, then Keras
    # `Epoch 1/1` of a `fit` called once per outer epoch.
    lines = ["epoch 56", "Epoch 1/1",
             "200278/200278 [==============================] - 125s - loss: 1.5978"]
    assert [r.epoch for r in LogParser().feed_lines(lines) if r.metrics] != [56.0]


def test_a_shorter_pass_of_the_progress_bar_is_the_evaluations():
    # pytorch-pose with the `progress` package's Bar (sealed-8): the epoch's training pass
    # `(3708/3708)`, then the validation pass `(493/493)`, same names on both.
    lines = []
    for epoch, (train, val) in enumerate([(0.0035, 0.3065), (0.0035, 1.0547)], 18):
        lines += [f"Processing |################################| (3708/3708) Data: 0.000220s "
                  f"| Batch: 0.276s | Total: 0:20:24 | ETA: 0:00:01 | Loss: {train:.4f} | "
                  f"Acc:  0.7525",
                  f"Processing |################################| (493/493) Data: 0.000082s | "
                  f"Batch: 0.136s | Total: 0:01:06 | ETA: 0:00:01 | Loss: {val:.4f} | "
                  f"Acc:  0.0000", "", f"Epoch: {epoch + 1} | LR: 0.00025000"]
    records = LogParser().feed_lines(lines)
    assert [r.metrics["loss"] for r in records if "loss" in r.metrics] == [0.0035, 0.0035]
    assert [r.metrics["eval/loss"] for r in records if "eval/loss" in r.metrics] \
        == [0.3065, 1.0547]

"""The generic readers against a grammar of training-log lines (issue 23, items 1–3).

Each example is a run of 30–60 training lines composed from independent choices
(`shape_grammar`): a logger's prefix, a counter, the loss's name in some style, a
second metric, how names are joined to values and fields set apart, how values are
spelled, evaluation lines now and then, prose with numbers between. The readers must
recover the training loss under the log's name with its values, the step where the line
has one, keep an evaluation's value out of the training loss, report a non-finite value
at its line, and never make a record of prose. A failure names the lines it made.

Deterministic (`derandomize=True`): CI sees the same examples every run.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.parsing.shape_grammar import (
    COUNTERS,
    EVAL_STYLES,
    JOINS,
    LOSS_NAMES,
    NON_FINITE,
    OTHER_NAMES,
    PREFIXES,
    SEPARATORS,
    VALUE_STYLES,
    Shape,
    build,
    problems,
)


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    counter, gives = draw(st.sampled_from(COUNTERS))
    lines = draw(st.integers(30, 60))
    nonfinite_at = draw(st.none() | st.integers(10, lines - 1))
    return Shape(
        prefix=draw(st.sampled_from(PREFIXES)), counter=counter, gives=gives,
        loss_name=draw(st.sampled_from(LOSS_NAMES)),
        other_name=draw(st.none() | st.sampled_from(OTHER_NAMES)),
        join=draw(st.sampled_from(JOINS)), sep=draw(st.sampled_from(SEPARATORS)),
        style=draw(st.sampled_from(VALUE_STYLES)), eval_style=draw(st.sampled_from(EVAL_STYLES)),
        eval_every=draw(st.integers(3, 10)), prose_every=draw(st.sampled_from((0, 4, 7))),
        lines=lines, nonfinite_at=nonfinite_at, nonfinite_token=draw(st.sampled_from(NON_FINITE)),
        nonfinite_in_loss=draw(st.booleans()))


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=300)
@given(shapes())
def test_the_generic_readers_read_every_shape_of_the_grammar(shape: Shape):
    """Three hundred generated runs, each read whole by babysit (about 13 s)."""
    run = build(shape)
    found = problems(shape, run)
    assert not found, "\n".join(found[:6]) + "\n--- the run's first lines:\n" + "\n".join(
        run.lines[:6])


# Lines of the grammar as the unit tests before it quote real logs: one of each class a
# reader was widened for, with what a user sees.

def _records(lines: list[str]):
    from babysit.parsing.parser import LogParser

    parser = LogParser()
    return parser, [parser.feed(line) for line in lines]


def test_a_logger_head_is_no_metric_and_no_longer_hides_a_line_of_fields():
    # `| INFO |` made the fields reader give up; `INFO train.py:55` was a metric
    # `info_train.py` = 55 (the shape of python logging's `%(filename)s:%(lineno)d`).
    _, records = _records([
        "2024-03-01 12:00:00,123 | INFO | step 1 | rmse 2.500e+00",
        "[2024-03-01 12:00:01] INFO train.py:55 - Epoch 2 | train/loss "
        "tensor(2.4350, device='cuda:0') | lr 0.0010",
    ])
    assert records[0] is not None and records[0].step == 1
    assert records[0].metrics == {"rmse": 2.5}
    assert records[1] is not None and records[1].metrics == {"train/loss": 2.435, "lr": 0.001}


def test_a_bare_leading_counter_is_the_step():
    # `[4/500] | loss: 2.28`: the loop prints its step bare, with the planned total
    parser, records = _records([f"I0301 12:00:0{i}.123 123 f.py:55] [{i}/500] | loss: "
                                f"{2.3 - i / 10:.3f} | top1: 0.3" for i in range(1, 5)])
    assert [r.step for r in records if r is not None] == [1, 2, 3, 4]
    assert records[-1] is not None and records[-1].target_steps == 500
    assert parser.progress_unit == "step"


def test_a_bare_counter_that_comes_round_again_counts_an_epochs_batches():
    # MONAI's tutorial loop (sealed/monai_fast_training_epoch_step_dice_running.log):
    # `epoch 14/300`, then `1/16, train_loss: 0.1162 step time: 0.9368` … `16/16, …`, and
    # `1/16` again in the next epoch: steps keep rising, never back to 1
    lines = []
    for epoch in (14, 15):
        lines.append(f"epoch {epoch}/300")
        lines += [f"{i}/16, train_loss: 0.{1100 + i} step time: 0.93" for i in range(1, 17)]
    _, records = _records(lines)
    steps = [r.step for r in records if r is not None and r.metrics]
    assert steps == list(range(1, 33))


def test_a_bare_count_is_the_step_once_it_rises_and_a_label_when_it_stays():
    _, counted = _records([f"{i}: loss_total: {2.0 - i / 10:.2f}" for i in range(1, 5)])
    assert [r.step for r in counted if r is not None] == [1, 2, 3, 4]
    # `srun -l`: the same `0:` on every line is a task's label, never a step of 0
    parser, labelled = _records([f"0: loss: {2.0 - i / 10:.2f}" for i in range(1, 6)])
    assert all(r is None or r.step != 0 for r in labelled)


def test_an_epoch_batch_pair_is_placed_in_the_run():
    # the GAN log of sealed-4 (`gan_image_generator_slurm_…`): only `epoch=` and
    # `batch= [n/N]` with a time, printed every 50 batches
    parser, records = _records([
        "GAN training: time elapsed = 1.62 [s] | epoch=1 | batch= [1/3503]",
        "GAN training: time elapsed = 51.26 [s] | epoch=1 | batch= [51/3503]",
        "GAN training: time elapsed = 100.84 [s] | epoch=1 | batch= [101/3503]",
        "GAN training: time elapsed = 150.51 [s] | epoch=1 | batch= [151/3503]",
    ])
    steps = [r.step for r in records if r is not None and r.step is not None]
    assert steps and steps == sorted(steps) and steps[-1] == 151
    assert parser.progress_unit == "step"


def test_an_evaluation_head_set_apart_as_a_field_is_an_evaluation():
    _, records = _records([
        "step 9, loss: 1.979, acc: 0.38",
        "Evaluation, loss: 7.0080",
        "step 10, loss: 1.901, acc: 0.39",
        "train.py:55 - Validation: loss 7.0130",
        "2024-03-01 12:00:13,123 [eval] loss: 7.0200",
    ])
    for record in records[1::2] + records[4:]:
        assert record is not None and "loss" not in record.metrics, record


def test_short_measure_names_count_only_beside_a_counter():
    # `mae`, `xent`, `top1` carry no hint of a metric; with a step they are the run's
    # measures, without one a summary after the run's end stays unread as training
    _, records = _records(["iter 35 - mae=0.8975 - top1=0.41", "Final avg. MSE: 89.0",
                           "Loaded 5 files in 3.2 s"])
    assert records[0] is not None and records[0].metrics == {"mae": 0.8975, "top1": 0.41}
    assert records[1] is None or not records[1].metrics
    assert records[2] is None or not records[2].metrics


def test_a_nan_in_a_grammar_run_is_the_verdicts_nan_inf(tmp_path: Path):
    """The whole `watch --once`: a run of the grammar whose loss turns NaN is NO-GO with
    nan-inf at the line's step; the same run without it raises no high alarm."""
    from babysit.config import PollSettings, Settings
    from babysit.core.reports import NullObserver
    from babysit.core.session import run_session
    from babysit.targets.common.log_file import LocalLogTarget
    from tests.conftest import FakeClock, artifact_in

    shape = Shape(prefix="2024-03-01 12:00:{s:02d},123 | INFO | ", counter="[{n}/{m}]",
                  gives="step", loss_name="xent", other_name="top1", join=" ", sep="  ",
                  style="sci", eval_style="Evaluation{sep}loss{join}{v}", eval_every=5,
                  prose_every=7, lines=40, nonfinite_at=30, nonfinite_token="nan",
                  nonfinite_in_loss=True)
    verdicts = {}
    for name, case in (("nan", shape), ("healthy", replace(shape, nonfinite_at=None))):
        log = tmp_path / f"{name}.log"
        log.write_text("\n".join(build(case).lines) + "\n")
        out = tmp_path / name
        run_session(lambda log=log: LocalLogTarget(log), str(log), "local-log",
                    Settings(poll=replace(PollSettings(), once=True), out_dir=out),
                    NullObserver(), clock=FakeClock())
        verdicts[name] = artifact_in(out)
    nan = verdicts["nan"]
    assert nan["decision"] == "NO-GO", json.dumps(nan["anomalies_detected"])
    assert any(a["type"] == "nan-inf" and a["step"] == 31 for a in nan["anomalies_detected"])
    healthy = verdicts["healthy"]
    assert healthy["decision"] != "NO-GO", healthy["summary"]
    assert not [a for a in healthy["anomalies_detected"] if a["severity"] in ("high", "blocker")]
    assert healthy["total_steps"] == 40

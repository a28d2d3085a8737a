"""A NaN said in words (issue 23): the sentence names the metric and the step."""

from __future__ import annotations

import math

import pytest

from babysit.model import EventKind
from babysit.parsing.nonfinite_words import (
    GUARD_STOP,
    RAISED_STOP,
    SKIPS_IN_A_ROW,
    NonFiniteWords,
    said_non_finite,
    stops_training,
)
from babysit.parsing.parser import LogParser


@pytest.mark.parametrize(("line", "expected"), [
    # detectron2 engine/train_loop.py `_write_metrics`
    ("FloatingPointError: Loss became infinite or NaN at iteration=12!", ("loss", 12, False)),
    # fairseq trainer.py (`FloatingPointError("gradients are Nan/Inf")`)
    ("FloatingPointError: gradients are Nan/Inf", ("grad_norm", None, False)),
    # SpeechBrain core.py `check_loss_isfinite`
    ("ValueError: Loss is not finite and patience is exhausted. To debug, wrap `fit()` with "
     "autograd's `detect_anomaly()`, e.g.", ("loss", None, False)),
    # torch.autograd anomaly mode
    ("RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.",
     ("grad_norm", None, False)),
    # tensorboardX summary.py, on logging a non-finite scalar
    ("Warning: NaN or Inf found in input tensor.", ("input_tensor", None, False)),
    ("nan or inf in input tensor", ("input_tensor", None, False)),
    # TensorFlow's check_numerics / summary ops
    ("InvalidArgumentError: Nan in summary histogram for: layer1/weights",
     ("layer1/weights", None, False)),
    # ESPnet2 trainer.py: a skipped update, not yet a NaN run
    ("The grad norm is nan. Skipping updating the model.", ("grad_norm", None, True)),
])
def test_sentences_that_say_a_value_is_non_finite(line: str, expected: tuple):
    assert said_non_finite(line) == expected


@pytest.mark.parametrize("line", [
    "  if loss is nan:", "detect_anomaly: False", "Setting check_nan=True", "grad_norm: inf",
    "The loss is finite again", "loss scale is inf", "Is the loss nan?",
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
])
def test_code_settings_and_fp16_overflow_are_no_nan(line: str):
    assert said_non_finite(line) is None


def test_a_skip_is_a_nan_only_when_it_repeats_with_no_training_in_between():
    words = NonFiniteWords()
    skip = "The grad norm is nan. Skipping updating the model."
    assert [words.read(skip) for _ in range(SKIPS_IN_A_ROW - 1)] == [None] * (SKIPS_IN_A_ROW - 1)
    words.trained()
    assert words.read(skip) is None
    for _ in range(SKIPS_IN_A_ROW - 2):
        words.read(skip)
    said = words.read(skip)
    assert said is not None and math.isnan(said[0]["grad_norm"])


def test_the_parser_places_a_said_nan_at_the_step_it_names():
    parser = LogParser()
    lines = [f"[12/01 10:00:{i:02d} d2.utils.events]:  eta: 0:10:00  iter: {i}  total_loss: 1.2"
             f"  lr: 0.0001" for i in range(0, 10)]
    lines += ["Traceback (most recent call last):", '  File "train_net.py", line 9, in <module>',
              "FloatingPointError: Loss became infinite or NaN at iteration=11!"]
    records = parser.feed_lines(lines)
    bad = [r for r in records if any(not math.isfinite(v) for v in r.metrics.values())]
    assert bad and bad[0].step == 11 and math.isnan(bad[0].metrics["loss"])


@pytest.mark.parametrize(("line", "expected"), [
    # TensorFlow 1.x/Estimator basic_session_run_hooks.NanTensorHook (fail_on_nan_loss)
    ("tensorflow.python.training.basic_session_run_hooks.NanLossDuringTrainingError: NaN loss "
     "during training.", ("loss", None, False)),
    ("NanLossDuringTrainingError", ("loss", None, False)),
    # the same hook's log line before it raises
    ("ERROR:tensorflow:Model diverged with loss = NaN.", ("loss", None, False)),
    # tf.debugging.check_numerics(loss, "Checking loss")
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Checking loss : Tensor "
     "had NaN values [Op:CheckNumerics]", ("loss", None, False)),
    # JAX with jax_debug_nans
    ("jax._src.errors.FloatingPointError: invalid value (nan) encountered in mul",
     ("loss", None, False)),
    # a hand loop's own guard: `raise RuntimeError(f"loss diverged at step {i} ...")`
    ("RuntimeError: loss diverged at step 300 (loss=inf)", ("loss", 300, False)),
])
def test_exceptions_that_say_nan_in_their_name_or_message(line: str, expected: tuple):
    assert said_non_finite(line) == expected


@pytest.mark.parametrize("line", ["KeyError: inf", "ValueError: check_nan: True",
                                  "TypeError: unsupported operand type(s)"])
def test_exceptions_about_something_else_are_no_nan(line: str):
    assert said_non_finite(line) is None


def test_a_tensorflow_nan_hook_makes_the_loss_nan_at_the_last_step():
    # TF 1.x Estimator: `INFO:tensorflow:loss = …, step = N` then the NanTensorHook's error.
    lines = ["INFO:tensorflow:loss = 0.6931, step = 1",
             "INFO:tensorflow:loss = 0.51, step = 101 (0.3 sec)",
             "Traceback (most recent call last):",
             '  File "train.py", line 40, in <module>',
             "    estimator.train(input_fn, steps=1000)",
             "tensorflow.python.training.basic_session_run_hooks.NanLossDuringTrainingError: "
             "NaN loss during training."]
    records = LogParser().feed_lines(lines)
    bad = [r for r in records if any(not math.isfinite(v) for v in r.metrics.values())]
    assert bad and bad[0].step == 101 and math.isnan(bad[0].metrics["loss"])


@pytest.mark.parametrize(("line", "expected"), [
    # the adjective form, said by a hand loop that skips the batch
    ("[WARN] NaN loss detected! Skipping batch.", ("loss", None, True)),
    ("step 812: inf grad norm, update skipped", ("grad_norm", 812, True)),
    # Keras' and fastai's TerminateOnNaN say "invalid" for a NaN or Inf loss
    ("Batch 17: Invalid loss, terminating training", ("loss", None, False)),
    ("Epoch/Batch (0/6930): Invalid loss, terminating training.", ("loss", None, False)),
    # ESPnet2 trainer: every update of the epoch had a non-finite gradient
    ("(trainer:404) WARNING: The gradients at all steps are invalid in this epoch.",
     ("grad_norm", None, False)),
    # Lightning EarlyStopping(check_finite=True)
    ("Monitored metric val_loss = nan is not finite. Previous best value was inf. Signaling "
     "Trainer to stop.", ("val_loss", None, False)),
])
def test_guards_and_skips_said_in_other_words(line: str, expected: tuple):
    assert said_non_finite(line) == expected


@pytest.mark.parametrize("line", [
    # a data error fails as a crash of its own; it is no value of the training
    "ValueError: Input contains NaN, infinity or a value too large for dtype('float64').",
    "ValueError: Input X contains NaN.",
    "ValueError: array must not contain infs or NaNs",
    # a setting or a loss function that is invalid
    "ValueError: Invalid loss function: focal2", "Invalid loss type 'l3'",
])
def test_data_errors_and_invalid_settings_are_no_nan(line: str):
    assert said_non_finite(line) is None


@pytest.mark.parametrize(("line", "stop"), [
    ("Batch 17: Invalid loss, terminating training", GUARD_STOP),
    ("This training was stopped at 2epoch", GUARD_STOP),
    ("Monitored metric val_loss = nan is not finite. Signaling Trainer to stop.", GUARD_STOP),
    ("ERROR:tensorflow:Model diverged with loss = NaN.", RAISED_STOP),
    ("INFO:tensorflow:Error reported to Coordinator: <class 'InvalidArgumentError'>, "
     "LossTensor is inf or nan.", RAISED_STOP),
    ("NanLossDuringTrainingError: NaN loss during training.", RAISED_STOP),
    ("[WARN] NaN loss detected! Skipping batch.", None),
    ("The grad norm is nan. Skipping updating the model.", None),
    ("UserWarning: NaN detected in loss, the batch is skipped", None),
])
def test_a_guard_that_ends_training_says_so(line: str, stop: str | None):
    assert stops_training(line) == stop


def test_a_nan_loss_skip_counts_at_once_a_gradient_skip_only_when_it_repeats():
    words = NonFiniteWords()
    said = words.read("[WARN] NaN loss detected! Skipping batch.")
    assert said is not None and math.isnan(said[0]["loss"])
    assert words.read("nan gradients: skipping this update") is None


def test_a_guard_stop_fails_the_run_even_after_the_bar_redraws_its_batch():
    lines = ["Epoch 1/3",
             "  2/50 [>.............................] - ETA: 9:12 - loss: 3.1021",
             "  3/50 [>.............................] - ETA: 9:02 - loss: 2.9410Batch 3: "
             "Invalid loss, terminating training",
             "  4/50 [==>...........................] - ETA: 8:50 - loss: nan"]
    records = LogParser().feed_lines(lines)
    stops = [(r.step, e.kind) for r in records for e in r.events
             if e.kind is EventKind.EXCEPTION]
    assert stops and stops[-1][0] == 4  # said again after the bar's last step
    assert any(math.isnan(v) for r in records for v in r.metrics.values())


def test_the_history_scan_finds_a_nan_said_without_a_nan_token(tmp_path):
    from babysit.targets.common.log_file import LocalLogTarget

    lines = [f"step {i} | loss {2.0 - i * 1e-4:.4f} | lr 3e-4" for i in range(1, 400)]
    lines[100] = "Epoch/Batch (0/100): Invalid loss, terminating training."
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    target = LocalLogTarget(log, tail_bytes=2048)
    records = target.poll(final=True).log.records
    target.close()
    assert any(math.isnan(v) for r in records for v in r.metrics.values())


@pytest.mark.parametrize("line", ["NaN detected", "nan found!", "[train] NaN encountered.",
                                  "INF detected"])
def test_a_guard_that_reports_a_nan_naming_no_value_is_reported(line: str):
    # A Theano loop's guard (vse, sealed-7): its last line, `NaN detected`.
    assert said_non_finite(line) == ("loss", None, False)


@pytest.mark.parametrize("line", ["no NaN detected so far", "Checking for NaN detected issues",
                                  "if nan detected: break"])
def test_prose_about_a_nan_that_is_not_a_report_is_not_one(line: str):
    assert said_non_finite(line) is None


def _stops(lines: list[str]) -> list[str]:
    records = LogParser().feed_lines(lines)
    return [e.detail for r in records for e in r.events if e.kind is EventKind.EXCEPTION]


def test_a_stop_said_right_after_a_nan_value_is_the_guard_that_stopped_on_it():
    # A Keras custom loop's own guard (speech-recognition-primer, sealed-7): it names the
    # value in its own spelling, so only the stop right after the NaN says what it is.
    lines = ["Epoch    :  7", "LOSS     :  29.43734", "Epoch    :  8", "LOSS     :  nan",
             "Loss got n a n, training suspends.."]
    assert [d.split(":")[0] for d in _stops(lines)] == [GUARD_STOP]


def test_a_stop_after_finite_values_is_no_nan_guard():
    lines = ["Epoch    :  7", "LOSS     :  29.43734", "Training suspends for maintenance"]
    assert _stops(lines) == []


def test_a_bare_guard_report_stops_the_run_unless_training_goes_on():
    # vse (Theano, sealed-7): `NaN detected` is the guard's last word before it returns.
    head = ["Epoch  2 Update  540 Cost  11.716671 UD  0.462770938873",
            "Epoch  2 Update  550 Cost  25.91058 UD  0.57851600647"]
    assert [d.split(":")[0] for d in _stops([*head, "NaN detected"])] == [GUARD_STOP]


@pytest.mark.parametrize("line", [
    # DifferentialEquations.jl's `initdt` warning inside a neural-ODE loss, in Julia's
    # boxed logger shape.
    "┌ Warning: First function call produced NaNs. Exiting.",
    "Warning: forward pass produced nan",
    "the model yields inf",
])
def test_a_computation_that_produced_nans_is_the_losss_nan(line: str):
    assert said_non_finite(line) == ("loss", None, False)


@pytest.mark.parametrize("line", ["produced nan: False", "no NaNs produced so far",
                                  "if produced nan: break"])
def test_settings_and_prose_about_produced_nans_are_no_nan(line: str):
    assert said_non_finite(line) is None


def test_a_solver_warning_of_nans_makes_a_running_julia_loop_no_go(tmp_path):
    # LatentDiffEq.jl (sealed-15): `[ Info: Epoch N`, indented `loss:` / `val_loss:`, then
    # the ODE solver's NaN warning; the solver gives up, the loop is not said to stop.
    from tests.rules.test_loss_rules import verdict_of

    lines: list[str] = []
    for epoch in range(1, 6):
        lines += [f"[ Info: Epoch {epoch} .. (Sequence training length 10)",
                  f"  loss:      {30.0 - epoch:.4f}", f"  val_loss:  {31.0 - epoch:.4f}"]
    lines += ["[ Info: Epoch 6 .. (Sequence training length 10)",
              "┌ Warning: First function call produced NaNs. Exiting.",
              "└ @ OrdinaryDiffEq ~/.julia/packages/OrdinaryDiffEq/x/src/initdt.jl:76"]
    data = verdict_of(tmp_path, lines)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "RUNNING")
    assert "nan-inf" in {a["type"] for a in data["anomalies_detected"]}

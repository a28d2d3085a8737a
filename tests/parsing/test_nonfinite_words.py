"""A NaN said in words (issue 23): the sentence names the metric and the step."""

from __future__ import annotations

import math

import pytest

from babysit.parsing.nonfinite_words import SKIPS_IN_A_ROW, NonFiniteWords, said_non_finite
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

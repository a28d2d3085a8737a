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

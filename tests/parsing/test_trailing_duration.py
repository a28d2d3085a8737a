"""A step's duration printed bare in parentheses: NiftyNet's
`INFO:niftynet:2018-02-04 05:22:25,146: Training iter 3151, loss=0.31178414821624756
(3.145937s)` (tests/fixtures/logs/public/sealed-9/, the log
niftynet_tf_training_iter_loss_seconds_per_iter_erratic_3s_to_108s.log)."""

from __future__ import annotations

from babysit.parsing.parser import LogParser
from babysit.parsing.trailing_duration import trailing_seconds

_LINE = ("INFO:niftynet:2018-02-04 05:22:25,146: Training iter 3151, "
         "loss=0.31178414821624756 (3.145937s)")


def test_a_bare_trailing_duration_on_a_training_step_is_its_step_time():
    (record,) = LogParser().feed_lines([_LINE])
    assert record.step == 3151
    assert record.metrics["step_time"] == 3.145937


def test_milliseconds_are_read_as_seconds():
    assert trailing_seconds("step 5, loss=0.3 (812 ms)") == 0.812
    assert trailing_seconds("step 5, loss=0.3 (the 2nd try)") is None


def test_an_epoch_lines_duration_is_not_a_steps():
    records = LogParser().feed_lines(["Epoch 3/10 loss=0.4 (12.5s)"])
    assert all("step_time" not in r.metrics for r in records)

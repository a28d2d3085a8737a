"""A table header written on two lines names each column by both (issue 24): MATLAB's
Deep Learning Toolbox prints (sealed-11's YOLO v2 meal detector; cut here)

    |  Epoch  | … |  Mini-batch  |  Validation  |  Mini-batch  |  Validation  |
    |         | … |     RMSE     |     RMSE     |     Loss     |     Loss     |

so `Validation` is two columns, an RMSE and a loss; read from the first line alone the
loss overwrote the RMSE and the rise of the validation loss was judged under a name
that said neither."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of

_HEADER = [
    "|" + "=" * 118 + "|",
    "|  Epoch  |  Iteration  |  Time Elapsed  |  Mini-batch  |  Validation  |  Mini-batch  "
    "|  Validation  |  Base Learning  |",
    "|         |             |   (hh:mm:ss)   |     RMSE     |     RMSE     |     Loss     "
    "|     Loss     |      Rate       |",
    "|" + "=" * 118 + "|",
]


def _row(epoch: int, train: float, val: float) -> str:
    return (f"|  {epoch:6d} |  {10 * epoch:10d} |       00:48:03 |         0.75 |         1.93 "
            f"|  {train:11.4f} |  {val:11.4f} |          0.0010 |")


def test_each_column_is_named_by_both_lines_of_its_header() -> None:
    records = [r for r in LogParser().feed_lines([*_HEADER, _row(1, 36.4648, 8.3261)])
               if r.metrics]
    assert records[0].metrics == {"mini_batch_rmse": 0.75, "validation_rmse": 1.93,
                                  "mini_batch_loss": 36.4648, "validation_loss": 8.3261,
                                  "base_learning_rate": 0.001}


def test_a_validation_loss_rising_while_the_mini_batch_loss_falls_is_flagged(
        tmp_path: Path) -> None:
    val = [8.33, 2.83, 2.43, 2.55, 2.60, 2.58, 2.70, 2.76, 2.92, 2.92, 3.14, 3.22, 3.40, 3.74]
    rows = [_row(5 * i + 1, 36.5 * 0.7 ** i + 0.15, v) for i, v in enumerate(val)]
    data = verdict_of(tmp_path, [*_HEADER, *rows, "|" + "=" * 118 + "|",
                                 "Detector training complete."])
    assert any(a["type"] == "eval-degradation" for a in data["anomalies_detected"])
    assert data["decision"] != "GO"

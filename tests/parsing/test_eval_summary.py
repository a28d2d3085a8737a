"""A summary line that repeats the names an evaluation pass just printed, before training
moves on, is the evaluation's summary (issue 23, 24): its loss is not a training loss."""

from __future__ import annotations

from babysit.parsing.parser import LogParser


def _records(lines: list[str]) -> list[dict[str, float]]:
    parser = LogParser()
    return [dict(r.metrics) for line in lines for r in parser.feed_lines([line + "\n"])
            if r.metrics]


def test_detr_style_averaged_stats_after_the_test_lines_are_the_evaluations():
    lines = ["Epoch: [9]  [127/128]  eta: 0:00:00  lr: 0.000100  loss: 26.5718 (25.9192)  "
             "loss_bbox: 1.1314 (1.1470)",
             "Averaged stats: lr: 0.000100  loss: 26.5718 (25.9192)  loss_bbox: 1.1314 (1.1470)",
             "Test:  [0/4]  eta: 0:00:05  loss: 48.0006 (48.0006)  loss_bbox: 3.3563 (3.3563)",
             "Test:  [3/4]  eta: 0:00:00  loss: 50.3081 (50.7117)  loss_bbox: 3.5148 (3.7341)",
             "Averaged stats: loss: 50.3081 (50.7117)  loss_bbox: 3.5148 (3.7341)"]
    records = _records(lines)
    assert records[1].get("loss") == 26.5718  # the training epoch's summary stays training
    assert "loss" not in records[-1] and records[-1].get("eval/loss") == 50.3081


def test_a_training_line_after_an_evaluation_is_training_again():
    lines = ["step=100 loss=2.0 acc=0.5",
             "Eval: loss=2.4 acc=0.4",
             "step=200 loss=1.9 acc=0.55",
             "loss=1.85 acc=0.56"]
    records = _records(lines)
    assert records[-1].get("loss") == 1.85

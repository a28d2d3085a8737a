"""Keras `model.fit` progress: the global step across epochs whose batches count from 1
again, the planned total (epochs × batches per epoch), and the time left (`ETA: 1s`,
`1:23`) never taken for a metric. Keras redraws its bar with carriage returns, or with
backspaces in some terminals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from babysit.model import EventKind, Record
from babysit.parsing.parser import LogParser
from babysit.reading.lines import LineSplitter
from tests.forked_cli import python_m_babysit

BAR3 = "━" * 20


def keras3(n: int, total: int, time: str, metrics: str, per: str = "24ms") -> str:
    return f"{n:>{len(str(total))}}/{total} {BAR3} {time} {per}/step - {metrics}"


def keras2(n: int, total: int, metrics: str) -> str:
    done = 30 * n // total
    bar = "=" * done if n == total else "=" * max(done - 1, 0) + ">" + "." * (30 - done)
    width = len(str(total))
    if n == total:
        return f"{n:>{width}}/{total} [{bar}] - 3s 25ms/step - {metrics}"
    return f"{n:>{width}}/{total} [{bar}] - ETA: 1s - {metrics}"


def fit_log(style: str, separator: str = "\r") -> str:
    """Two finished epochs of 100 batches and a third at batch 50, of five."""
    text = ""
    for epoch in (1, 2):
        text += f"Epoch {epoch}/5\n"
        if style == "keras3":
            frames = [keras3(n, 100, "1s", "accuracy: 0.70 - loss: 0.95") for n in (1, 50)]
            frames.append(keras3(100, 100, "3s", "accuracy: 0.71 - loss: 0.93 - "
                                 "val_accuracy: 0.80 - val_loss: 0.61"))
        else:
            frames = [keras2(n, 100, "loss: 0.9500 - accuracy: 0.7000") for n in (1, 50)]
            frames.append(keras2(100, 100, "loss: 0.9300 - accuracy: 0.7100 - "
                                 "val_loss: 0.6100 - val_accuracy: 0.8000"))
        text += separator.join(frames) + "\n"
    text += "Epoch 3/5\n"
    if style == "keras3":
        # A slow epoch: the time left takes minutes (`1:40`), not seconds.
        frames = [keras3(1, 100, "3:18", "accuracy: 0.80 - loss: 0.60", per="2s"),
                  keras3(50, 100, "1:40", "accuracy: 0.82 - loss: 0.55", per="2s")]
    else:
        frames = [keras2(1, 100, "loss: 0.6000 - accuracy: 0.8000").replace("ETA: 1s",
                                                                             "ETA: 1:23"),
                  keras2(50, 100, "loss: 0.5500 - accuracy: 0.8200")]
    return text + separator.join(frames)


def parse_text(text: str) -> tuple[LogParser, list[Record]]:
    """The log as the file reader hands it over: split on newlines and carriage
    returns."""
    splitter = LineSplitter()
    lines = splitter.feed(text.encode()) + splitter.flush()
    parser = LogParser()
    return parser, parser.feed_lines(lines)


def stepped(records: list[Record]) -> list[Record]:
    return [r for r in records if r.fmt == "keras" and r.metrics]


@pytest.mark.parametrize("style", ["keras3", "keras2"])
def test_keras_step_counts_the_batches_of_earlier_epochs(style: str):
    parser, records = parse_text(fit_log(style))
    last = stepped(records)[-1]
    assert (last.step, last.target_steps) == (250, 500)
    assert last.epoch == pytest.approx(2.5)
    assert (parser.step, parser.target) == (250, 500)
    assert [r.step for r in stepped(records)] == [1, 50, 100, 101, 150, 200, 201, 250]


@pytest.mark.parametrize("style", ["keras3", "keras2"])
def test_keras_eta_is_never_recorded_as_a_metric(style: str):
    _, records = parse_text(fit_log(style))
    assert not any("eta" in r.metrics for r in records)
    assert stepped(records)[-1].metrics["loss"] == 0.55
    assert stepped(records)[-1].metrics["accuracy"] == 0.82


@pytest.mark.parametrize("eta", ["1s", "59s", "1:23", "1:02:03"])
def test_keras2_bar_with_its_time_left_is_a_bar_of_the_epoch(eta: str):
    parser = LogParser()
    parser.feed("Epoch 3/5")
    record = parser.feed(f" 50/100 [==============>...............] - ETA: {eta} - "
                         "loss: 0.5500 - accuracy: 0.8200")
    assert record is not None
    assert (record.fmt, record.step, record.target_steps) == ("keras", 250, 500)
    assert record.metrics == {"loss": 0.55, "accuracy": 0.82}


@pytest.mark.parametrize("eta", ["1s", "1:23", "1:02:03"])
def test_keras3_bar_with_its_time_left_is_a_bar_of_the_epoch(eta: str):
    parser = LogParser()
    parser.feed("Epoch 3/5")
    record = parser.feed(f" 50/100 {BAR3} {eta} 24ms/step - accuracy: 0.8200 - loss: 0.5500")
    assert record is not None
    assert (record.fmt, record.step, record.target_steps) == ("keras", 250, 500)
    assert set(record.metrics) == {"accuracy", "loss", "it/s"}


def test_keras_eta_written_as_a_pair_is_not_a_metric():
    parser = LogParser()
    parser.feed("Epoch 1/2")
    record = parser.feed(f" 5/10 {BAR3} 1s 24ms/step - eta: 1s - loss: 0.5000")
    assert record is not None and record.step == 5
    assert "eta" not in record.metrics


def test_eta_in_a_key_value_line_is_not_a_metric():
    record = LogParser().feed("step 5/10 | loss: 0.5 | eta: 12")
    assert record is not None and record.step == 5
    assert record.metrics == {"loss": 0.5}


def test_keras2_frames_redrawn_with_backspaces_read_as_the_last_frame():
    frames = [keras2(n, 100, f"loss: 0.{60 - n // 10:02d}00 - accuracy: 0.8200")
              for n in (48, 49, 50)]
    line = "".join(frame + "\b" * len(frame) for frame in frames[:-1]) + frames[-1]
    parser = LogParser()
    parser.feed("Epoch 3/5")
    record = parser.feed(line)
    assert record is not None
    assert (record.fmt, record.step, record.target_steps) == ("keras", 250, 500)
    assert record.metrics == {"loss": 0.55, "accuracy": 0.82}


def test_keras2_backspaced_log_gives_the_same_steps_as_the_carriage_returned_one():
    _, by_return = parse_text(fit_log("keras2", "\r"))
    _, by_backspace = parse_text(fit_log("keras2", "\b" * 90))
    assert stepped(by_backspace)[-1].step == stepped(by_return)[-1].step == 250
    assert stepped(by_backspace)[-1].metrics == stepped(by_return)[-1].metrics


def test_keras_dataset_of_unknown_length_learns_the_epoch_from_the_first():
    parser = LogParser()
    records = [parser.feed(line) for line in (
        "Epoch 1/3", "     40/Unknown 3s 25ms/step - loss: 0.9000",
        "     80/Unknown 5s 25ms/step - loss: 0.8000",
        "Epoch 2/3", "80/80 ━━━━━━━━━━━━━━━━━━━━ 2s 25ms/step - loss: 0.7000")]
    first, second = records[2], records[4]
    assert first is not None and (first.step, first.target_steps) == (80, None)
    assert second is not None and (second.step, second.target_steps) == (160, 240)


def test_keras_evaluate_after_fit_does_not_move_the_step():
    parser = LogParser()
    records = [parser.feed(line) for line in (
        "Epoch 2/2", "100/100 ━━━━━━━━━━━━━━━━━━━━ 3s 25ms/step - loss: 0.4000",
        "32/32 ━━━━━━━━━━━━━━━━━━━━ 0s 3ms/step - accuracy: 0.9000 - loss: 0.3000")]
    assert (parser.step, parser.target) == (200, 200)
    completed = [e for r in records if r is not None for e in r.events
                 if e.kind is EventKind.COMPLETED]
    assert len(completed) == 1


def test_keras_new_fit_after_a_header_counts_its_own_batches():
    parser = LogParser()
    for line in ("Epoch 1/1", "100/100 ━━━━━━━━━━━━━━━━━━━━ 3s 25ms/step - loss: 0.4000",
                 "Epoch 1/2", "40/40 ━━━━━━━━━━━━━━━━━━━━ 1s 25ms/step - loss: 0.3000",
                 "Epoch 2/2", "20/40 ━━━━━━━━━━━━━━━━━━━━ 1s 25ms/step - loss: 0.2000"):
        parser.feed(line)
    assert (parser.step, parser.target) == (60, 80)


@pytest.mark.parametrize("style", ["keras3", "keras2"])
def test_keras_log_end_to_end_reports_the_global_step(tmp_path: Path, style: str):
    log = tmp_path / "fit.log"
    log.write_text(fit_log(style), encoding="utf-8")
    out = tmp_path / "out"
    done = python_m_babysit(str(log), "--once", "--out-dir", str(out), cwd=tmp_path)
    assert (out / "babysit-training.json").exists(), done.stderr
    data = json.loads((out / "babysit-training.json").read_text(encoding="utf-8"))
    assert (data["total_steps"], data["target_steps"]) == (250, 500)
    assert "eta" not in data["final_metrics"]
    assert data["final_metrics"]["loss"] == 0.55
    assert "Step 250/500" in done.stdout

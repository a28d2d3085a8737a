"""Lines of `Name value` fields with no `:` or `=` (see `parsing.spaced_fields`). The lines
are written here in the shapes those loops print, with made-up values."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.formats import parse_key_values
from babysit.parsing.spaced_fields import parse_spaced_fields
from tests.rules.test_loss_rules import verdict_of


def test_pipe_fields_give_the_epoch_and_the_measures():
    parsed = parse_spaced_fields(
        "Epoch 00004 | Step 00040 | Loss 1.2500 | Train Acc 0.6100 | Speed (samples/sec) "
        "2150.5 | GPU 812.0 MB")
    assert parsed is not None
    # The step counter beside an epoch, with no total, may count the epoch's batches.
    assert parsed.step is None and parsed.epoch == 4.0
    assert parsed.metrics == {"loss": 1.25, "train_acc": 0.61, "samples/s": 2150.5,
                              "gpu_mb": 812.0}


def test_an_undefined_rate_is_left_out_but_a_nan_loss_stays():
    parsed = parse_spaced_fields("Epoch 00000 | Step 00000 | Loss nan | Speed (samples/sec) nan")
    assert parsed is not None
    assert "samples/s" not in parsed.metrics
    assert parsed.metrics["loss"] != parsed.metrics["loss"]  # nan


def test_comma_fields_with_a_percent_and_a_batch_counter():
    parsed = parse_spaced_fields("epoch 12, minibatch 50/50, validation error 7.25 %")
    assert parsed is not None
    assert parsed.epoch == 12.0 and parsed.metrics == {"validation_error": 7.25}


def test_a_stage_label_is_not_a_measure():
    # Read by the key-value reader since sealed-10 (a comma-separated `cost 0.4125` field
    # is a name and its value), with the same reading.
    line = "Pre-training layer 1, epoch 7, cost  0.4125"
    parsed = parse_spaced_fields(line) or parse_key_values(line)
    assert parsed is not None
    assert parsed.epoch == 7.0 and parsed.metrics == {"cost": 0.4125}


def test_a_step_alone_is_the_step():
    parsed = parse_spaced_fields("Iter 300 | Loss 0.75 | Top1 Acc 0.41")
    assert parsed is not None
    assert parsed.step == 300 and parsed.metrics == {"loss": 0.75, "top1_acc": 0.41}


def test_a_line_the_key_value_reader_reads_is_left_to_it():
    assert parse_spaced_fields("iter 300 | loss 0.75 | lr 0.001") is None


@pytest.mark.parametrize("line", [
    "Loaded 5 files, skipped 3 images",  # no counter, no measure
    "epoch 3, took 12 seconds",  # a counter, no measure
    "loss 0.5, accuracy 0.9",  # measures, no counter
    "Epoch 3 | loss: 0.5 | acc: 0.9",  # key: value, another parser's
    "step=3, loss=0.5",
    # a field of another shape: the line is another format's
    "[049500/50000] CITY  | loss 0.1783 | VRAM 9.8/15.9GB (62%) | GPU 91% | batch 16",
    "loss 0.1783 | GPU 91% | batch 16",  # `batch 16` is a batch size, not a counter
])
def test_lines_that_are_not_such_a_record(line: str):
    assert parse_spaced_fields(line) is None


def test_a_pipe_field_loop_that_prints_its_average_epoch_time_finished(tmp_path: Path):
    lines = []
    for epoch in range(12):
        for step in (0, 10):
            lines.append(f"Epoch {epoch:05d} | Step {step:05d} | Loss {2.0 - epoch * 0.1:.4f}"
                         f" | Train Acc {0.3 + epoch * 0.04:.4f} | Speed (samples/sec) "
                         f"{'nan' if epoch == step == 0 else '9100.0'}")
        lines.append(f"Epoch Time(s): {3.1 + epoch % 3 * 0.1:.4f}")
    lines.append("Avg epoch time: 3.2")
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")
    assert verdict["anomalies_detected"] == []


def test_a_rate_with_its_unit_is_one_more_field():
    # sealed-4/tiny_llm_epoch_loss_lines_then_three_reruns_loss_0_speed_0_tok_s.log: the
    # key/value reader alone read only the rate of `Speed 0.00 tok/s`, and lost the loss.
    parsed = parse_spaced_fields("Epoch 1, Loss 0.0000, Time 0.00s, Speed 0.00 tok/s")
    assert parsed is not None and parsed.epoch == 1.0
    assert parsed.metrics == {"loss": 0.0, "time": 0.0, "tokens/s": 0.0}


def _reinforce(epochs: int, collapse_at: int | None = None) -> list[str]:
    # Torch7 (sealed-13's GuessWhat log): xlua's bar, whose `Tot:` and `Step:` are
    # durations, then the epoch's train and valid averages, fields apart by two spaces.
    lines = []
    for e in range(1, epochs + 1):
        reward = 0.56 + 0.002 * e if collapse_at is None or e < collapse_at else float("nan")
        lines += [f" [{'=' * 40} 731/731 {'=' * 36}>]  Tot: 42m37s | Step: 3s503ms  ",
                  f"epoch {e}  running_average {reward:.14f}  ",
                  f" [{'=' * 40} 370/370 {'=' * 36}>]  Tot: 6m53s | Step: 1s121ms   ",
                  f"epoch {e}  valid running_average {reward - 0.01:.14f}  "]
    return lines


def test_a_recurring_line_of_spaced_fields_with_names_of_its_own_is_read(tmp_path: Path):
    data = verdict_of(tmp_path, _reinforce(30))
    assert "running_average" in data["final_metrics"], data["final_metrics"]
    assert data["final_metrics"]["running_average"] == pytest.approx(0.62)


def test_a_nan_in_such_a_line_is_seen(tmp_path: Path):
    data = verdict_of(tmp_path, _reinforce(30, collapse_at=20))
    assert data["decision"] == "NO-GO"
    assert "nan-inf" in {a["type"] for a in data["anomalies_detected"]}


@pytest.mark.parametrize(("line", "name", "seconds"), [
    ("Tot: 6m45s | Step: 1s99ms", "step_time", 1.099),
    ("Tot: 6m45s | Step: 1s99ms", "tot", 405.0),
    ("epoch: 2 | loss: 0.5 | elapsed: 1h02m03s", "elapsed", 3723.0),
])
def test_a_duration_is_no_count(line: str, name: str, seconds: float):
    from babysit.parsing.formats import key_values

    values = key_values(line)
    assert "step" not in values
    assert values[name] == pytest.approx(seconds)


def test_an_epoch_given_as_a_share_is_no_epoch_count():
    """fastText-style progress (StarSpace prints `Epoch: 100.0%` at each epoch's end): the
    share of an epoch done, not epoch 100; the line's other figures are still read."""
    parsed = parse_key_values("Epoch: 100.0%  lr: 0.008006  loss: 0.048233  eta: 0h19m")
    assert parsed is not None and parsed.epoch is None
    assert parsed.metrics["loss"] == 0.048233
    assert parse_key_values("Epoch: 3  lr: 0.1  loss: 0.5").epoch == 3


@pytest.mark.parametrize(("line", "expected"), [
    # SwAV's meters beside one `Lr:` pair (sealed-18): the meters' latest values are read
    ("Epoch: [398][50]\tTime 0.692 (0.729)\tData 0.000 (0.033)\tLoss 2.0834 (2.1081)\t"
     "Lr: 0.0006", {"loss": 2.0834, "lr": 0.0006, "time": 0.692}),
    # pytorch/examples' ImageNet meters, `Acc@1` named with its cut-off
    ("Test: [10/196]\tLoss 1.2e+00 (1.1e+00)\tAcc@1  71.09 ( 69.92)\tlr: 0.1",
     {"loss": 1.2, "acc@1": 71.09, "lr": 0.1}),
    # a meter gone non-finite, its average too
    ("Epoch: [3][50]\tLoss nan (nan)\tLr: 0.0006", {"loss": float("nan"), "lr": 0.0006}),
])
def test_average_meters_beside_colon_pairs_give_their_latest_value(
        line: str, expected: dict[str, float]):
    from babysit.parsing.formats import key_values

    values = key_values(line)
    for name, value in expected.items():
        assert values[name] == pytest.approx(value, nan_ok=True)


def test_a_word_in_parentheses_is_no_average():
    from babysit.parsing.formats import key_values

    # a meter's average is a number: `(best)` qualifies, it averages nothing (the
    # capitalised loss after a counter is read, as pt.darts prints it)
    assert key_values("epoch: 3 Loss 0.5 (best)") == {"epoch": 3.0, "loss": 0.5}
    assert key_values("ResNet 50 (pretrained): 0.5") == {}


@pytest.mark.parametrize(("line", "expected"), [
    # the counter named before the value, its count first (a Torch7 CBOW script, sealed-20)
    ("Loss after 1 epochs: 0.276\t", {"loss": 0.276}),
    ("accuracy after 5 iterations = 0.9", {"accuracy": 0.9}),
    # or its word first, as before
    ("Cost after iteration 100: 0.69", {"cost": 0.69}),
])
def test_a_name_measured_after_a_count_names_the_value(line: str, expected: dict[str, float]):
    from babysit.parsing.formats import key_values

    assert key_values(line) == expected

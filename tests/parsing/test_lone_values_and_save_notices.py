"""Logs babysit read nothing from (issue 23, item 1, sealed-11): a loop that prints one
bare number a line, and a job's stderr that ends in the library's notice of the model
being saved. The lines are the logs' own (cited per test)."""

from __future__ import annotations

from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.lone_values import lone_value
from babysit.parsing.parser import LogParser
from babysit.parsing.save_notices import FinalSaveNotice
from tests.core.test_endings import once


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


# Copernicus ETCI-2021 flood detection on Windows (etci_flood_windows_bare_float_losses_
# two_runs_finish.log): `epoch: N`, the averaged loss every five epochs as a bare float,
# the meter's repr, and the script's own `start` / `finish`.
def _etci_run(losses: list[float]) -> str:
    lines = ["start", "{0: 1000}",
             "<utils.sampler_utils.DistributedSamplerWrapper object at 0x0000024F8C7CE850>"]
    for epoch in range(5 * len(losses)):
        lines.append(f"epoch: {epoch}")
        if epoch % 5 == 0:
            lines += [repr(losses[epoch // 5]),
                      "losses: <utils.metric_utils.AvgMeter object at 0x0000024F8CC99880>"]
    return "\n".join([*lines, "finish", ""])


def test_a_fraction_alone_is_a_value_and_a_count_alone_is_not() -> None:
    assert lone_value("0.12565226978063584")
    assert lone_value("-1.5e-03")
    assert not lone_value("499")  # a count, a size, an index
    assert not lone_value("0.5.1")


def test_bare_float_lines_are_read_as_the_run_s_values() -> None:
    parser = LogParser()
    records = [r for line in _etci_run([0.181, 0.126, 0.083, 0.079]).splitlines()
               if (r := parser.feed(line)) is not None]
    values = [r.metrics["value"] for r in records if "value" in r.metrics]
    assert values[-1] == 0.079
    assert "value" in parser.metric_names


def test_two_runs_of_bare_losses_each_closed_by_finish_are_go(tmp_path: Path) -> None:
    text = _etci_run([0.181, 0.126, 0.083]) + "\n" + _etci_run([0.170, 0.082, 0.080, 0.067])
    data = once(tmp_path, text)
    assert _verdict(data) == ("GO", "SUCCEEDED"), data["summary"]


def test_bare_floats_without_an_end_stay_running(tmp_path: Path) -> None:
    # GeNovo's shape (dev split): one float a line, the log cut mid-run.
    data = once(tmp_path, "\n".join(f"{2.57 - i * 0.01:.15f}" for i in range(60)) + "\n")
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert data["reading"]["progress"] == "record"


# ResTS on an A100 (tf_keras_a100_stderr_only_xla_delay_kernel_errors_then_hdf5_save.log):
# TF's start-up, XLA's `E` timing notices, shuffle buffers filling at each epoch, then
# Keras's notice as `model.save('….h5')` runs.
_TF_STDERR = (
    "2025-06-01 23:17:00.828161: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:467]"
    " Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when "
    "one has already been registered\n"
    "2025-06-01 23:18:23.329690: I tensorflow/core/kernels/data/shuffle_dataset_op.cc:482] "
    "Shuffle buffer filled.\n"
    "2025-06-01 23:33:49.011805: E external/local_xla/xla/stream_executor/cuda/cuda_timer.cc:86]"
    " Delay kernel timed out: measured time has sub-optimal accuracy. There may be a missing "
    "warmup execution, please investigate in Nsight Systems.\n"
    "2025-06-01 23:35:06.422598: I tensorflow/core/kernels/data/shuffle_dataset_op.cc:482] "
    "Shuffle buffer filled.\n")
_HDF5 = ("WARNING:absl:You are saving your model as an HDF5 file via `model.save()` or "
         "`keras.saving.save_model(model)`. This file format is considered legacy. We recommend "
         "using instead the native Keras format, e.g. `model.save('my_model.keras')` or "
         "`keras.saving.save_model(model, 'my_model.keras')`. \n")


def test_a_stderr_that_ends_in_the_model_saved_is_finished_but_not_go(tmp_path: Path) -> None:
    data = once(tmp_path, _TF_STDERR + _HDF5)
    # SUCCEEDED on the save; CONDITIONAL, as no step or metric was read.
    assert _verdict(data) == ("CONDITIONAL", "SUCCEEDED"), data["summary"]


def test_a_save_notice_said_at_every_epoch_is_no_final_save() -> None:
    # handson-ml3's SELU run (sealed-6): ModelCheckpoint writes a SavedModel each epoch,
    # `INFO:tensorflow:Assets written to: my_cifar10_selu_model/assets` after each.
    notices = FinalSaveNotice()
    for _ in range(3):
        notices.line("Epoch 3/100")
        notices.line("INFO:tensorflow:Assets written to: my_cifar10_selu_model/assets")
    assert notices.finish() == []


def test_a_save_notice_followed_by_more_output_is_no_final_save() -> None:
    notices = FinalSaveNotice()
    notices.line(_HDF5)
    notices.line("Epoch 2/100")
    assert notices.finish() == []


def test_a_warning_s_source_line_under_the_notice_keeps_it_last() -> None:
    # Keras 2's form: a UserWarning and the line of code under it.
    notices = FinalSaveNotice()
    notices.line("/usr/lib/python3/site-packages/keras/src/engine/training.py:3103: UserWarning:"
                 " You are saving your model as an HDF5 file via `model.save()`. This file "
                 "format is considered legacy.")
    notices.line("  saving_api.save_model(")
    assert [e.kind for e in notices.finish()] == [EventKind.COMPLETED]

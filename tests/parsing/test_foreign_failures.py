"""Fatal errors in the formats of runtimes other than Python (issue 23, class: crashes
in other languages' words), and the causes a crash names (a save, the device). Lines
written for these tests, each in the shape its runtime prints."""

from __future__ import annotations

import pytest

from babysit.model import EventKind, LogEvent
from babysit.parsing.events import find_events
from babysit.parsing.foreign_failures import foreign_failure
from babysit.parsing.parser import LogParser


def _events(*lines: str) -> list[LogEvent]:
    parser = LogParser()
    found = [e for line in lines if (r := parser.feed(line)) is not None for e in r.events]
    return found + [e for r in parser.finish() for e in r.events]


def _kinds(*lines: str) -> set[EventKind]:
    return {e.kind for e in _events(*lines)}


@pytest.mark.parametrize("line", [
    "Error in fit.keras.engine.training.Model(object = model, x = x) : ",
    "Error in py_call_impl(callable, call_args$unnamed, call_args$named) : ValueError: bad",
    "Execution halted",
    "ERROR: LoadError: DimensionMismatch(\"A has dimensions (10,3) but B has (4,4)\")",
    "ERROR: ArgumentError: invalid index: 0 of type Int64",
    "Exception in thread \"main\" java.lang.IllegalArgumentException: Invalid rank 3",
    "Exception in thread \"main\" org.apache.spark.SparkException: Job aborted",
    "/home/me/torch/install/bin/luajit: train.lua:212: attempt to index local 'x' (a nil value)",
    "th: ./models/resnet.lua:40: bad argument #1 to 'view'",
    "panic: runtime error: index out of range [3] with length 3",
    "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/train.rs:88:5",
    "EXCEPTION occurred: Reader: cannot open the data file train_map.txt",
])
def test_another_runtime_s_fatal_error_is_an_exception(line: str) -> None:
    assert [e.kind for e in foreign_failure(line)] == [EventKind.EXCEPTION]


@pytest.mark.parametrize("line", [
    "Error in the config, using the default",  # no call and colon: words, not R's error
    "ERROR: something went wrong, retrying",  # Julia's form names an exception
    "Exception in thread Thread-3:",  # Python's helper-thread header
    "Exception in thread \"pool-1\" java.lang.RuntimeException: x",  # not the main thread
    "epoch 3 panic level 0.3",
    "  lua: 5.1 found",
])
def test_look_alikes_are_not(line: str) -> None:
    assert foreign_failure(line) == []


def test_julia_s_ctrl_c_is_a_stop_not_a_crash() -> None:
    (event,) = foreign_failure("ERROR: InterruptException:")
    assert event.kind is EventKind.STOPPED_BY_SIGNAL


def test_an_r_error_after_keras_epochs_ends_the_run_as_a_crash() -> None:
    found = _events("Epoch 1/5", "32/32 [====] - 1s - loss: 0.52 - val_loss: 0.50",
                    "Epoch 2/5", "",
                    "Error in py_call_impl(callable, dots$args, dots$keywords) : ",
                    "  RuntimeError: Evaluation error: missing value where TRUE/FALSE needed.")
    assert any(e.kind is EventKind.EXCEPTION and e.detail.startswith("R error in py_call_impl")
               for e in found)


@pytest.mark.parametrize("line", [
    "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to launch CUDA kernel: "
    "fusion_12 with block dimensions: 256x1x1",
    "RuntimeError: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access",
    "F external/xla/stream_executor/cuda/cuda_driver.cc:1120] cuStreamSynchronize() failed",
    "error: cudaErrorLaunchFailure: unspecified failure",
])
def test_a_runtime_that_failed_on_the_device_is_a_cuda_error(line: str) -> None:
    assert EventKind.CUDA_ERROR in {e.kind for e in find_events(line)}


def test_out_of_memory_in_a_cuda_error_s_words_is_oom_only() -> None:
    kinds = {e.kind for e in find_events(
        "XlaRuntimeError: INTERNAL: Failed to instantiate CUDA graph: CUDA_ERROR_OUT_OF_MEMORY")}
    assert kinds == {EventKind.OOM}


@pytest.mark.parametrize("line", ["Using CUDA device 0 (cuDNN 8.9)", "cuda available: True",
                                  "XlaRuntimeError: INVALID_ARGUMENT: shapes (3,) and (4,)"])
def test_the_device_named_without_a_failure_is_no_cuda_error(line: str) -> None:
    assert EventKind.CUDA_ERROR not in {e.kind for e in find_events(line)}


def test_a_write_error_naming_a_model_path_is_a_failed_save() -> None:
    kinds = _kinds("step 10 loss 0.3", "Traceback (most recent call last):",
                   '  File "fit.py", line 50, in <module>',
                   "    export(out)",
                   "PermissionError: [Errno 13] Permission denied: '/shared/ckpts/best.pth'")
    assert {EventKind.EXCEPTION, EventKind.CHECKPOINT_ERROR} <= kinds


def test_a_save_call_in_the_traceback_is_a_failed_save() -> None:
    kinds = _kinds("step 10 loss 0.3", "Traceback (most recent call last):",
                   '  File "fit.py", line 50, in <module>',
                   "    model.save_weights(path)",
                   '  File "/k/engine/training.py", line 900, in save_weights',
                   "ValueError: Unable to create dataset (name already exists)")
    assert {EventKind.EXCEPTION, EventKind.CHECKPOINT_ERROR} <= kinds


def test_a_missing_checkpoint_on_resume_is_no_failed_save() -> None:
    kinds = _kinds("Traceback (most recent call last):",
                   '  File "fit.py", line 5, in <module>',
                   "    state = torch.load(args.resume)",
                   "FileNotFoundError: [Errno 2] No such file or directory: 'runs/last.ckpt'")
    assert EventKind.EXCEPTION in kinds
    assert EventKind.CHECKPOINT_ERROR not in kinds

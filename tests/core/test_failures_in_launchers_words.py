"""How a run ended, in its launcher's or its own handler's words (issue 23/24, sealed-8):
a task's non-zero exit under srun, NCCL's own `Cuda failure 2 'out of memory'`, a Ctrl-C
said in prose with an exception as the run wound down, and values a line only quotes
(the old side of `inf --> 0.06`)."""

from __future__ import annotations

import json
from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.core.test_endings import once


def _epochs(n: int) -> str:
    return "".join(f"Epoch: [{e}]  [ 100/100]  loss: {2.0 - e * 0.1:.4f}  lr: 0.001\n"
                   for e in range(n))


def _types(data: dict) -> set[str]:
    return {a["type"] for a in data["anomalies_detected"]}


def test_a_task_that_exited_non_zero_fails_the_step_srun_then_cancels(tmp_path: Path):
    # DeiT under submitit (sealed-8): srun's `_task_finish` line, then the step cancelled.
    text = _epochs(8) + (
        "srun: error: learnfair0824: task 5: Exited with exit code 1\n"
        "srun: launch/slurm: _step_signal: Terminating StepId=43575862.0\n"
        "slurmstepd: error: *** STEP 43575862.0 ON learnfair0824 CANCELLED AT "
        "2021-07-14T08:00:36 ***\n"
        "srun: error: learnfair0824: tasks 0,2,6: Killed\n")
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED"), data["summary"]
    assert "crash" in _types(data)


def test_nccls_own_cuda_failure_out_of_memory_is_an_oom(tmp_path: Path):
    # NCCL's CUDACHECK under `unhandled cuda error` (a TRL SFT run on 4 ranks, sealed-8).
    text = _epochs(2) + (
        "[rank3]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:"
        "3356, unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
        "[rank3]: Last error:\n[rank3]: Cuda failure 2 'out of memory'\n")
    data = once(tmp_path, text)
    assert data["decision"] == "NO-GO" and "oom" in _types(data), data["summary"]


def test_a_ctrl_c_said_in_words_then_an_exception_as_it_wound_down_is_cancelled(
        tmp_path: Path):
    # SafeLife in Colab (sealed-8): its handler's `Keyboard Interrupt. Ending early.`, then
    # a KeyError in the run's summary.
    text = "".join(f"INFO     n={960 * i}: loss={0.3 + i * 0.01:.3f}, entropy=2.1\n"
                   for i in range(1, 12)) + (
        "CRITICAL Keyboard Interrupt. Ending early.\n\n"
        "KeyError                                  Traceback (most recent call last)\n"
        "<ipython-input-21-a922c324702b> in <module>()\n"
        "----> 1 start_training.launch_training(args, launch_ingredients)\n"
        "KeyError: 'reward'\n")
    data = once(tmp_path, text)
    assert data["terminal_state"] == "CANCELLED", data["summary"]
    assert "wound down" in json.dumps(data["anomalies_detected"])


def test_the_old_side_of_a_change_is_no_value_of_the_run():
    # pytorchtools' EarlyStopping: `Validation loss decreased (inf --> 0.063508).`
    lines = ["Validation loss decreased (inf --> 0.063508).  Saving model ...",
             "Epoch: 0, Val_rmse: 0.0635"] * 3 + ["lr: 0.1 -> 0.01"]
    records = LogParser().feed_lines(lines)
    assert all(v != float("inf") for r in records for v in r.metrics.values())
    assert records[-1].metrics == {"lr": 0.01}


def test_a_keras_one_line_epoch_with_a_nan_loss_is_read():
    # Keras `verbose=2` under Horovod (sealed-8): `1/1 - 3s - loss: nan`, no step.
    [record] = LogParser().feed_lines(["1/1 - 3s - loss: nan"])
    assert str(record.metrics["loss"]) == "nan"


def test_a_failure_right_after_a_save_began_is_a_checkpoint_failure(tmp_path: Path):
    # neuralconvo (Torch7, sealed-8): `(Saving model ...)`, then Lua's write error.
    text = _epochs(3) + (
        "(Saving model ...)\n"
        "/Users/x/torch-cl/install/bin/luajit: /Users/x/torch-cl/install/share/lua/5.1/"
        "torch/File.lua:201: write error: wrote 0 blocks instead of 70610 at /Users/x/"
        "torch-cl/pkg/torch/lib/TH/THDiskFile.c:340\n"
        "stack traceback:\n       \t[C]: in function 'write'\n")
    data = once(tmp_path, text)
    assert data["decision"] == "NO-GO"
    assert "checkpoint-failure" in _types(data), data["anomalies_detected"]


def test_a_failure_long_after_a_save_is_no_checkpoint_failure(tmp_path: Path):
    text = "(Saving model ...)\n" + _epochs(6) + (
        "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
        "ValueError: bad batch\n")
    assert "checkpoint-failure" not in _types(once(tmp_path, text))


_HOROVOD_STALL = (
    "[2021-02-02 21:19:07.345988: W /tmp/horovod/common/stall_inspector.cc:105] One or more "
    "tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
    "waiting for remainder of ranks for more than 10 seconds. This may indicate that "
    "different ranks are trying to submit different tensors or that only subset of ranks is "
    "submitting tensors, which will cause deadlock.\nMissing ranks:\n"
    "0: [DistributedSGD_Allreduce/cond/HorovodAllreduce_grads_0]\n")


def test_horovods_stall_inspector_is_a_stall_that_progress_resolves(tmp_path: Path):
    # Horovod with tf.keras under mpirun (sealed-8): ranks that never joined the allreduce.
    def stalls(data: dict) -> list[bool]:  # each stall finding: resolved or not
        return ["resolved:" in a["description"] for a in data["anomalies_detected"]
                if a["type"] == "stalled"]

    assert stalls(once(tmp_path, _epochs(3) + _HOROVOD_STALL)) == [False]
    went_on = once(tmp_path, _epochs(3) + _HOROVOD_STALL + _epochs(6)[len(_epochs(3)):])
    assert stalls(went_on) == [True], went_on["anomalies_detected"]

"""Error, checkpoint and completion signatures."""

from __future__ import annotations

import pytest

from babysit.model import EventKind
from babysit.parsing.events import find_events


def kinds(line: str) -> list[EventKind]:
    return [e.kind for e in find_events(line)]


@pytest.mark.parametrize("line", [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
    "total capacity of 79.10 GiB of which 1.2 GiB is free. If reserved but unallocated memory "
    "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
    "fragmentation.",
    "RuntimeError: CUDA error: out of memory",
    "torch.cuda.OutOfMemoryError: CUDA out of memory.",
    "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough "
    "memory: you tried to allocate 4000000000000000 bytes.",
])
def test_out_of_memory_signatures(line: str):
    assert EventKind.OOM in kinds(line)


@pytest.mark.parametrize("line", [
    "Killed",
    "bash: line 1: 12345 Killed                  python train.py",
    "exitcode  : -9 (pid: 4242)",
    "Signal 9 (SIGKILL) received by PID 4242",
])
def test_sigkill_signatures(line: str):
    assert EventKind.HOST_KILL in kinds(line)


@pytest.mark.parametrize("line", [
    "RuntimeError: CUDA error: device-side assert triggered",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
])
def test_cuda_error_signatures_are_not_mistaken_for_oom(line: str):
    assert kinds(line)[:1] == [EventKind.CUDA_ERROR]


@pytest.mark.parametrize("line", [
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
    "unhandled system error",
    "[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=10, "
    "OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.",
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out "
    "waiting 10000ms for recv operation to complete",
])
def test_collective_errors_and_timeouts(line: str):
    assert EventKind.NCCL in kinds(line)


def test_segfault_and_disk_full_and_checkpoint_error():
    assert EventKind.SEGFAULT in kinds("Segmentation fault (core dumped)")
    assert EventKind.DISK_FULL in kinds("OSError: [Errno 28] No space left on device")
    assert EventKind.CHECKPOINT_ERROR in kinds("Error saving checkpoint to /ckpt/step-400")


def test_checkpoint_paths_are_extracted():
    [event] = find_events("Saving model checkpoint to ./out/checkpoint-20")
    assert (event.kind, event.detail) == (EventKind.CHECKPOINT_SAVED, "./out/checkpoint-20")
    [best] = find_events("Loading best model from ./out/checkpoint-40 (score: 0.51).")
    assert (best.kind, best.detail) == (EventKind.BEST_CHECKPOINT, "./out/checkpoint-40")


@pytest.mark.parametrize("line", [
    "Training finished",
    "Training completed. Do not forget to share your model on huggingface.co/models =)",
    "`Trainer.fit` stopped: `max_steps=40` reached.",
    "Epoch 10/10 done",
])
def test_completion_lines(line: str):
    assert EventKind.COMPLETED in kinds(line)


@pytest.mark.parametrize("line", [
    "UserWarning: CUDA out of memory handling is experimental",
    "  warnings.warn('NCCL error handling changed')",
    "INFO step 100 loss 2.3",
])
def test_warnings_and_hints_are_not_errors(line: str):
    assert [k for k in kinds(line) if k not in (EventKind.COMPLETED,)] == []

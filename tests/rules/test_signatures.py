"""Signatures read for what they say, each on a real line (source after it), and the
anomaly and advice each one leads to as a user sees it in the artifact."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.core.fix_policy import (
    Cause,
    FixHistory,
    FixVerdict,
    Situation,
    classify_cause,
    decide_fixes,
)
from babysit.model import AnomalyType, EventKind, FixKind
from babysit.parsing.events import find_events
from babysit.rules.catalog import entry
from tests.rules.test_loss_rules import verdict_of


def kinds(line: str) -> list[EventKind]:
    return [e.kind for e in find_events(line)]


def healthy(n: int = 20) -> list[str]:
    return [f"step={s} loss={3.0 - 0.02 * s:.3f}" for s in range(1, n + 1)]


# --- fp16 loss scale --------------------------------------------------------------------

def test_deepspeed_scale_unchanged_by_hysteresis_is_a_reading_not_the_floor():
    # ZeRO prints the scale before and after update_scale; with hysteresis it is kept.
    # Format: THUDM/GLM issue #32 (stage2.py:1387); the values as hysteresis leaves them.
    line = ("[2022-09-14 22:58:01,089] [INFO] [stage2.py:1387:step] [deepspeed] fp16 dynamic "
            "loss scale overflow! Rank 6 Skipping step. Attempted loss scale: 256.0, "
            "reducing to 256.0")
    events = find_events(line)
    assert [e.kind for e in events] == [EventKind.LOSS_SCALE]
    assert events[0].detail == "256.0"


@pytest.mark.parametrize("line", [
    # deepspeedai/DeepSpeed issue #697 (a model that does not learn in fp16).
    "[2021-01-26 22:05:35,108] [INFO] [logging.py:60:log_dist] [Rank 0] Overflow detected. "
    "Skipping step. Attempted loss scale: 1, reducing to 1",
    "[2021-01-26 22:05:16,472] [INFO] [fused_optimizer.py:316:_update_scale] Reducing dynamic "
    "loss scale from 1 to 1",
])
def test_deepspeed_scale_stuck_at_one_is_the_floor(line: str):
    assert EventKind.LOSS_SCALE_FLOOR in kinds(line)


def test_fairseq_overflow_note_reads_the_new_scale():
    # fairseq's trainer (a log quoted in a fairseq MoE example, 2021-03-08).
    line = ("2021-03-08 12:33:51 | INFO | fairseq.trainer | NOTE: gradient overflow detected, "
            "ignoring gradient, setting loss scale to: 1.0")
    events = find_events(line)
    assert [e.kind for e in events] == [EventKind.LOSS_SCALE]
    assert events[0].detail == "1.0"  # 1.0 is not fairseq's minimum (0.0001)


def test_a_finished_deepspeed_run_with_hysteresis_messages_is_go(tmp_path: Path):
    line = ("[INFO] [stage2.py:1387:step] [deepspeed] fp16 dynamic loss scale overflow! Rank 0 "
            "Skipping step. Attempted loss scale: 256.0, reducing to 256.0")
    data = verdict_of(tmp_path, [*healthy(10), line, *healthy(30)[10:], "Training complete"])
    assert data["decision"] == "GO", data["anomalies_detected"]


# --- killed workers, native aborts, external stops ------------------------------------

def test_a_killed_dataloader_worker_is_host_oom_not_a_code_crash(tmp_path: Path):
    lines = [*healthy(), "Traceback (most recent call last):",
             '  File "train.py", line 80, in <module>',
             # pytorch/pytorch issue #8976, quoted in a fastMRI script.
             "RuntimeError: DataLoader worker (pid 28841) is killed by signal: Killed."]
    data = verdict_of(tmp_path, lines)
    found = [(a["type"], a["severity"]) for a in data["anomalies_detected"]]
    assert found == [("oom", "blocker"), ("crash", "blocker")]  # why, and that it died
    assert "DataLoader worker" in data["anomalies_detected"][0]["description"]
    assert data["decision"] == "NO-GO"


def test_terminate_called_without_an_active_exception_is_a_crash(tmp_path: Path):
    # A C++ std::terminate, then the abort (the shape of a g++ threads example's output).
    lines = [*healthy(), "terminate called without an active exception",
             "Aborted (core dumped)"]
    assert EventKind.SEGFAULT in kinds(lines[-2])
    data = verdict_of(tmp_path, lines)
    assert [a["type"] for a in data["anomalies_detected"]] == ["crash"]
    assert data["decision"] == "NO-GO"


def test_torchrun_stopped_by_sigterm_is_cancelled_from_outside_not_a_code_crash(
        tmp_path: Path):
    lines = [*healthy(),
             "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, "
             "shutting down workers",
             "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2919043 "
             "closing signal SIGTERM",
             "Traceback (most recent call last):",
             '  File "/usr/bin/torchrun", line 8, in <module>',
             "torch.distributed.elastic.multiprocessing.api.SignalException: Process 2919040 "
             "got signal: 15"]
    data = verdict_of(tmp_path, lines)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "CANCELLED")
    assert data["anomalies_detected"] == []  # an external stop, not a training fault
    cause, _ = classify_cause(lines[-1], None, None, None, frozenset())
    assert cause is Cause.INTENTIONAL


# --- hardware faults -------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    # torch's own message (quoted in vLLM and NeMo crash triage scripts).
    "RuntimeError: CUDA error: uncorrectable ECC error encountered",
    # The driver in the kernel log (a training run dying at ~3 h, May 2026 write-up).
    "NVRM: Xid (PCI:0000:06:00): 79, pid=..., GPU has fallen off the bus.",
    # NVIDIA's Xid 74 format, as quoted in a GPU health-check runbook.
    "[449410.332316] NVRM: Xid (PCI:0003:00:00): 74, pid='<unknown>', name=<unknown>, "
    "NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
])
def test_hardware_fault_signatures(line: str):
    assert kinds(line) == [EventKind.HARDWARE_FAULT]


def test_an_application_xid_is_still_a_cuda_error():
    # Xid 13 (graphics engine exception) is raised by the code, not by the hardware.
    line = "NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, Graphics Exception on GPC 0"
    assert kinds(line) == [EventKind.CUDA_ERROR]


def test_an_ecc_error_advises_draining_the_gpu_and_is_never_restarted_there(tmp_path: Path):
    lines = [*healthy(), "Traceback (most recent call last):",
             '  File "train.py", line 80, in <module>',
             "RuntimeError: CUDA error: uncorrectable ECC error encountered"]
    data = verdict_of(tmp_path, lines)
    assert [(a["type"], a["severity"]) for a in data["anomalies_detected"]] == \
        [("hardware-fault", "blocker"), ("crash", "blocker")]
    assert "drain this GPU or node" in entry(AnomalyType.HARDWARE_FAULT).fix
    assert "CUDA_LAUNCH_BLOCKING" not in str(data["findings"])
    cause, why = classify_cause(lines[-1], None, 1, None,
                                frozenset({AnomalyType.HARDWARE_FAULT}))
    assert cause is Cause.HARDWARE
    decisions = decide_fixes(Situation(crashed=True, cause=cause, cause_text=why,
                                       restart_known=True, step=20), FixHistory(),
                             fix_enabled=True)
    restart = next(d for d in decisions if d.kind is FixKind.RESTART)
    assert restart.verdict is FixVerdict.SKIP and "resume elsewhere" in restart.reason


# --- who stopped the run, in the shapes the shell and the frameworks print -------------

@pytest.mark.parametrize("line", [
    "Killed",
    "**Killed**",  # a paste that kept the shell's word in markdown bold
    "`Killed`",
    "Killed: 9",  # macOS
    "[1]+  Killed                  nohup python train.py --cfg a.yaml",  # job control
    "zsh: killed     python train.py",
    "/var/spool/slurmd/job4242/slurm_script: line 17: 90817 Killed   python train.py",
])
def test_sigkill_as_each_shell_reports_it(line: str):
    assert kinds(line) == [EventKind.HOST_KILL]


@pytest.mark.parametrize("line", [
    "I killed the old run and started this one",
    "num_killed: 0",
])
def test_killed_inside_a_sentence_is_no_kill(line: str):
    assert EventKind.HOST_KILL not in kinds(line)


@pytest.mark.parametrize("line", [
    # TensorFlow's exception class, as an IPython header names it before any frame.
    "ResourceExhaustedError                    Traceback (most recent call last)",
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: 2 root error(s) found.",
    # JAX / XLA.
    "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
    "2147483648 bytes.",
    # MXNet's storage manager.
    "mxnet.base.MXNetError: [10:11:12] src/storage/./pooled_storage_manager.h:157: "
    "cudaMalloc retry failed: out of memory",
    # PaddlePaddle 2.x.
    "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 1.5 GB memory "
    "on GPU 0, 15.7 GB memory has been allocated.",
    "  Out of memory error on GPU 1. Cannot allocate 256.000000MB memory on GPU 1",
    # The host: Python, NumPy, C++.
    "MemoryError",
    "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 31.5 GiB for an array",
    "terminate called after throwing an instance of 'std::bad_alloc'",
])
def test_out_of_memory_in_each_framework_s_words(line: str):
    assert EventKind.OOM in kinds(line)


@pytest.mark.parametrize("line", [
    "grpc RESOURCE_EXHAUSTED: Received message larger than max (5000000 vs. 4194304)",
    "    raise MemoryError",  # a frame's source line, not the exception
    "UserWarning: ResourceExhaustedError may be raised for large batches",
])
def test_resource_words_that_are_not_an_out_of_memory(line: str):
    assert EventKind.OOM not in kinds(line)


@pytest.mark.parametrize("line", [
    "jax.errors.JaxRuntimeError: INTERNAL: NCCL operation ncclGetUniqueId(&id) failed: "
    "Unable to load NCCL library. Multi-GPU collectives will not work.",
    "RuntimeError: NCCL Error 2: unhandled system error",
    "OSError: libnccl.so.2: cannot open shared object file: No such file or directory",
    "RuntimeError: NCCL communicator was aborted on rank 3.",
    "xla_bridge: Unable to load the NCCL library",
])
def test_nccl_library_failures(line: str):
    assert EventKind.NCCL in kinds(line)


@pytest.mark.parametrize("line", [
    "Epoch 0:  31%|###1      | 1225/3999 [34:01<1:17:03,  1.67s/it, v_num=29, "
    "train_loss=1.93][rank: 2] Received SIGTERM: 15",
    "[rank: 0] Received SIGINT: 2",
    "WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death "
    "signal, shutting down workers",
    # The shell's report of a SIGTERM to its job.
    "Terminated",
    "/var/spool/slurmd/job77/slurm_script: line 9: 31337 Terminated   python train.py",
    "[2]-  Terminated              python train.py",
    "zsh: terminated  python train.py",
])
def test_a_stop_signal_the_run_received(line: str):
    assert EventKind.STOPPED_BY_SIGNAL in kinds(line)


def test_dataloader_workers_terminated_with_the_job_are_a_cancel_not_a_crash(
        tmp_path: Path):
    # SIGTERM (scancel, `kill`, a preempting scheduler) reaches the workers too; the main
    # process then raises on their death.
    lines = [*healthy(), "Traceback (most recent call last):",
             '  File "train.py", line 48, in <module>',
             "RuntimeError: DataLoader worker (pid 4020138) is killed by signal: Terminated. "]
    data = verdict_of(tmp_path, lines)
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "CANCELLED")
    assert [a["type"] for a in data["anomalies_detected"]] == []


def test_a_lone_killed_is_the_host_s_oom_killer(tmp_path: Path):
    data = verdict_of(tmp_path, [*healthy(), "", "**Killed**"])
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "FAILED")
    assert "oom" in {a["type"] for a in data["anomalies_detected"]}


@pytest.mark.parametrize("line", [
    "Process terminated 2 stale workers, saving state",
    "Terminated early at epoch 5: patience used up",
    "num_terminated=0",
])
def test_terminated_inside_a_sentence_is_no_stop(line: str):
    assert EventKind.STOPPED_BY_SIGNAL not in kinds(line)


def test_a_job_the_shell_reports_terminated_is_cancelled(tmp_path: Path):
    data = verdict_of(tmp_path, [*healthy(), "Terminated"])
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "CANCELLED")

"""Error, checkpoint and completion signatures, declared as data.

Each signature is a regular expression over one cleaned line. Order matters only
within a line: a line can carry several events (an OOM inside a checkpoint save),
and every matching signature is reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from babysit.model import EventKind, LogEvent


@dataclass(frozen=True)
class Signature:
    kind: EventKind
    pattern: re.Pattern[str]
    # Index of the group holding a detail worth keeping (a path, an exception name).
    detail_group: int = 0


def _sig(kind: EventKind, pattern: str, detail_group: int = 0, flags: int = 0) -> Signature:
    return Signature(kind, re.compile(pattern, flags), detail_group)


_I = re.IGNORECASE

SIGNATURES: tuple[Signature, ...] = (
    # Out of memory: CUDA caching allocator, XLA/JAX, and the CPU allocator.
    _sig(EventKind.OOM, r"CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError|"
         r"CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED|"
         r"RESOURCE_EXHAUSTED:? .*[Oo]ut of memory|"
         r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory)|"
         r"HIP out of memory|MPS backend out of memory"),
    _sig(EventKind.HOST_KILL, r"^(?:.*\bline \d+: +\d+ )?Killed(?:\s+\S.*)?$|"
         r"[Ss]ignal 9 \(SIGKILL\)|exitcode\s*:\s*-9\b|Out of memory: Killed? process|"
         r"oom-kill(?:er)?\b"),
    _sig(EventKind.CUDA_ERROR, r"device-side assert triggered|illegal memory access|"
         r"CUDA error: (?!out of memory)|CUDNN_STATUS_(?!SUCCESS)\w+|cuDNN error|"
         r"CUBLAS_STATUS_(?!SUCCESS|ALLOC_FAILED)\w+|unspecified launch failure|"
         r"uncorrectable ECC error|CUDA driver error|illegal instruction was encountered|"
         r"NVRM: Xid"),
    _sig(EventKind.NCCL, r"NCCL (?:error|WARN|timeout)|ncclInternalError|ncclSystemError|"
         r"ncclUnhandledCudaError|ncclRemoteError|ncclInvalidUsage|"
         r"ProcessGroupNCCL.*(?:[Tt]imeout|timed out|[Ee]rror)|"
         r"Watchdog caught collective operation timeout|DistBackendError|"
         r"[Gg]loo.*(?:[Tt]imed out|[Tt]imeout|Connection closed by peer|Connection reset)|"
         r"ProcessGroupGloo.*(?:[Ee]rror|[Tt]imeout)|"
         r"(?:[Tt]imed out|[Tt]imeout) (?:in|waiting for) (?:all_?reduce|barrier|broadcast|"
         r"all_?gather|reduce_?scatter)"),
    _sig(EventKind.TRACEBACK_START, r"^Traceback \(most recent call last\):"),
    _sig(EventKind.SEGFAULT, r"Segmentation fault|SIGSEGV|Fatal Python error|"
         r"[Ss]ignal 11\b|core dumped|Bus error|SIGBUS|SIGABRT|Aborted \(core"),
    _sig(EventKind.DISK_FULL, r"No space left on device|Disk quota exceeded|\[Errno 28\]|"
         r"\[Errno 122\]"),
    _sig(EventKind.CHECKPOINT_ERROR, r"(?:[Ee]rror|[Ff]ailed|[Uu]nable|[Cc]ould not|"
         r"[Cc]annot) (?:while |when |to )?sav(?:e|ing) (?:the )?(?:model )?"
         r"checkpoint(?:\s+(?:to|at)\s+['\"]?([^'\"\s]+))?", 1),
    # A save that worked: HF Trainer, Lightning's ModelCheckpoint, nanoGPT, generic.
    _sig(EventKind.CHECKPOINT_SAVED, r"Saving model checkpoint to\s+(\S+)", 1),
    _sig(EventKind.CHECKPOINT_SAVED,
         r"saving model to\s+['\"]?([^'\"\s]+?)['\"]?(?:\s+as top|\s*$)", 1),
    # Megatron-LM: `successfully saved checkpoint from iteration 50 to /ckpt [ t 1/1 ]`
    _sig(EventKind.CHECKPOINT_SAVED, r"successfully saved checkpoint from iteration\s+\d+ to\s+"
         r"(\S+)", 1),
    _sig(EventKind.CHECKPOINT_SAVED, r"^(?!.*(?:[Ee]rror|[Ff]ail))\s*[Ss]aving (?:the )?checkpoint "
         r"(?:to|in)\s+['\"]?([^'\"\s,]+)", 1),
    # Generic `saved checkpoint at out/ckpt-5`: the path must look like one.
    _sig(EventKind.CHECKPOINT_SAVED, r"^(?!.*(?:[Ee]rror|[Ff]ail)).*\b(?:[Ss]aving|[Ss]aved) "
         r"(?:the )?checkpoint(?:\s+(?:to|at|in|as))?\s+['\"]?"
         r"((?:[\w.~-]*[/\\])*[\w.~-]*[/\\._\-\d][\w.~/\\-]*)", 1),
    _sig(EventKind.BEST_CHECKPOINT, r"Loading best model from\s+(\S+?)(?:\s+\(score|\s*$)", 1),
    _sig(EventKind.BEST_CHECKPOINT, r"[Bb]est (?:model|checkpoint)(?: path)?:\s+['\"]?"
         r"([^'\"\s]+)", 1),
    _sig(EventKind.COMPLETED, r"[Tt]raining (?:is )?(?:finished|completed?|done)\b|"
         r"`?max_(?:steps|epochs)=\d+` reached|[Ff]inished training|"
         r"Trainer\.fit stopped|^Epoch \d+/\d+ (?:done|finished|complete)\b|"
         r"[Tt]raining (?:run )?(?:has )?(?:ended|succeeded)\b|"
         r"^[Ff]inished (?:after )?\d+ (?:steps|iterations|epochs)\b|"
         r"^[Aa]ll epochs (?:done|finished|completed?)\b|"
         r"\"(?:event|status)\":\s*\"(?:train(?:ing)?_?(?:end|ended|finished|completed?|done)|"
         r"finished|completed?|done|succeeded)\""),
)

# Lines that look like errors but are not: warnings about them, hints, retries.
_BENIGN = re.compile(r"^\s*(?:\S+:\d+: )?(?:\w+)?Warning\b|^\s*warnings\.warn|UserWarning|"
                     r"FutureWarning|DeprecationWarning", _I)

# The closing line of a traceback: `ValueError: bad`, `torch.OutOfMemoryError: ...`,
# `KeyboardInterrupt`. Indented lines belong to the traceback body.
_EXCEPTION_LINE = re.compile(
    r"^((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure|Warning|"
    r"Timeout)|[A-Z]\w*Error\w*|StopIteration|AssertionError)(?::\s?(.*))?$"
)

# Cheap literal pre-checks so most lines skip the regex table entirely.
_TRIGGERS = (
    "memory", "Memory", "Killed", "SIGKILL", "exitcode", "oom", "CUDA", "cuda", "CUDNN",
    "cuDNN", "CUBLAS", "NCCL", "nccl", "Gloo", "gloo", "Timeout", "timed out", "Timed out",
    "Traceback", "Segmentation", "SIG", "Fatal", "core dumped", "Bus error", "Aborted",
    "No space", "quota", "Errno", "heckpoint", "Loading best", "est model", "raining",
    "reached", "fit stopped", "Epoch", "illegal", "launch failure", "ECC", "Xid",
    "DistBackend", "RESOURCE_EXHAUSTED", "Allocator", "saving model", "inished", "epochs",
    '"event"', '"status"',
)


def find_events(line: str) -> tuple[LogEvent, ...]:
    """All events one cleaned line carries, in signature order."""
    if not any(t in line for t in _TRIGGERS):
        return ()
    benign = _BENIGN.search(line) is not None
    found: list[LogEvent] = []
    seen: set[EventKind] = set()
    for sig in SIGNATURES:
        if sig.kind in seen:
            continue
        match = sig.pattern.search(line)
        if match is None:
            continue
        if benign and sig.kind not in (EventKind.CHECKPOINT_SAVED, EventKind.COMPLETED,
                                       EventKind.BEST_CHECKPOINT):
            continue
        detail = (match.group(sig.detail_group) or "") if sig.detail_group else ""
        found.append(LogEvent(sig.kind, line.strip()[:500], detail.rstrip(".,;:'\"")))
        seen.add(sig.kind)
    return tuple(found)


def exception_line(line: str) -> tuple[str, str] | None:
    """`(exception name, message)` when the line closes a traceback, else None."""
    if not line or line[0].isspace():
        return None
    match = _EXCEPTION_LINE.match(line.rstrip())
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()

"""Error, checkpoint and completion signatures, declared as data.

Each signature is a regular expression over one cleaned line. Order matters only
within a line: a line can carry several events (an OOM inside a checkpoint save),
and every matching signature is reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from babysit import lazy_re
from babysit.model import EventKind, LogEvent
from babysit.parsing.completion_words import names_a_part
from babysit.parsing.log_prefix import message
from babysit.parsing.runner_exits import (
    LAUNCHER_FAILED,
    LAUNCHER_STOPPED,
    RETURNED,
    RUNNER_FAILED,
    RUNNER_RETURNED,
    RUNNER_STOPPED,
    SAID_FAILED,
)
from babysit.parsing.runner_exits import TRIGGERS as RUNNER_TRIGGERS
from babysit.parsing.shell_signals import SHELL_FAULT, SHELL_KILLED, SHELL_STOPPED, may_report
from babysit.parsing.signal_reports import CHILD_STOPPED, NATIVE_FAULT, NATIVE_STOP, USER_STOP
from babysit.parsing.signal_reports import TRIGGERS as SIGNAL_REPORT_TRIGGERS


@dataclass(frozen=True)
class Signature:
    kind: EventKind
    pattern: re.Pattern[str]
    # Index of the group holding a detail worth keeping (a path, an exception name).
    detail_group: int = 0
    detail: str = ""  # a fixed detail, when the kind of line is the detail


# Completion details of the signatures below (see `core.lifecycle`): the trainer's own
# report as training returns, checked against the plan; the run's own early stop.
SUMMARY = "summary"
EARLY_STOP = "early-stop"
# A NaN guard stopped the trainer (Lightning's check_finite: `Monitored metric val_loss =
# nan is not finite. … Signaling Trainer to stop.`): the run is over, and not by its plan
# (a completion detail, see `core.lifecycle`: ENDED, never SUCCEEDED).
NAN_GUARD_STOP = "nan-guard-stop"
# A NEW_STAGE detail: the run says its training objective changed (its loss function or
# the weights of its terms), so losses before and after are not one curve.
OBJECTIVE_CHANGED = "objective-changed"
# A NEW_STAGE detail: the next of several whole trainings in one log began (a k-fold's
# `Fold 2` header): judged against its own past, not the one before's.
NEXT_REPETITION = "next-repetition"

def _sig(kind: EventKind, pattern: str, detail_group: int = 0, flags: int = 0,
         detail: str = "") -> Signature:
    return Signature(kind, lazy_re.compile(pattern, flags), detail_group, detail)


_I = re.IGNORECASE
# A trainer's words as it exits on an exception, Ctrl-C's or any other (see
# `core.ending.PendingFailure.exit_banner`).
EXIT_BANNER = "Run is kept in"

# A save the saver itself says it did not make (Lightning 0.x's ModelCheckpoint, as a
# warning at every epoch: `RuntimeWarning: The metric you returned 0.372 must be a
# `torch.Tensor` instance, checkpoint not saved`), read in a warning too; not a save
# skipped because the score did not improve, which is the checkpoint's policy.
_NOT_SAVED = _sig(EventKind.CHECKPOINT_ERROR,
                  r"^(?!.*(?:improv|better|best|[Ss]kip|[Nn]o need))"
                  r".*\b(?:checkpoint|model|weights)\s+(?:was\s+|were\s+|is\s+)?not\s+"
                  r"(?:been\s+)?saved\b|"
                  # Keras' ModelCheckpoint(save_best_only=True) watching a metric the run
                  # does not log (`acc` where the run names it `accuracy`), at every epoch:
                  # `WARNING:tensorflow:Can save best model only with acc available,
                  # skipping.` — the best model is never written
                  r"\bCan save best model only with \S+ available, skipping\b")

SIGNATURES: tuple[Signature, ...] = (
    # Out of memory, in each framework's words: the CUDA caching allocator, XLA/JAX
    # (`RESOURCE_EXHAUSTED: Out of memory while trying to allocate`; PJRT's `Execution of
    # replica 0 failed: RESOURCE_EXHAUSTED: Failed to allocate request for 625.00MiB
    # (655360000B) on device ordinal 7`, read from its own words where a paste wrapped
    # the line inside the code), TensorFlow's own
    # exception class (`ResourceExhaustedError`, which an IPython header names before
    # its `OOM when allocating tensor` line), MXNet (`cudaMalloc retry failed: out of
    # memory`), Paddle (`Out of memory error on GPU 0`), and the host: the CPU
    # allocator, C++'s `std::bad_alloc`, Python's and NumPy's `MemoryError`.
    _sig(EventKind.OOM, r"CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError|"
         r"OOM when allocating tensor|^\s*out of memory\s*$|"
         r"CUDA [Ee]rror:? out of memory|CUBLAS_STATUS_ALLOC_FAILED|"
         r"RESOURCE_EXHAUSTED:? .*(?:[Oo]ut of memory|[Ff]ailed to allocate)|"
         r"\bResourceExhaustedError\b|[Ff]ailed to allocate request for \d[\d.]*\s?[KMGT]i?B|"
         r"cudaMalloc(?:Async)?(?: retry)? failed: out of memory|"
         r"[Oo]ut of memory error on (?:GPU|CPU|device)|"
         r"^(?:[\w.]+\.)?_?(?:Array)?MemoryError\b|std::bad_alloc|"
         r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory)|"
         r"HIP out of memory|MPS backend out of memory|CUDA_ERROR_OUT_OF_MEMORY|"
         # ROCm's runtime and HIP (`Aborting with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES:
         # The runtime failed to allocate …`, Julia's AMDGPU.jl on LUMI)
         r"HSA_STATUS_ERROR_OUT_OF_RESOURCES|hipErrorOutOfMemory|"
         r"cudaErrorMemoryAllocation|java\.lang\.OutOfMemoryError|"
         # NCCL's own check (src/include/checks.h `CUDACHECK`: `Cuda failure %d '%s'`),
         # under the `unhandled cuda error` a collective raises
         r"Cuda failure \d+ '?out of memory|"
         # an exception saying it in words (DeepSpeed's inference kernels: `RuntimeError:
         # Workspace can't be allocated, not enough memory`; the kernel's `[Errno 12]
         # Cannot allocate memory` when the host has none left to fork a worker)
         r"^\s*(?:[\w.]+\.)?\w*Error: .*\b(?:[Nn]ot enough|[Ii]nsufficient) (?:\w+ )?memory\b|"
         r"\[Errno 12\] Cannot allocate memory"),
    # SIGKILL as the shell reports it: bash's bare `Killed` (or `line 12: 4567 Killed
    # python train.py` from a script, `[1]+  Killed   python train.py` from job
    # control), zsh's `zsh: killed  python train.py`, macOS's `Killed: 9`, and a paste
    # that kept the word in markdown emphasis (`**Killed**`), or in lower case alone on
    # its line (a C++ trainer's paste: `train: ` then `killed`).
    _sig(EventKind.HOST_KILL, r"^[*_`]*(?:.*\bline \d+: +\d+ |\[\d+\][+-]? +)?Killed(?::? 9)?"
         r"[*_`]*(?:\s+\S.*)?$|^zsh: killed\s|^\s*killed\s*$|"
         r"exceeded memory limit .*being killed|Detected \d+ oom[-_]kill event|"
         r"[Ss]ignal 9 \(SIGKILL\)|exitcode\s*:\s*-9\b|Out of memory: Killed? process|"
         r"oom-kill(?:er)?\b"),
    # The same said in the shell's locale (`已杀死`, `[1]+  Getötet  python train.py`), or
    # by fish (`terminated by signal SIGKILL`): parsing/shell_signals.py.
    _sig(EventKind.HOST_KILL, SHELL_KILLED),
    # `RuntimeError: DataLoader worker (pid 12345) is killed by signal: Killed.`: the
    # kernel's SIGKILL, memory. (A worker killed by `Terminated` or `Interrupt` was sent
    # SIGTERM or SIGINT with the whole job: the run was stopped, see `core.ending`.)
    _sig(EventKind.WORKER_KILLED, r"DataLoader worker \(pid:? ?\d+\) is killed by signal: Killed"),
    # The data loader's own RuntimeError when a worker died by any other cause (a bus
    # error on a full /dev/shm, a segfault in a decoder), printed bare or by a handler
    # that caught it (an Optuna script's `Error: DataLoader worker (pid(s) 1142198) exited
    # unexpectedly`, its last line): the loop it fed cannot go on.
    _sig(EventKind.EXCEPTION, r"DataLoader worker \(pids?(?:\(s\))?:? ?[\d, ]+\) exited "
         r"unexpectedly", detail="a data loader worker exited unexpectedly (shared memory "
                                 "too small, or the worker crashed or was killed)"),
    # The GPU itself failed (a restart on the same device fails again): uncorrectable
    # ECC (`CUDA error: uncorrectable ECC error encountered`, a double bit error), the
    # driver's hardware Xids (`NVRM: Xid (PCI:0000:06:00): 79, pid=..., GPU has fallen
    # off the bus.`; 48 DBE, 61/62 micro-controller, 63/64 row remapping, 74 NVLink,
    # 79 off the bus, 92-95 ECC, 119/120 GSP), NVLink failures.
    _sig(EventKind.HARDWARE_FAULT, r"uncorrectable ECC error|double bit (?:ECC )?error|"
         r"GPU has fallen off the bus|"
         r"\bXid (?:\(PCI:[^)]*\): )?(48|6[1-4]|74|79|9[2-5]|119|120)\b|"
         r"NVLink: fatal error|NVLink (?:link \d+ disabled|[Ee]rror)|"
         # (or the scheduler's word that the machine died under the job: Slurm's `***
         # JOB 279701 ON neo CANCELLED AT … DUE TO NODE FAILURE, SEE SLURMCTLD LOG …`)
         r"\bDUE TO NODE FAILURE\b"),
    # A kernel's own assert (`Indexing.cu:1422: indexSelectLargeIndex: block: [31,0,0],
    # thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.`): a console may
    # wrap `failed.` onto the next line.
    _sig(EventKind.CUDA_ERROR, r"device-side assert triggered|illegal memory access|"
         r"\.cu:\d+: .*Assertion\b|\[CUDA ERROR\] at file|"
         r"CUDA error: (?!out of memory)|CUDNN_STATUS_(?!SUCCESS)\w+|cuDNN error|"
         r"CUBLAS_STATUS_(?!SUCCESS|ALLOC_FAILED)\w+|unspecified launch failure|"
         r"CUDA driver error|illegal instruction was encountered|NVRM: Xid|"
         # The driver API's and the runtime's own codes, and a runtime (XLA, JAX, TF)
         # that failed on the device and says so: `XlaRuntimeError: INTERNAL: Failed
         # to launch CUDA kernel`, `CUDA_ERROR_ILLEGAL_ADDRESS`, `cudaGraphLaunch
         # failed`.
         r"CUDA_ERROR_(?!OUT_OF_MEMORY)[A-Z_]+|cudaError(?!MemoryAllocation)[A-Z]\w+|"
         r"\bcu(?:da)?[A-Z]\w+(?:\(\))? failed\b|"
         r"Failed to (?:launch|instantiate|execute|load|create|initialize|synchronize)\b"
         r"[^:]{0,40}\bCUDA\b|"
         r"XlaRuntimeError: \w+: .*\b(?:CUDA|cuda|cuBLAS|cuDNN|cublas|cudnn)\b"),
    # The library itself missing or refusing (`NCCL operation ncclGetUniqueId(&id)
    # failed: Unable to load NCCL library`, `NCCL Error 2: unhandled system error`)
    # fails the first collective as surely as a timeout does. So does a FATAL line of
    # ProcessGroupNCCL in c10's own log format (`[rank6]:[F429 14:03:49.385461578
    # ProcessGroupNCCL.cpp:1554] …`: the heartbeat monitor found the watchdog stuck and
    # terminates the process, as a LOG(FATAL) always does), whatever the message after it.
    _sig(EventKind.NCCL, r"\[F\d{3,4} \d\d:\d\d:\d\d(?:\.\d+)? ProcessGroupNCCL\.cpp:\d+\]|"
         # (not `NCCL WARN` alone: NCCL warns of what it works around — an InfiniBand
         # device it cannot open, MSCCL++ not enabled, a proxy's accept — and the run
         # trains on; a failure says more: the error, the collective that timed out)
         r"NCCL (?:[Ee]rror|timeout|failure)|ncclInternalError|"
         r"ncclSystemError|"
         r"NCCL operation \w+\S* failed|[Uu]nable to load (?:the )?NCCL library|"
         r"libnccl\S*: cannot open shared object|NCCL communicator (?:was )?aborted|"
         r"ncclUnhandledCudaError|ncclRemoteError|ncclInvalidUsage|"
         r"ProcessGroupNCCL.*(?:[Tt]imeout|timed out|[Ee]rror)|"
         r"Watchdog caught collective operation timeout|DistBackendError|"
         r"[Gg]loo.*(?:[Tt]imed out|[Tt]imeout|Connection closed by peer|Connection reset)|"
         r"ProcessGroupGloo.*(?:[Ee]rror|[Tt]imeout)|"
         r"(?:[Tt]imed out|[Tt]imeout) (?:in|waiting for) (?:all_?reduce|barrier|broadcast|"
         r"all_?gather|reduce_?scatter)"),
    # Anywhere in the line: a progress bar or a record is often glued before it.
    # IPython prints `NameError    Traceback (most recent call last)`, without the colon.
    _sig(EventKind.TRACEBACK_START, r"Traceback \(most recent call last\)"),
    # C++ fatal checks (glog / dmlc `Check failed:`): the process aborts after them.
    _sig(EventKind.EXCEPTION, r"(?:^|\s)(Check failed: .+)", 1),
    # Any other FATAL line of glog / absl (`F0524 19:24:39.746389 13813 net.cpp:703] …`)
    # or of TensorFlow's own C++ logger (`2021-08-19 02:10:50.224348: F tf_adapter/
    # kernels/geop_npu.cc:766] GeOp3_0GEOP::::DoRunAsync Failed`): LOG(FATAL) aborts the
    # process after printing it, whatever the message says.
    _sig(EventKind.EXCEPTION,
         r"(?:^|[\s\]])F\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+[\w.\-/]+:\d+\]\s*(\S.*)|"
         r"\d: F [\w.\-/]+\.\w+:\d+\]\s*(\S.*)", -1),
    # detectron2 and mmengine say so before the traceback.
    _sig(EventKind.EXCEPTION, r"(Exception during training):?", 1),
    # Hydra's last words when its task (or composing its configuration) raised: the error
    # on the line before, then this in place of the traceback (HYDRA_FULL_ERROR unset).
    _sig(EventKind.EXCEPTION,
         r"^\s*Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace",
         detail="Hydra stopped the run on an error (the line above says which)"),
    # torchrun / torch.distributed.elastic: the launcher was told to stop, or it stops its
    # workers (after one failed), or it restarts them (a new attempt).
    # Stopped by the user in a framework's own words: Lightning's `Detected
    # KeyboardInterrupt, attempting graceful shutdown...`, Coqui TTS's trainer
    # (` > Keyboard interrupt detected.`, then ` ! Run is kept in <path>`; after any other
    # exception it prints the same and then the traceback, which wins even when the log
    # is cut inside it).
    # Lightning's signal connector: `[rank: 2] Received SIGTERM: 15` (a scheduler or the
    # owner stopping the job; often glued to the end of a bar line). The shell's report
    # of a SIGTERM, as of a SIGKILL above: `Terminated`, `line 12: 4567 Terminated
    # python train.py`, `[1]+  Terminated …`, `zsh: terminated …`; and of a SIGHUP (the
    # terminal closed under a job started without nohup): `line 12: 4567 Hangup   python …`.
    _sig(EventKind.STOPPED_BY_SIGNAL, r"Received ((?:\d+|Signals\.SIG[A-Z]+) death signal), "
         r"shutting down workers|"
         r"[Mm]ain process received (SIG(?:INT|TERM|HUP)), exiting|^(\^C)\s*$|"
         # the tty's echo of Ctrl-C glued to the head of the traceback Python prints
         # for it (`^CTraceback (most recent call last):`): KeyboardInterrupt, even in a
         # paste cut before its exception line (jetson-inference's train_ssd.py, sealed-9)
         r"(\^C)(?=Traceback \(most recent call last\))|"
         # or to the head of whatever the program printed next, as it stopped (Caffe's
         # `^CI1230 20:51:29.566437 23363 solver.cpp:391] Test interrupted.`)
         r"^(\^C)(?=[A-Z\[])|"
         # or to the tail of a line the program had begun (darknet's `1^C` under its last
         # iteration, a bar's `45%|████▌     | ^C`)
         r"\S\s?(\^C)\s*$|"
         r"Received (SIG(?:INT|TERM|HUP)): \d+|"
         # a tool's own word that it caught Ctrl-C (the W&B sweep agent's `wandb: Ctrl +
         # C detected. Stopping sweep.`)
         r"\b(Ctrl ?[+-]? ?C) (?:detected|pressed|received|caught)\b|"
         r"^(?:.*\bline \d+: +\d+ |\[\d+\][+-]? +)(Terminated|Hangup)\s+\S.*$|^(Terminated)\s*$|"
         # job control's report of a job suspended (Ctrl-Z, SIGTSTP; or stopped writing to
         # the terminal from the background): bash's `[1]+  Stopped  python main.py …`,
         # zsh's `zsh: suspended  python …`, fish's `fish: Job 1, 'python …' has stopped`
         # — the run no longer trains, by its owner's hand, until someone resumes it
         r"^\[\d+\][+-]? +(Stopped)(?: \([\w ]+\))?\s+\S.*$|^zsh: (suspended)\b|"
         r"^fish: Job \d+, .* has (stopped)\b|"
         # (the same word alone after a logger's timestamp: nnU-Net's own log file, its
         # stdout captured with the shell's report, `2024-11-24 04:13:57.870606: Terminated`)
         r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[.,\d]*\]?:?\s+(Terminated)\s*$|"
         r"^zsh: (terminated)\s|"
         # make's word when the recipe it ran was stopped (`make: *** [Makefile:287:
         # data/ocrd/checkpoints/ocrd_checkpoint] Terminated`, after it deletes the
         # target the recipe was writing; `Interrupt` for a Ctrl-C)
         r"^make(?:\[\d+\])?: \*\*\* \[[^\]]*\] (Terminated|Interrupt|Hangup)\s*$|"
         r"(Detected KeyboardInterrupt)|(Keyboard ?[Ii]nterrupt detected)|"
         # said in words by the run's own handler (SafeLife: `CRITICAL Keyboard
         # Interrupt. Ending early.`) or by the command that ran the job (gcloud's Ctrl-C
         # handler: `Command killed by keyboard interrupt`); the exception's name has no
         # space
         # (CoreNet's `Keyboard interruption. Exiting from early training`)
         r"\b([Kk]eyboard [Ii]nterrupt(?:ion|ed)?)\b(?!\s*(?:[:=]|\bis\b))|"
         rf"^\s*! ({EXIT_BANNER})\b|"
         # (in any case: `--- Training Interrupted by User (KeyboardInterrupt) ---`)
         r"(?i:training)\s+(?:was\s+|has\s+been\s+)?((?i:interrupted\s+by\s+(?:the\s+)?user))|"
         # the Ctrl-C handler of pytorch/examples' word_language_model, and of flair's
         # trainer after it: `Exiting from training early`, then its save and test
         r"(?<![\w'\"])(Exiting from (?:training early|early training))\b", -1),
    # A native signal handler's report of a stop signal (Paddle's `FatalError: `Termination
    # signal` is detected by the operating system.`, glog's `*** SIGTERM (@0x…) received
    # by PID …`), and the run's own sentence that its user stopped it, in its language
    # (`Entrenamiento interrumpido por el usuario.`): parsing/signal_reports.py.
    _sig(EventKind.STOPPED_BY_SIGNAL, NATIVE_STOP, -1),
    # A parent's word that its child died of a stop signal (`Command '[…]' died with
    # <Signals.SIGTERM: 15>.`): the same stop, said by the script that ran the trainer.
    _sig(EventKind.STOPPED_BY_SIGNAL, CHILD_STOPPED, 1),
    _sig(EventKind.STOPPED_BY_SIGNAL, USER_STOP, -1),
    # The shell's report of a stop in its locale (`第 3 行：12345 已终止  python …`).
    _sig(EventKind.STOPPED_BY_SIGNAL, SHELL_STOPPED),
    _sig(EventKind.WORKERS_STOPPED, r"Sending process \d+ closing signal (SIG[A-Z]+)", 1),
    # A collective that waits on ranks that never come: Horovod's stall inspector
    # (horovod/common/stall_inspector.cc: `One or more tensors were submitted to be
    # reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of
    # ranks for more than 60 seconds`), and torch's NCCL watchdog (ProcessGroupNCCL.cpp:
    # `Watchdog caught collective operation timeout: WorkNCCL(…) ran for 1800372
    # milliseconds before timing out`) — an NCCL failure too, after a stall that long.
    _sig(EventKind.STALL, r"waiting for (?:the )?remainder of ranks for more than \d+ "
         r"seconds|[Ww]atchdog caught collective operation timeout"),
    # srun's word that a task failed (launch_slurm.c `_task_finish`: `srun: error: gpu-12:
    # task 5: Exited with exit code 1`): the failure the step is then cancelled for.
    # (or ended by the signal its name says: `task 0: Aborted`, a segfault, a bus error)
    _sig(EventKind.EXCEPTION, r"^srun: error: \S+: (tasks? [\d,-]+: (?:Exited with exit code "
         r"[1-9]\d*|Aborted|Segmentation fault|Bus error|Floating point exception))", 1),
    # A run console's own exit line under the script's output (PyCharm's `Process finished
    # with exit code -1`): a stop asked for, or the process dying (parsing/runner_exits.py).
    _sig(EventKind.STOPPED_BY_SIGNAL, RUNNER_STOPPED, 1),
    _sig(EventKind.EXCEPTION, RUNNER_FAILED, 1),
    _sig(EventKind.EXCEPTION, SAID_FAILED, 1),
    _sig(EventKind.STOPPED_BY_SIGNAL, LAUNCHER_STOPPED, 1),
    _sig(EventKind.EXCEPTION, LAUNCHER_FAILED, 1),
    _sig(EventKind.COMPLETED, RUNNER_RETURNED, detail=RETURNED),
    _sig(EventKind.RESTARTED, r"[Rr]estarting workers.*?(restart_count=\d+)|"
         r"Worker group FAILED\. (\d+/\d+) attempts left; will restart", -1),
    # fp16 dynamic loss scaling: DeepSpeed, fairseq, apex, Megatron.
    # The floor is the scale at its minimum: fairseq's `Minimum loss scale reached
    # (0.0001)`, DeepSpeed's `already at minimum`, or an "attempted" scale of 1 (DeepSpeed's
    # default minimum) or less that could not be reduced. ZeRO prints the scale before
    # and after its update, and hysteresis keeps it (`Attempted loss scale: 256,
    # reducing to 256`): the same value above 1 is a reading, not the floor.
    _sig(EventKind.LOSS_SCALE_FLOOR, r"Minimum loss scale reached|"
         r"[Cc]urrent loss scale already at minimum|"
         r"Attempted loss scale: (0|1|0?\.\d+|1\.0+|0\.0+), reducing to \1(?![\d.])|"
         r"Reducing dynamic loss scale from (1|1\.0+|0?\.\d+) to \2(?![\d.])"),
    # fairseq: `NOTE: gradient overflow detected, ignoring gradient, setting loss scale
    # to: 64.0` (and the older `overflow detected, setting loss scale to: 64.0`, AMP's
    # `setting scale to`).
    _sig(EventKind.LOSS_SCALE, r"Attempted loss scale: \S+, reducing to ([\d.eE+-]+)|"
         r"overflow detected,(?: ignoring gradient,)? setting (?:loss )?scale to:?\s*"
         r"([\d.eE+-]+)|"
         r"[Rr]educing dynamic loss scale from \S+ to ([\d.eE+-]+)|"
         r"reducing loss scale to ([\d.eE+-]+)|Grad overflow on iteration (?:\d+)()|"
         # icefall's AMP watch: `Grad scale is small: 1.29e-26` (its GradScaler's scale,
         # warned of below 0.01 and fatal below 1e-5)
         r"[Gg]rad(?:ient)? scale is (?:too )?small:?\s*([\d.eE+-]+)", -1),
    # A job wrapper's word that the job it submitted is gone without finishing: Kaldi's
    # `queue.pl` / `slurm.pl` (`queue.pl: Error, unfinished job no longer exists, log is
    # in …`), whatever ended it (a time limit, a node that died, a `qdel`). The job died;
    # the wrapper saw no exit status.
    _sig(EventKind.EXCEPTION, r"\b\w+\.pl: Error, unfinished job no longer exists\b",
         detail="the scheduler's job vanished before it finished "
                "(its wrapper: unfinished job no longer exists)"),
    # ... or that jobs it ran failed, as `run.pl`, `queue.pl` and `slurm.pl` say it before
    # they exit 1 and the recipe stops (`run.pl: 1 / 8 failed, log is in …/train.3.*.log`,
    # one job's `job failed with status 1, log is in …`): the failure is in that log.
    _sig(EventKind.EXCEPTION, r"\b(\w+\.pl: (?:[1-9]\d* / \d+ failed|job failed with status "
         r"\d+), log is in \S+)", 1),
    # Schedulers' own word on the job, in its output file (LSF, Slurm).
    # LSF's job report says `Successfully completed.` or `Exited with exit code N.` on a
    # line of its own (after `TERM_RUNLIMIT: …` when its limit killed the job); PBS says
    # `=>> PBS: job killed: walltime 3630 exceeded limit 3600`.
    _sig(EventKind.JOB_STATE, r"^Successfully completed\.$()|TERM_OWNER: (job killed) by owner|"
         r"TERM_ADMIN: (job killed) by root|TERM_MEMLIMIT: (job killed) after reaching|"
         r"TERM_RUNLIMIT: (job killed) after reaching|^(Exited with exit code) [1-9]\d*\.$|"
         r"PBS: (job killed): walltime \d+ exceeded limit|"
         # salloc's word when the allocation it holds runs out (`salloc: Job 8667074 has
         # exceeded its time limit and its allocation has been revoked.`); the steps run
         # in it are killed with it
         r"^(?:salloc|srun): (?:error: )?Job \d+ (has exceeded its time limit)\b|"
         r"\*\*\* (?:JOB|STEP) [\d.]+ ON \S+ (CANCELLED) AT (?!\S+ DUE TO JOB REQUEUE)"
         r".*?(DUE TO TIME LIMIT)?\s*\*\*\*", -1),
    # A launcher's last word on the job it ran, with the job's state (torchx's `Job
    # finished: SUCCEEDED`, SkyPilot's `Job finished (status: SUCCEEDED).`, Ray's `Job
    # 'raysubmit_…' failed`): the launcher saw the process exit, and how.
    _sig(EventKind.JOB_STATE, r"^(?:\S+ ){0,4}?(?:[A-Z]+\s+)?Job (?:'[^'\n]{1,80}' )?(?:finished|"
         r"completed|ended|exited)\b[ :(]{0,3}(?:(?:with )?(?:status|state)[:= ]{1,3})?"
         r"(SUCCEEDED|FAILED|CANCELL?ED|STOPPED)\b|"
         r"^(?:\S+ ){0,6}?(?:[A-Z]+\s+)?Job '[^'\n]{1,80}' (succeeded|failed)\b|"
         # a cloud job's description, as `gcloud ai-platform jobs describe` / `stream-logs`
         # and Vertex AI print it after the job's logs (`state: SUCCEEDED`, `state:
         # JOB_STATE_FAILED`), alone on its line
         r"^state: (?:JOB_STATE_)?(SUCCEEDED|FAILED|CANCELLED)\s*$", -1),
    # The machine under the run was lost: TPUEstimator's shutdown hook finding its TPU
    # workers dead (`ShutdownHook: lame workers found: HeartbeatManager(/job:worker/…)`,
    # a preemptible TPU taken back), a TPU or VM said to be preempted. The process is
    # left to hang or die; the run is over, nobody stopped it (as Slurm's NODE FAILURE).
    _sig(EventKind.JOB_STATE, r"\blame workers found\b|"
         r"\b(?:TPU|[Ww]orker|VM|[Ii]nstance|[Nn]ode)\b[^.\n]{0,60}\b(?:was|has been|is being) "
         r"preempted\b", -1),
    # Slurm requeued the job (preempted under PreemptMode=REQUEUE, `scontrol requeue`): the
    # processes of this allocation are stopped and the job waits to run again, appending
    # to the same output file (`--open-mode=append`, submitit): the run is not over.
    _sig(EventKind.REQUEUED, r"\*\*\* (?:JOB|STEP) [\d.]+ ON \S+ CANCELLED AT \S+ "
         r"(DUE TO JOB REQUEUE) \*\*\*", 1),
    # A native abort: C++ `std::terminate` (a thread left running, an exception thrown
    # through C++), then usually `Aborted (core dumped)`.
    # Python's faulthandler names the fault on Windows (`Windows fatal exception: access
    # violation`, PowerShell wrapping it in its NativeCommandError, sealed-19), not the
    # code of a C++ exception it reports though it may be caught (`code 0xe06d7363`).
    _sig(EventKind.SEGFAULT, r"Segmentation fault|SIGSEGV|Fatal Python error|"
         r"Windows fatal exception: (?:access violation|stack overflow|illegal instruction|"
         r"in page error|(?:int|float) divide by zero)|"
         r"terminate called (?:without an active exception|after throwing an instance)|"
         r"[Ss]ignal 11\b|core dumped|Bus error|SIGBUS|SIGABRT|Aborted \(core"),
    # Paddle's report of any other fatal signal (`FatalError: `Erroneous arithmetic
    # operation` is detected by the operating system.`): parsing/signal_reports.py.
    _sig(EventKind.SEGFAULT, NATIVE_FAULT, 1),
    # The shell's report of a fault in its locale (`段错误 (核心已转储)`), zsh's own
    # (`zsh: segmentation fault  python train.py`): parsing/shell_signals.py.
    _sig(EventKind.SEGFAULT, SHELL_FAULT),
    # `OSError: [Errno 28] No space left on device: 'out/checkpoint-1000/model.safetensors'`
    # names the file that could not be written (kept: that checkpoint is not whole).
    _sig(EventKind.DISK_FULL, r"(?:\[Errno (?:28|122)\] )?(?:No space left on device|"
         r"Disk quota exceeded)(?:: '([^']+)')?|\[Errno 28\]|\[Errno 122\]", 1),
    # torch.save / safetensors writing a file that could not be completed.
    _sig(EventKind.CHECKPOINT_ERROR, r"PytorchStreamWriter failed writing file|"
         r"inline_container\.cc.*unexpected pos|unexpected pos \d+ vs \d+|"
         r"SafetensorError|[Ee]rror while serializing"),
    # (the model or its weights named for the checkpoint too, the save's error caught and
    # said: a ChemBERTa script's `ERROR:__main__:Error saving model: '…' object has no
    # attribute 'save_pretrained'`; not a model's card or summary, which are no weights)
    _sig(EventKind.CHECKPOINT_ERROR, r"(?:[Ee]rror|[Ff]ailed|[Uu]nable|[Cc]ould not|"
         r"[Cc]annot) (?:while |when |to )?sav(?:e|ing) (?:the )?"
         r"(?:(?:final|best|trained|fine-tuned|last) )?"
         r"(?:(?:model )?checkpoint|model(?! (?:card|summary|config))|weights)\b"
         r"(?:\s+(?:to|at)\s+['\"]?([^'\"\s]+))?", 1),
    _NOT_SAVED,
    # A save that worked: HF Trainer, Lightning's ModelCheckpoint, nanoGPT, generic.
    _sig(EventKind.CHECKPOINT_SAVED, r"Saving model checkpoint to\s+(\S+)", 1),
    _sig(EventKind.CHECKPOINT_SAVED,
         r"(?:saving|[Ss]ave) model to\s+['\"]?([^'\"\s]+?)['\"]?(?:\s+as top|\s*$)", 1),
    # Megatron-LM: `successfully saved checkpoint from iteration 50 to /ckpt [ t 1/1 ]`
    _sig(EventKind.CHECKPOINT_SAVED, r"successfully saved checkpoint from iteration\s+\d+ to\s+"
         r"(\S+)", 1),
    _sig(EventKind.CHECKPOINT_SAVED, r"^(?!.*(?:[Ee]rror|[Ff]ail))\s*[Ss]aving (?:the )?checkpoint "
         r"(?:to|in)\s+['\"]?([^'\"\s,]+)", 1),
    # Generic `saved checkpoint at out/ckpt-5`: the path must look like one.
    _sig(EventKind.CHECKPOINT_SAVED, r"^(?!.*(?:[Ee]rror|[Ff]ail)).*\b(?:[Ss]aving|[Ss]aved) "
         r"(?:the )?checkpoint(?:\s+(?:to|at|in|as))?\s+['\"]?"
         r"((?:[\w.~-]*[/\\])*[\w.~-]*[/\\._\-\d][\w.~/\\-]*)", 1),
    # The checkpoint named by the run's own word for it, not by a path: jaxline's `Saved
    # checkpoint latest with id 2.`, Ray Train's `Checkpoint successfully created at:
    # Checkpoint(filesystem=local, path=/…/checkpoint_000009)` (its path, when it gives one).
    _sig(EventKind.CHECKPOINT_SAVED, r"^(?!.*(?:[Ee]rror|[Ff]ail)).*\b[Ss]aved checkpoint "
         r"([A-Za-z]\w*) with id \d+\b", 1),
    # The model saved without a path, at the count it was saved at: the CycleGAN/pix2pix
    # loop's `saving the model at the end of epoch 300, iters 96000` and `saving the
    # latest model (epoch 3, total_iters 5000)`, which many research loops copied. (Not a
    # best model's save, `saving best model at iter 9`: it comes when the score improves,
    # at no cadence a later silence could break.)
    _sig(EventKind.CHECKPOINT_SAVED, r"^(?!.*(?:[Ee]rror|[Ff]ail)).*\b(?:[Ss]aving|[Ss]aved)\s+"
         r"(?:the\s+)?(?:(?:latest|final|current|last)\s+)?(?:model|weights|checkpoint|"
         r"network|net|parameters)s?\s+(?:at\s+(?:the\s+end\s+of\s+)?|after\s+|\(\s*)"
         r"((?:epoch|step|iteration|iter)\s*[:=#]?\s*\d+)\b", 1),
    # The weights saved to a file by the run's own word for them: Darknet's `Saving weights
    # to backup//yolov4-tiny_4000.weights` every thousand iterations and `…_final.weights`
    # at its last, `Saved model weights to out/w.pt`.
    _sig(EventKind.CHECKPOINT_SAVED, r"^(?!.*(?:[Ee]rror|[Ff]ail))\s*(?:[Ss]aving|[Ss]aved)\s+"
         r"(?:the\s+)?(?:model\s+)?(?:weights|parameters|params|state[_ ]dict)\s+(?:to|in|as)\s+"
         r"['\"]?([^'\"\s,]+)", 1),
    _sig(EventKind.CHECKPOINT_SAVED, r"\b[Cc]heckpoint successfully (?:created|saved|written)"
         r"(?: (?:at|to|in))?:?\s+(?:Checkpoint\(.*?\bpath=)?['\"]?([^'\"\s,)]+)", 1),
    # The best model's file named on a line written in another script (a Chinese trainer's
    # `✓ 保存最佳模型到 ./checkpoints/best_model.pth (val_loss=0.2114)` each time it improves):
    # its words go unread, the file's name says what was written. Not a line that loads,
    # restores or resumes from it, nor one that failed.
    _sig(EventKind.CHECKPOINT_SAVED,
         r"^(?=[^\n]*[\u00c0-\u024f\u0400-\u04ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])"
         # (a load in the line's own words too: Chinese, Japanese, Korean, Russian, Spanish)
         r"(?![^\n]*(?:[Ll]oad|LOAD|[Rr]estor|[Rr]esum|[Ee]rror|ERROR|[Ff]ail|加载|载入|读取|"
         r"読み込|로드|불러|[Зз]агруз|[Cc]argand))[^\n]*?"
         r"(?:^|[\s'\"(:=])((?:[\w.~-]*[/\\])*[\w.-]*(?<![A-Za-z])best(?![a-z])[\w.-]*"
         r"\.(?:pth|pt|ckpt|h5|hdf5|keras|bin|safetensors|pkl|pdparams|tar))\b", 1),
    # The best model reloaded, whatever the run calls it (`Loading best model from …`,
    # SpeedTransformer's `Loading best fine-tuned model from …/best_model.pth for final
    # evaluation...`).
    _sig(EventKind.BEST_CHECKPOINT, r"Loading (?:the )?best (?:[\w-]+ )?model from\s+(\S+?)"
         r"(?:\s+\(score|\s+for\b|\s*$)", 1),
    # Training announced as starting, on a line of its own (`Start Training!`, `Starting
    # training...`, `[INFO] Training started`): after an end, the next round or launch
    # began (a NAS predictor's five rounds, each closed by `Training End!`).
    _sig(EventKind.LAUNCHED, r"(?:^|[|\]>]\s*|:\s+)(?:[Ss]tart(?:ing)?|START(?:ING)?|"
         r"[Bb]egin(?:ning)?|BEGIN) (?:the |THE )?(?:[Tt]raining|TRAINING)\s*(?:[.!…]+)?\s*$|"
         r"(?:^|[|\]>]\s*|:\s+)(?:[Tt]raining|TRAINING) (?:[Ss]tarted|STARTED|begins|BEGINS)"
         r"\s*(?:[.!…]+)?\s*$",
         detail="training announced as starting again: a new round or launch"),
    # The best weights put back in the model before training returns: Keras's
    # EarlyStopping(restore_best_weights=True), `Restoring model weights from the end of
    # the best epoch: 16.` (keras/src/callbacks/early_stopping.py).
    _sig(EventKind.BEST_RESTORED, r"Restoring model weights from the end of the best "
         r"epoch:?\s*(\d+)", 1),
    # ... or said bare, once training is over (AllenNLP's checkpointer: `loading best
    # weights`; its train command: `Loading the best epoch weights.`)
    _sig(EventKind.BEST_RESTORED, r"(?:^|\s-\s|:\s)(?:[Ll]oading|[Rr]estoring|[Ll]oaded|"
         r"[Rr]estored)\s+(?:the\s+)?best\s+(?:epoch\s+)?(?:weights|model|checkpoint|state)"
         r"\s*\.?\s*$"),
    # ... in RecBole's (`Finished training, best eval result in epoch 10`, then `Loading model
    # structure and parameters from saved/SRGNN-….pth`: its trainer saves only the best,
    # and `load_best_model` reloads it to test)
    _sig(EventKind.BEST_RESTORED, r"\bFinished training, best eval result in epoch (\d+)\b", 1),
    # ... in a hand-written loop's words (PINNx: `🛑 Early stopping triggered at epoch 501`,
    # `✅ Restored best model from epoch 1`)
    _sig(EventKind.BEST_RESTORED, r"\b[Rr]estor(?:ed|ing)\s+(?:the\s+)?best\s+"
         r"(?:model|weights|checkpoint|state)\s+(?:from|of|at)\s+epoch\s*:?\s*(\d+)\b", 1),
    # ... or said to be the model's now, in a library's warning (pytorch-tabnet's
    # callbacks.py after its early stop: `UserWarning: Best weights from best epoch are
    # automatically used!`)
    _sig(EventKind.BEST_RESTORED, r"\b[Bb]est (?:weights|model|checkpoint|state)\b[^.!]{0,40}?\b"
         r"(?:are|were|is|was|been|get|got) (?:automatically |now )?(?:used|loaded|restored)\b"),
    # The best checkpoint evaluated, or loaded, as the run's model once training is over
    # (Ultralytics: `Validating runs/detect/train/weights/best.pt...` after `100 epochs
    # completed`; `Testing best_model.pth`): what the run delivers is its best.
    _sig(EventKind.BEST_RESTORED, r"^\s*(?:Validating|Evaluating|Testing|Restoring|Reloading)\s+"
         r"(?:the\s+)?(?:weights\s+|model\s+)?(?:from\s+)?\S*\bbest[\w=-]*\.(?:pt|pth|ckpt|h5|"
         r"keras|bin|safetensors|pdparams)\b"),
    # ... or loaded by the file's name, the weights said in words (StarDist's `Loading
    # network weights from 'weights_best.h5'.` as `model.train` returns; `Loaded model
    # from checkpoints/model_best.pth`). A run that begins so, fine-tuning from another
    # run's best, is not this: only after training (`core.run`).
    _sig(EventKind.BEST_RESTORED, r"^\s*(?:Loading|Loaded|Reloading|Reloaded)\s+(?:the\s+)?"
         r"(?:[A-Za-z]+\s+){0,2}(?:weights|model|checkpoint|parameters|state(?:_dict)?)\s+from\s+"
         r"['\"`]?\S*?(?<![A-Za-z0-9])best[\w=-]*\.(?:pt|pth|ckpt|h5|keras|bin|safetensors|"
         r"pdparams)['\"`]?\s*\.?\s*$"),
    # The best checkpoint written, with its path (VideoMAE V2's tracking fork: `Best
    # checkpoint saved at ./output/checkpoint-tracking-best.pth`). (Not yet `New best model
    # saved at …/best.pt`: a run that keeps its best then spends most of itself a tenth
    # worse, sealed-6's P2IGAN, is labelled CONDITIONAL, which a kept best would undo.)
    # (mmcv's EvalHook: `Now best checkpoint is saved as best_bbox_mAP_epoch_9.pth.`)
    _sig(EventKind.BEST_CHECKPOINT, r"(?<![\w-])(?:[Nn]ew |Now )?[Bb]est (?:[\w-]+ )?"
         r"(?:checkpoint|weights|ckpt) (?:is )?(?:saved|written|stored) (?:at|to|in|as):?\s+"
         r"['\"]?([^'\"\s,)]+?)['\"]?\.?(?:\s|$)", 1),
    # ... the verb first (a chest X-ray trainer's `  Saved best model to checkpoints/
    # resnet50/best_model.pth` after its `New best AUROC: 0.7831`)
    _sig(EventKind.BEST_CHECKPOINT, r"(?<![\w-])(?:[Ss]aved?|[Ss]aving|[Ww]rote|[Ww]riting) "
         r"(?:the )?(?:new )?best (?:[\w-]+ )?(?:model|checkpoint|weights|ckpt) "
         r"(?:to|at|in|as):?\s+['\"]?([^'\"\s,)]+?)['\"]?\.?(?:\s|$)", 1),
    # The best model written without its path (SpeedTransformer's `  -> Best fine-tuned
    # model saved.` at each improvement): no file to name, but the step it was written at
    # (the detail is empty; see Checkpoints.named_best).
    _sig(EventKind.BEST_CHECKPOINT, r"(?<![\w-])(?:[Nn]ew )?[Bb]est (?:[\w-]+ )?"
         r"(?:model|checkpoint|weights) (?:saved|updated|stored)"
         r"(?: at (?:epoch|step|iter\w*)\b[^/\\]*)?\.?$"),
    _sig(EventKind.BEST_CHECKPOINT, r"[Bb]est (?:model|checkpoint)(?: path)?:\s+['\"]?"
         r"([^'\"\s]+)", 1),
    # The trainer's own report as training returns (detectron2, DETR and DeiT, fairseq,
    # Megatron, TF1's Estimator — tensorflow_estimator/python/estimator/estimator.py,
    # `_train_with_estimator_spec`: `logging.info('Loss for final step: %s.', loss)` once
    # `train()`'s loop is over): printed however training ended, so it is checked against
    # the plan.
    _sig(EventKind.COMPLETED, r"Overall training speed: \d+ iterations in|"
         # (after a logger's head too: `INFO:tensorflow:Loss for final step: 0.0025.`,
         # the default format of the Python logger TF1 writes through)
         r"(?:^|^INFO:tensorflow:|\] )Loss for final step: |"
         r"Total training time: \d|^Training time \d+:\d\d:\d\d|"
         # (with its unit said: torchreid's `Finished. Total elapsed time (h:m:s): 0:17:19.
         # Training time (h:m:s): 0:14:06.`)
         r"\b[Tt]raining time \((?:h:m:s|hh:mm:ss|h:mm:ss)\):? \d+:\d\d:\d\d\b|"
         r"done training in [\d.]+ seconds|\[after training is done\]|"
         # the whole training's duration in seconds, as a script sums it up at the end
         # (the MPIJob BERT test's `Process 0 - Training time: 10.03 seconds` on each rank)
         # (however spaced, in any unit or as h:m:s, after a logger's head too: TranAD's
         # `Training time:   321.2383 s`, LAVIS's `… [INFO] Training time 20:29:42`)
         r"\b[Tt]raining time:?\s+(?:\d+(?:\.\d+)? ?(?:s|secs?|seconds|m|mins?|minutes|h|hrs?|"
         r"hours)|\d+:\d\d:\d\d(?:\.\d+)?)\.?$|"
         # (the total's own words, in hours: FastMoE's SMoE language model, `Training time
         # total: 19.628181285593246 h`)
         r"\b[Tt]raining time total: \d+(?:\.\d+)? ?(?:s|secs?|seconds|m|mins?|minutes|h|"
         r"hrs?|hours)\.?$|"
         # the XGBoost command line's last word once its rounds are done (cli_main.cc:
         # `[17:56:50] update end, 3835.9 sec in all`), and FLAML's once its search's best
         # model is retrained (`Time taken to find the best model: 0.5975`)
         r"(?:^|\]\s)update end, [\d.]+ sec in all\b|"
         r"\bTime taken to find the best model: [\d.]+|"
         # how much the run ran, a field of its own summary (an iTransformer script's
         # `iTransformer   best_val_loss=0.1045  epochs_run= 69  time= 79.6s`, once, after
         # its last epoch)
         r"\b(?:epochs|steps|iterations|iters)[_ ](?:run|trained|completed)\s*[=:]\s*\d+\b|"
         # timm's `train.py` (and the trainers built on it: BrainCog's) once its loop is
         # left, however it was (it catches KeyboardInterrupt and goes on to this):
         # `*** Best metric: 50.02 (epoch 1)`
         r"^\*\*\* Best metric: [-+\d.eE]+ \(epoch \d+\)",
         detail=SUMMARY),
    # Early stopping: a planned end before the planned total.
    # Early stopping, in each library's words: Keras `Epoch 00023: early stopping`,
    # Lightning `Monitored metric val_loss did not improve in the last 3 records. Best
    # score: 0.12. Signaling Trainer to stop.`, the LTSF/`pytorchtools` helper's
    # `EarlyStopping counter: 10 out of 10` (its patience used up) then `Early stopping`,
    # FuxiCTR `Early stopping at epoch=116`, a bare `Stopping training.`.
    _sig(EventKind.COMPLETED, r"Stopping training early as no improvement|"
         r"^Epoch \d+: early stopping|"
         # (with its auxiliary, grammatical or not: NeuRec's `Early stopping is trigger at
         # epoch: 26`)
         r"[Ee]arly stopping (?:(?:is|was|has been|got) )?(?:trigger(?:ed|s)?|activated)\b|"
         r"EarlyStopping: Training stopped early|"
         # (hyphenated too: xLearn's `[ ACTION     ] Early-stopping at epoch 3`)
         # (and its dots and an `@`: a segmentation loop's `Early Stopping....@ 72 epoch
         # for patience @ 10.0`)
         # (a stop that happened, not the setting announced: XGBoost's `Will use
         # validation_rmse for early stopping.` as its fit begins)
         r"(?<!for )(?<!with )(?<!use )(?<!using )(?<!enable )(?<!enabled )(?<!no )"
         # (a verb between: pytorch-tabnet's `Early stopping occurred at epoch 30 with
         # best_epoch = 25 …`)
         r"\b[Ee]arly[ -][Ss]topp(?:ing|ed)(?: (?:occurred|occured|happened|kicked in))?"
         # (the English words in a line otherwise another language's: `Early stopping à
         # l'époque 73`, `Early stopping en la época 5`, `Early stopping bei Epoche 12`)
         r"(?:[.\s]*(?:(?:at|after|on|in|à|en|em|na|no|bei|nach|all[ao]?|nella)\b|@)|"
         r"[.!]*\s*$)|"
         # OpenNMT-py: `Training finished after not improving. Early Stop!`
         # (FuxiCTR's banner, `********* Epoch=3 early stop *********`)
         r"\b[Ee]arly [Ss]top[\s.!*=#~-]*$|^\W*EARLY[ _]STOP(?:PED|PING)?\W*$|"
         # (the noun, at the count it happened: ReChorus's `Early stop at 34 based on dev
         # result.`)
         r"\b[Ee]arly[ -][Ss]top\s+(?:at|after)\s+(?:(?:epoch|step|iter\w*)\s*)?\d|"
         # (or with the fields of where it stopped: a benchmark script's `[bench-lora]
         # early stop task=host_tropism_hiyata step=7500`)
         r"\b[Ee]arly[ -][Ss]top\s+(?:[\w.-]+=\S+\s+){0,4}(?:epoch|step|iter\w*)=\d+\s*$|"
         r"\b(?:finished|stopped|stopping) after not improving\b|"
         r"^\s*[Ss]topped early\b|"
         r"did not improve in the last \d+ records|Signaling Trainer to stop|"
         r"EarlyStopping counter: (\d+) out of \1\b|"
         r"(?:^|\W\s)Stopping training(?:\.?\s*$| (?:at|after) (?:epoch|step|iteration))|"
         # flair's annealing run out of learning rate, its configured end: `learning rate
         # too small - quitting training!`
         r"\b[Ll]earning rate too small\b.{0,5}\b[Qq]uitting training\b|"
         # Gradient boosting, as each library stops early: XGBoost's `Stopping. Best
         # iteration:`, LightGBM's `Early stopping, best iteration is:`, CatBoost's
         # `Stopped by overfitting detector  (20 iterations wait)`.
         # (and any loop's stop naming its best: `Stopping. Best val: 9.902495 at epoch
         # 112`, a normalising flow's under HTCondor)
         r"^Stopping[.!] Best\b|^Early stopping, best iteration is:|"
         # (or the stop said alone on its line, after the checks that led to it: a
         # seq2seq spell checker's `No Improvement.` twice, then `Stopping Training.`)
         r"^\W*(?:[Ee]arly\s+)?[Ss]topping\s+(?:the\s+)?[Tt]raining(?:\s+(?:early|now))?"
         r"\s*[.!]*\s*$|"
         r"^Stopped by overfitting detector\b|"
         # other languages' early stop: Chinese `早停`/`提前停止`, Japanese `早期終了`,
         # Korean `조기 종료`, Vietnamese `dừng sớm ở epoch 9`, Spanish, Portuguese, French
         r"早停|提前停止|早期終了|조기\s*종료|\b[Dd]ừng sớm\b|"
         r"\b[Pp]arada (?:temprana|antecipada)\b|\b[Aa]rr[êe]t (?:pr[ée]coce|anticip[ée])\b",
         detail=EARLY_STOP),
    # A library's own stop on a numerical failure, in its words (CatBoost's `Training has
    # stopped (degenerate solution on iteration 60, probably too small l2-regularization,
    # try to increase it)` after `learn: nan`; `Training stopped: loss is NaN`): a NaN
    # guard's stop as Lightning's check_finite is, the run over and not by its plan.
    _sig(EventKind.COMPLETED, r"\b[Tt]raining (?:has |was |is )?(?:stopped|halted|terminated|"
         r"aborted)\b[^.]{0,40}?(?:\bdegenerate\b|\b[Nn]a[Nn]\b|\bnot finite\b|"
         r"\bnon-?finite\b|\bdiverg\w*|\binf(?:inite|inity)?\b)",
         detail=NAN_GUARD_STOP),
    # A boosting fit that ran all its rounds, in its library's closing words: LightGBM's
    # `Did not meet early stopping. Best iteration is:`, CatBoost's `bestIteration = 41`
    # and `Shrink model to first 42 iterations.` after its evaluation set's best.
    _sig(EventKind.COMPLETED, r"^Did not meet early stopping\. Best iteration is:|"
         r"^bestIteration = \d+$|^Shrink model to first \d+ iterations\.$"),
    # Any loop's own early stop, in its own words: a sentence that training stops (or
    # ends, halts, terminates) and why — no improvement, patience used up, converged —
    # in either order (`No improvement over 5 epochs, stop training`, `Validation loss
    # has not improved for 10 epochs. Terminating.`, `Converged; halting training`).
    # A configuration's `early_stopping_patience: 10` names no reason said, only a knob;
    # nor does the rule announced before training (XGBoost's and pytorch-tabnet's `Will
    # train until validation stopping metric hasn't improved in 100 rounds.`, `stop if no
    # improvement for 5 epochs`): a condition, not a stop.
    _sig(EventKind.COMPLETED, r"^(?!\s*(?:if|elif|while|#)\b)(?!.*[=:]\s*\d+\s*$)"
         r"(?!.*\b(?:until|unless|if)\b)"
         # (or no progress in other words: the Chinese text-classification loops'
         # `No optimization for a long time, auto-stopping...`)
         # (cut short too: a Conv-TasNet trainer's `Stop training cause no impr for 10
         # epochs`)
         r"(?=.*\b(?:no (?:more )?(?:improvement|impr|optimi[sz]ation|progress)|not improv\w*|"
         r"(?:did|does|has|have)(?:n't| not)"
         r"(?: been)? improv\w*|"
         # (or got no better: `Stopping iteration because model did not get better in
         # the last 25 epochs`, `not getting any better`)
         r"(?:(?:did|does|has|have|is|was)(?:n't| not)|not) (?:(?:get|got|gotten|getting|"
         r"become|became|been) )?(?:any )?better\b|without improv\w*|"
         r"patience (?:is |was |has been )?"
         r"(?:exhausted|reached|exceeded|used up|ran out|run out)|out of patience|"
         r"(?:has |have )?converged)\b)"
         r"(?=.*\b(?:stop(?:s|ping|ped)?|terminat(?:e|es|ed|ing)|halt(?:s|ing|ed)?|"
         r"end(?:s|ing|ed)?\s+(?:the\s+)?training|quit(?:s|ting)?)\b)", flags=_I,
         detail=EARLY_STOP),
    # The run's own stopping condition met: a target it was set (`Target loss of 0.099999
    # achieved at step 6034! Final Loss: 0.0883`, `Desired accuracy reached, stopping`) or
    # the task solved (gym's `Environment solved in 212 episodes!`, `Solved! Running
    # reward is now 195.3`): the loop ends there by design, wherever its plan stood. Not a
    # setting (`target_loss: 0.1`), nor a question or a condition in code.
    _sig(EventKind.COMPLETED, r"^(?!\s*(?:if|elif|while|#)\b)"
         r"(?!\s*[\w ]{0,30}[=:]\s*[\d.]+\s*$)"
         r"(?:.*\b(?:[Tt]arget|[Gg]oal|[Dd]esired|[Rr]equired) "
         r"(?:(?:val(?:idation)?|test|train(?:ing)?) )?"
         r"(?:loss|accuracy|acc|score|reward|return|metric|perplexity|ppl)\b.{0,40}?\b"
         r"(?:achieved|reached|attained|met)\b|"
         r".*\b(?:[Ee]nvironment|[Tt]ask|[Pp]roblem) (?:is |was |has been )?solved"
         r"(?: in| at| after|!|\.?\s*$)|\s*(?:\W\s*)?[Ss]olved!)",
         detail=EARLY_STOP),
    # The run changing its own objective part-way (MACE's `Changing loss based on SWA`
    # at its stochastic-weight-averaging stage, `Switching to the SWA loss`, `loss
    # weights changed`): the loss after it is another function's, its level its own. Not
    # code, a setting's value, or an error message.
    _sig(EventKind.NEW_STAGE, r"^(?!\s*(?:if|elif|while|#|def)\b)(?!.*(?:[Ee]rror|[Ee]xception))"
         r"(?:.*\b(?:[Cc]hang(?:e|es|ed|ing)|[Ss]witch(?:es|ed|ing)?|[Ss]wap(?:s|ped|ping)?)\s+"
         r"(?:(?:the|to|our|of)\s+)*(?:\w+\s+){0,2}?(?:loss|objective|criterion)(?:es)?\b"
         r"(?!\s*[=:]\s*[-\d.])|"
         r".*\b(?:loss|objective|criterion)(?:\s+(?:function|weights?|terms?))?\s+"
         r"(?:(?:is|was|has been)\s+)?(?:changed|switched)\b)",
         detail=OBJECTIVE_CHANGED),
    # The model saved once training is over: what a script does last, however early its
    # training stopped (an early-stopping callback may say nothing).
    # The final model said to be saved, in any case and with its kind named (MLatom's
    # `FINAL ML MODEL CREATED AND SAVED`, mlatom/MLatomF's last report before its wall
    # clock; `Final model saved`): not `CREATE AND SAVE FINAL ML MODEL`, said before.
    _sig(EventKind.COMPLETED, r"^\s*(?:[Ss]aving|[Ss]aved) (?:the )?[Ff]inal "
         r"(?:[Mm]odel|params|parameters|weights|"
         r"checkpoint|policy|network|agent)\b|"
         r"^\s*Saving the model\.?\s*$|"
         r"^\s*(?i:final(?: [\w-]+){0,2} model (?:(?:was|is|has been) )?(?:created and )?saved)\b|"
         # a save into a file its name calls final (CleanRL's `model saved to runs/…/
         # final_ckpt.pt`, detectron2's `model_final.pth`): not a folder so named
         r"\b(?i:sav(?:ed|ing|e)|writ(?:ten|ing|e))\b.{0,80}?(?<![A-Za-z])(?:final|FINAL)"
         r"(?![a-z])[\w.-]*\.(?:pt|pth|ckpt|bin|safetensors|h5|hdf5|keras|pkl|npz|params|"
         r"pdparams|onnx|tar)\b",
         detail="final-save"),
    # (the word in any of the casings scripts print: GCN's `Optimization Finished!`,
    # `TRAINING COMPLETE`)
    _sig(EventKind.COMPLETED, r"(?:[Tt]raining|TRAINING|[Oo]ptimi[sz]ation|OPTIMI[SZ]ATION|"
         r"[Ff]ine-?tuning|FINE-?TUNING) (?:is |has |IS |HAS )?"
         r"(?:[Ff]inished|[Cc]ompleted?|[Dd]one|FINISHED|COMPLETED?|DONE)\b|"
         r"^\d+ epochs completed in [\d.]+ hours|"
         r"Process \d+ exits successfully|"
         r"`?max_(?:steps|epochs)=\d+` reached|[Ff]inished training|"
         r"Trainer\.fit stopped|^Epoch \d+/\d+ (?:done|finished|complete)\b|"
         r"[Tt]raining (?:run )?(?:has )?(?:ended|succeeded)\b|"
         r"^[Ff]inished (?:after )?\d+ (?:steps|iterations|epochs)\b|"
         r"^[Aa]ll epochs (?:done|finished|completed?)\b|"
         r"\"(?:event|status)\":\s*\"(?:train(?:ing)?_?(?:end|ended|finished|completed?|done)|"
         r"finished|completed?|done|succeeded)\""),
)

# Lines that look like errors but are not: warnings about them, hints, retries.
_BENIGN = lazy_re.compile(r"^\s*(?:\S+:\d+: )?(?:\w+)?Warning\b|^\s*warnings\.warn|UserWarning|"
                          r"FutureWarning|DeprecationWarning", _I)

# The closing line of a traceback: `ValueError: bad`, `torch.OutOfMemoryError: ...`,
# `KeyboardInterrupt`. Indented lines belong to the traceback body.
# (the base class raised bare, `raise Exception(…)`, as torch.multiprocessing's spawn does
# for a worker the kernel killed: `Exception: process 1 terminated with signal SIGKILL`,
# sealed-20's HigherHRNet)
# (a wrapper may name the cause in brackets after its class: Ray's
# `ray.exceptions.RayTaskError(UnboundLocalError): ray::_ray_fit() (pid=…)`)
_EXCEPTION_LINE = lazy_re.compile(
    r"^((?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure|Warning|"
    r"Timeout)(?:\([A-Za-z_][\w.]*\))?|(?:Base)?Exception|[A-Z]\w*Error\w*|StopIteration|"
    r"AssertionError)"
    r"(?::\s?(.*))?$"
)

# Cheap literal pre-checks so most lines skip the regex table entirely.
_TRIGGERS = (
    "memory", "Memory", "Killed", "killed", "SIGKILL", "exitcode", "oom", "CUDA",
    "cuda", "CUDNN", "cuDNN", "CUBLAS", "NCCL", "nccl", "Gloo", "gloo", "Timeout",
    "timed out", "Timed out",
    "Traceback", "Segmentation", "SIG", "Fatal", "fatal exception", "core dumped",
    "Bus error", "Aborted",
    "No space", "quota", "Errno", "heckpoint", "Loading best", "est model", "raining",
    "reached", "fit stopped", "Epoch", "illegal", "launch failure", "ECC", "Xid",
    "DistBackend", "RESOURCE_EXHAUSTED", "Allocator", "ailed to allocate request",
    "time limit",
    "saving model", "aved final", "aving final", "best", "eights to", "eights in", "eights as",
    "not saved",
    "inished", "epochs", "chieved",
    "olved", "ttained",
    '"event"', '"status"', "Exception", "signal", "estart", "loss scale", "overflow",
    "Restoring model", "estored best", "estoring best", "oading best", "oading the best",
    "scale is",
    "OVERFLOW", "Successfully", "TERM_", "*** ", "early", "Signaling", "exits", "model",
    "ptimi", "MODEL", "Loss for final", "Check failed", "^C", "received SIG", "Model", "OOM",
    "Model", ".cu:", "unexpected pos", "Safetensor", "serializ", "PytorchStreamWriter",
    "DataLoader worker", "terminate called", "HYDRA_FULL_ERROR", "fallen off", "NVLink",
    "double bit", "Ctrl",
    "早停", "提前停止", "早期終了", "조기", "ừng sớm", "arada ", "rrêt ", "rret ",
    "improve in the last", "EarlyStopping", "Stopping training", "opped early", "arly stop",
    "arly Stop",
    "arly-stop",
    "EARLY", "Exited with exit code", "remainder of ranks", "atchdog caught",
    "HSA_STATUS_ERROR_OUT_OF", "hipErrorOutOfMemory", "srun: error:",
    "mprove", "atience", "onverged",
    "eyboard", "Run is kept", "nterrupted by", "Exhausted", "MemoryError", "bad_alloc",
    "zsh: killed", "Received SIG", "OutOfMemoryError", "cuLaunch", "cuMem", "cuModule",
    "cuGraph", "cuCtx", "cuStream", "cuEvent", "cuInit", "Terminated", "zsh: terminated",
    "no longer exists", ".pl: ", "Hangup", "walltime", "est iteration", "bestIteration",
    "overfitting detector", "Shrink model", "Stopping. Best", "Stopping! Best",
    "TRAINING", "OPTIMI", "tuning ", "TUNING",
    "update end", "find the best", "Job ", "state: ", "Stopped", "suspended", "has stopped",
    "hanging", "hanged", "hange ", "hanges ", "witch", "wap", "lame workers", "preempted",
    *RUNNER_TRIGGERS, *SIGNAL_REPORT_TRIGGERS,
)


def find_events(line: str) -> tuple[LogEvent, ...]:
    """All events one cleaned line carries, in signature order."""
    if not any(t in line for t in _TRIGGERS) and not may_report(line) \
            and not _glog_fatal(line):
        return ()
    benign = _BENIGN.search(line) is not None
    found: list[LogEvent] = []
    seen: set[EventKind] = set()
    for sig in _EVEN_IN_WARNINGS if benign else SIGNATURES:
        if sig.kind in seen:
            continue
        match = sig.pattern.search(line)
        if match is not None and sig.kind in _FAILURE_KINDS and _inside_a_name(line, match.start()):
            # `/runs/Traceback_CUDA out of memory/`: a path, not a message; a real one may
            # still come later in the line (`torch.distributed.DistBackendError: NCCL error`).
            match = next((m for m in sig.pattern.finditer(line, match.end())
                          if not _inside_a_name(line, m.start())), None)
        if match is None:
            continue
        if _quoted(line, match.start()) and not match.group(0).startswith('"'):
            continue  # words inside a quoted string: data, a prompt, a sample — not the run
        if sig.kind is EventKind.NCCL and _SETTING.search(line) and not _HAPPENED.search(line):
            continue  # `Setting NCCL timeout to 1800 seconds`: a setting, not a timeout
        if "\ufffd" in line and "^C" in match.group(0) and line.strip() != "^C":
            # `^C` glued to bytes that are no text (a binary file read as a log: `^CN5h�…`,
            # two characters random bytes make now and then): no terminal's echo
            continue
        if sig.detail_group < 0:  # the first alternative's group that matched
            detail = next((g for g in match.groups() if g is not None), "")
        else:
            detail = (match.group(sig.detail_group) or "") if sig.detail_group else sig.detail
        kind = sig.kind
        if kind is EventKind.JOB_STATE:
            detail = _job_state(line)
        elif kind is EventKind.RESTARTED and "/" in detail:
            left, allowed = (int(x) for x in detail.split("/"))
            detail = f"restart_count={allowed - left + 1}"
        elif kind is EventKind.COMPLETED and detail == EARLY_STOP and "not finite" in line:
            # Lightning's check_finite: `Monitored metric val_loss = nan is not finite. …
            # Signaling Trainer to stop.`: a NaN guard's stop (`nonfinite_words`), not
            # patience spent; the run ends there, unconfirmed
            detail = NAN_GUARD_STOP
        elif kind is EventKind.COMPLETED and not detail \
                and (_part_way(line) or names_a_part(line[:match.start()])):
            # `Epoch 3/10 done`, `Finished training epoch 3/10`, `Epoch: 42 training
            # finished.`: a stage of the run ended.
            kind, detail = EventKind.NEW_STAGE, "a stage finished"
        found.append(LogEvent(kind, line.strip()[:500], detail.rstrip(".,;:'\"")))
        seen.add(sig.kind)
    if EventKind.HARDWARE_FAULT in seen and EventKind.CUDA_ERROR in seen:
        # `CUDA error: uncorrectable ECC error encountered` is the hardware's, not the
        # code's: one event, with the advice that fits.
        found = [e for e in found if e.kind is not EventKind.CUDA_ERROR]
    elif EventKind.OOM in seen and EventKind.CUDA_ERROR in seen:
        # `Failed to instantiate CUDA graph: CUDA_ERROR_OUT_OF_MEMORY`: the device ran
        # out of memory, and said so in a CUDA error's words.
        found = [e for e in found if e.kind is not EventKind.CUDA_ERROR]
    if not found and line[:1].isupper() and ":" in line[:12]:
        # A signature anchored at the message's start, behind Python logging's default
        # head (`INFO:tensorflow:Loss for final step: 0.0025.`, TF1's Estimator under
        # nohup): the message alone is read again.
        body = message(line)
        if body != line:
            return find_events(body)
    return tuple(found)


def _glog_fatal(line: str) -> bool:
    """Cheaply: may this be a FATAL line of glog, absl or TensorFlow's C++ logger (see
    its signature); their other lines (`I0811 …`, `…: W tensorflow/…`) are many."""
    return ": F " in line or (line[:1] == "F" and line[1:5].isdigit())


_FAILURE_KINDS = frozenset({EventKind.OOM, EventKind.CUDA_ERROR})
# A timeout being set or printed as a setting, and words that say one really happened.
_SETTING = lazy_re.compile(r"[Tt]imeout\w*\s*(?:\(\w*\))?\s*(?:=|:\s*\d|to\s+\d|of\s+\d|\d)|"
                           r"[Ss]etting\b|[Ee]xport\b|--\w*timeout")
_HAPPENED = lazy_re.compile(
    r"[Ww]atchdog caught|timed out|timing out|ran for|[Ee]rror|[Ee]xception|"
                       r"[Tt]imeout (?:in|waiting)|[Aa]borting")


def _inside_a_name(line: str, at: int) -> bool:
    """Whether a match that begins with a word begins inside a longer word or a path
    (`Traceback_CUDA out of memory`, `/runs/CUDA error/`); `THCTensor.cu:361:` is not."""
    return at > 0 and line[at].isalpha() and (line[at - 1].isalnum() or line[at - 1] in "_/")


_COUNTER = lazy_re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")
_STAGE_WORDS = lazy_re.compile(r"\b(?:[Ss]tage|[Pp]hase)\s*\d|[Ss]witching to|[Mm]oving on to|"
                               r"[Ss]tarting (?:stage|phase|the next)|[Nn]ext (?:stage|phase)")


def _part_way(line: str) -> bool:
    """Whether a line that says training finished names a counter short of its end
    (`epoch 3/10`) or a stage of a larger run (`stage 1 ... switching to stage 2`)."""
    for match in _COUNTER.finditer(line):
        done, total = int(match.group(1)), int(match.group(2))
        if 0 <= done < total:
            return True
    return _STAGE_WORDS.search(line) is not None


# Fields of a structured (JSON) log line that hold the run's own words, not data.
_MESSAGE_KEY = lazy_re.compile(r'"(?:msg|message|event|status|log|error|detail|text_log)"\s*:\s*"'
                               r'[^"]*$')


def _quoted(line: str, at: int) -> bool:
    """Whether position `at` lies inside a quoted string of the line (an odd number of
    double quotes before it, and one after) that is data: a sample, a prompt, a config
    value — not the message field of a structured log line."""
    before = line.count('"', 0, at)
    if before % 2 == 0 or '"' not in line[at:]:
        return False
    return _MESSAGE_KEY.search(line, 0, at) is None


# Warnings that are, all the same, what a launcher or a scaler says about the run.
_NEVER_BENIGN = frozenset({EventKind.CHECKPOINT_SAVED, EventKind.COMPLETED,
                           EventKind.BEST_CHECKPOINT, EventKind.STOPPED_BY_SIGNAL,
                           EventKind.WORKERS_STOPPED, EventKind.RESTARTED,
                           EventKind.LOSS_SCALE, EventKind.LOSS_SCALE_FLOOR,
                           EventKind.BEST_RESTORED})
_EVEN_IN_WARNINGS = tuple(s for s in SIGNATURES if s.kind in _NEVER_BENIGN or s is _NOT_SAVED)


_LAUNCHER_STATE = lazy_re.compile(r"\bJob\b.*?\b(SUCCEEDED|FAILED|CANCELL?ED|STOPPED|succeeded|"
                                  r"failed)\b")


def _job_state(line: str) -> str:
    """The terminal state a scheduler's line names (SUCCEEDED, CANCELLED, TIMEOUT)."""
    if "Successfully completed" in line:
        return "SUCCEEDED"
    if line.startswith("state: "):
        # a cloud job's description: `state: SUCCEEDED`, `state: JOB_STATE_FAILED`
        said = line.split()[-1].removeprefix("JOB_STATE_")
        return said if said in ("SUCCEEDED", "FAILED") else "CANCELLED"
    launcher = _LAUNCHER_STATE.search(line)
    if launcher is not None:
        said = launcher.group(1).upper()
        return "SUCCEEDED" if said.startswith("SUCC") else "FAILED" if said.startswith("FAIL") \
            else "CANCELLED"
    if "RUNLIMIT" in line or "TIME LIMIT" in line or "walltime" in line \
            or "exceeded its time limit" in line:
        return "TIMEOUT"
    if line.startswith("Exited with exit code"):
        # 128 + the signal: SIGHUP, SIGINT, SIGTERM are a stop asked for.
        return "CANCELLED" if line.split()[4].rstrip(".") in ("129", "130", "143") \
            else "FAILED"
    if "MEMLIMIT" in line:
        return "FAILED"
    if "NODE FAILURE" in line or "lame workers" in line or "preempted" in line:
        # Slurm's NODE_FAIL, a TPU worker lost: the job died with its machine, nobody
        # stopped it
        return "FAILED"
    return "CANCELLED"


def exception_line(line: str) -> tuple[str, str] | None:
    """`(exception name, message)` when the line closes a traceback, else None."""
    if not line or line[0].isspace():
        return None
    match = _EXCEPTION_LINE.match(line.rstrip())
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()


# Inside a traceback, its closing line may name a class of any name: a module's path to
# it (`torch._inductor.exc.TritonMissing: Cannot find a working triton installation`,
# `torch._dynamo.exc.BackendCompilerFailed: …`), or a CamelCase name with its message.
_RAISED_ANY = lazy_re.compile(
    r"^((?:[A-Za-z_]\w*\.)+[A-Z]\w*|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?::\s?(.*))?$")


def raised_line(line: str) -> tuple[str, str] | None:
    """`(exception name, message)` when a line read inside a traceback closes it: what
    `exception_line` knows, or a class of any name in that place (see `_RAISED_ANY`); a
    bare CamelCase word needs its message (a wrapped piece of a path is no class)."""
    found = exception_line(line)
    if found is not None or not line or line[0].isspace():
        return found
    match = _RAISED_ANY.match(line.rstrip())
    if match is None or ("." not in match.group(1) and not match.group(2)):
        return None
    return match.group(1), (match.group(2) or "").strip()

"""A stop said by the process itself: a native signal handler's report, or the run's own
sentence that its user interrupted it, in the language the run logs in.

Native signal handlers print the signal that ended the process before it dies:

- PaddlePaddle (`paddle/fluid/platform/init.cc`, `SignalHandle`) prints, under its C++
  traceback and `Error Message Summary:`, `FatalError: `<description>` is detected by the
  operating system.`, the description one of `Segmentation fault`, `Illegal
  instruction`, `Erroneous arithmetic operation`, `Aborted`, `Bus error` or `Termination
  signal`, then `[SignalInfo: *** SIGTERM (@0x3e800001ef9) received by PID 7866 (TID …)
  from PID 7929 ***]` (AttnGAN-Paddle under nohup, sealed-10);
- glog's failure signal handler (`InstallFailureSignalHandler`, used by many C++
  runtimes) the same `*** SIGTERM (@0x…) received by PID N (TID …) from PID M; stack
  trace: ***`;
- Abseil's (`absl/debugging/failure_signal_handler.cc`, installed by Ray, gRPC and
  TensorFlow's C++ core) `*** SIGTERM received at time=1759944335 on cpu 0 ***`. Ray
  prints it too for each worker it tears down while the driver trains on (sealed-13's
  LMAPF run: the stack, then episodes, then the final model saved): like any failure, it
  stands only if no training follows it (`core.lifecycle`), and W&B's `(success)` after
  it is the stopped process's clean exit, not a finish (sealed-29's LMAPF run).

A parent process may say it instead: Python's `subprocess.CalledProcessError` reads
`Command '[…]' died with <Signals.SIGTERM: 15>.` when the child it ran was ended by a
signal (a launcher script running `flower-simulation`, `torchrun`, a training script),
the signal as `repr(signal.Signals)`.

`Termination signal` / SIGTERM (and SIGINT, SIGHUP) is a stop sent from outside — a
scheduler, the owner, a launcher stopping its workers: CANCELLED, as the shell's
`Terminated` is. Every other description is the process dying of its own fault (a
segmentation fault, a floating-point exception): a crash.

A loop that catches Ctrl-C often says so in its own words and saves before it exits
(`Entrenamiento interrumpido por el usuario.`, then `Checkpoint final guardado en …`:
AlphaZero_Connect4, sealed-10; `Training interrupted by user`): the run was stopped by its
user, whatever language it says it in. The words are those of "interrupted / stopped /
cancelled / aborted by the user" in the languages training code is commonly written in.
"""

from __future__ import annotations

# What Abseil's handler says (`*** SIGTERM received at time=… on cpu N ***`).
ABSEIL_STOP = "received at time="
# Paddle's and glog's report of a stop signal: the signal's description or its name.
# (and the Intel Fortran runtime's, which numpy's and torch's MKL bring into a Windows
# process: `forrtl: error (200): program aborting due to control-C event`, or to the
# console window being closed, `window-CLOSE event`: the user stopped it)
NATIVE_STOP = (r"FatalError: `(Termination signal|Interrupt|Hangup)` is detected by the "
               r"operating system|\*\*\* (SIG(?:TERM|INT|HUP)) \(@0x[0-9a-f]+\) received by PID|"
               r"\*\*\* (SIG(?:TERM|INT|HUP)) received at time=\d+|"
               r"forrtl: error \(20[01]\): program aborting due to ((?:control-C|control-BREAK|"
               r"window-CLOSE|logoff|shutdown) event)|"
               # the run's own handler, in its words: babble-rnn's `Interrupt signal
               # caught. Closing gracefully.`, `Caught SIGTERM, saving and exiting`
               r"\b((?:[Ii]nterrupt|[Tt]ermination|SIG(?:INT|TERM|HUP)) signal (?:was )?"
               r"(?:caught|received|detected))\b|"
               r"\b((?:[Cc]aught|[Gg]ot) (?:signal )?SIG(?:INT|TERM|HUP))\b")
# Python's report that a child process died of a stop signal (`CalledProcessError`).
CHILD_STOPPED = r"died with <Signals\.(SIG(?:TERM|INT|HUP)): \d+>"
# Paddle's report of any other fatal signal: the process died of it.
NATIVE_FAULT = (r"(FatalError: `(?!Termination signal|Interrupt|Hangup)[^`]+` is detected by "
                r"the operating system)")

# "interrupted by the user", in English, Spanish, Portuguese, French, Italian, German and
# Chinese: a verb of stopping, then "by (the) user" (or the language's order of them).
_STOPPED_EN = r"(?:interrupted|stopped|cancell?ed|aborted|terminated|halted)"
USER_STOP = (
    rf"\b({_STOPPED_EN} by (?:the )?user)\b|"
    r"\b((?:interrumpid|detenid|cancelad|abortad|interrompid|parad)[oa]s? "
    r"(?:por el|pelo|por o) (?:usuario|usuário|utilizador)|"
    r"(?:interrompu|arrêté|annulé)e?s? par l'utilisateur|"
    r"(?:interrott|annullat|fermat)[oa] dall'utente|"
    r"(?:vom|durch den) (?:Benutzer|Nutzer|Anwender) (?:abgebrochen|unterbrochen|gestoppt))|"
    r"((?:被)?用户(?:手动)?(?:中断|终止|停止|取消))")

# Cheap literal pre-checks (see `events._TRIGGERS`).
TRIGGERS = ("is detected by the operating system", "received by PID", "received at time=",
            "program aborting due to", "signal caught", "signal received",
            "signal was ", "signal detected", "aught SIG", "ot SIG", "aught signal SIG",
            "ot signal SIG",
            "died with <Signals.", " by user",
            " by the user", "usuario", "usuário", "utilizador", "utilisateur", "utente",
            "Benutzer", "Nutzer", "Anwender", "用户")

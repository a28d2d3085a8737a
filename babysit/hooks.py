"""Lines a training loop can write for babysit to read: one JSON object per line.

    from babysit.hooks import Monitor

    with Monitor("train.log") as mon:
        mon.config(model_params=124e6, tokens_per_step=524288, total_steps=5000)
        for step in range(1, 5001):
            ...
            mon.step(step, loss=loss, lr=lr, grad_norm=norm, tokens=524288, step_time=dt)
        mon.checkpoint("out/ckpt-5000")
        mon.done()

This module uses the standard library only and imports nothing else from babysit, so
importing it costs a training script next to nothing. Each method writes one line in a
shape babysit's log parser reads (references/log-formats.md, "Writing lines babysit
reads"); the shapes are checked against the parser in tests/test_hooks.py.

Metric lines: `{"step": 10, "loss": 2.31, "lr": 0.0003, ..., "total_steps": 5000}`.
A NaN or infinite value is written `NaN` / `Infinity` / `-Infinity`, as Python's json
module writes and reads them (strict JSON has no such tokens). A value of None is left
out: a metric the run did not measure is absent, never a made-up number.

Event lines carry `"event"` and, where babysit matches text, a `"msg"` in words it
recognises: `{"event": "checkpoint_saved", "step": 100, "msg": "successfully saved
checkpoint from iteration 100 to out/ckpt-100", "path": "out/ckpt-100"}`.

Buffering: metric lines are buffered and flushed at most `flush_every` seconds apart
(checked when a line is written; there is no background thread). Event lines and any
line with a non-finite value are flushed at once, and so is everything at exit, on
`flush()` and on `close()`. `flush_every=0` flushes every line; `None` leaves flushing
to `flush()`, `close()` and the file's own buffer.

A Monitor never breaks the run it watches: a write that fails (a full disk, a closed
stream), a value that cannot be formatted (its `str()` raises) or a call given a value
it cannot use (`phase("x")`, `total=0`) is swallowed and counted, the first one also
said once on stderr. The count and the last error go into the next line that can be
written, as `{"event": "hook_errors", "msg": "babysit.hooks: N lines or values could
not be written (last: OSError: …)"}` (the count in the words only: a number field would
be read as a metric), so babysit's reader learns of lines it never got. Only a bad
`flush_every`, given before the loop starts, raises.

A Monitor is not thread-safe: call it from the training loop's thread. In a
distributed run, give it a target on one rank only: `Monitor(path if rank == 0 else
None)` writes nothing on the others.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
import weakref

TYPE_CHECKING = False  # typing costs a few ms to import: only the type checker needs it
if TYPE_CHECKING:
    from types import TracebackType
    from typing import IO, Any

__all__ = ["Monitor"]

# The phases babysit tells apart from a log line (its stall allowance differs).
PHASES = ("train", "eval")
# Metric names babysit takes as evaluation metrics (babysit.metric_names).
_EVAL_PREFIXES = ("eval_", "eval/", "val_", "val/", "valid_", "valid/", "validation_",
                  "validation/", "dev_", "dev/")

_key_text: dict[str, str] = {}  # metric name -> `, "name": ` (JSON-escaped once)


def _key(name: str) -> str:
    text = _key_text.get(name)
    if text is None:
        if len(_key_text) > 4096:  # names made up per step: keep the cache bounded
            _key_text.clear()
        text = _key_text[name] = f", {json.dumps(str(name), ensure_ascii=False)}: "
    return text


def _number(value: Any) -> str:
    """A value as JSON text: NaN and ±Infinity spelled as Python's json reads them."""
    if value.__class__ is float:
        if value - value == 0.0:  # finite (nan - nan and inf - inf are both nan)
            return repr(value)
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if value.__class__ is int:
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        as_float = float(value)  # numpy scalars, 0-d tensors, Decimal, int/float subclasses
    except Exception:  # not a number (a tensor of many values...): kept as text, unread
        return json.dumps(str(value)[:200], ensure_ascii=False)
    if isinstance(value, int):  # an int subclass (an IntEnum): keep it whole
        return repr(int(value))
    return _number(as_float)


def _text(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _shown(value: object) -> str:
    """`repr(value)`, or a stand-in when even that raises."""
    try:
        return repr(value)[:200]
    except Exception:
        return f"<a {type(value).__name__} that cannot be shown>"


def _describe(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:
        text = "(its message cannot be shown)"
    return f"{type(error).__name__}: {text}"[:300]


def _whole(value: float) -> str:
    """A count (parameters, tokens) as digits: `124000000`, not `124000000.0`."""
    number = float(value)
    if not (number > 0 and number - number == 0.0):
        raise ValueError(f"expected a positive finite number, got {value!r}")
    return str(round(number))


class _Discard:
    """Where a Monitor with no target writes."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class Monitor:
    """Writes a training run's progress as lines babysit reads.

    `target`: a path (opened for appending, as UTF-8; missing folders are made), a text
    file object (`sys.stdout`, an open log file: written to, never closed), or None
    (write nothing: for the ranks that should not log).
    """

    def __init__(self, target: str | os.PathLike[str] | IO[str] | None, *,
                 flush_every: float | None = 1.0) -> None:
        if flush_every is not None and flush_every < 0:
            raise ValueError("flush_every must be >= 0 seconds, or None")
        self._off = target is None
        self._owned = False
        self._errors = 0  # lines or values lost to an error, all told
        self._errors_told = 0  # the count the last written error line carried
        self._last_error = ""
        self._file: IO[str] | _Discard
        if target is None:
            self._file = _Discard()
        elif isinstance(target, (str, os.PathLike)):
            try:
                folder = os.path.dirname(os.fspath(target))
                if folder:
                    os.makedirs(folder, exist_ok=True)
                self._file = open(target, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())
                self._owned = True
            except Exception as error:  # an unwritable place must not stop the training
                self._file = _Discard()
                self._failed(error)
        else:
            self._file = target
        self._write = self._file.write
        self._flush_every = flush_every
        self._last_flush = time.monotonic()
        self._step: int | None = None  # the last step written
        self._total: int | None = None  # the planned steps, once known
        self._total_text = ""
        ref = weakref.ref(self)

        def flush_at_exit() -> None:
            monitor = ref()
            if monitor is not None:
                monitor._flush_quietly()

        self._at_exit = flush_at_exit
        atexit.register(flush_at_exit)

    # --- what the run is --------------------------------------------------------------

    def config(self, *, model_params: float | None = None,
               tokens_per_step: float | None = None,
               total_steps: int | None = None) -> None:
        """What the run says about itself once, at its start: the model's parameter
        count and the tokens one optimizer step trains on (babysit's MFU inputs), and
        the planned number of steps. Each is written on its own line; one left None is
        not written. The planned steps are also repeated on every step line after."""
        if self._off:
            return
        try:
            self._config(model_params, tokens_per_step, total_steps)
        except Exception as error:
            self._failed(error)

    def _config(self, model_params: float | None, tokens_per_step: float | None,
                total_steps: int | None) -> None:
        if model_params is not None:
            self._event("config", f', "msg": "number of parameters: {_whole(model_params)}"')
        if tokens_per_step is not None:
            # babysit reads `tokens per step: N` as step N: nanoGPT's words are read right.
            self._event("config", ', "msg": "tokens per iteration will be: '
                        f'{_whole(tokens_per_step)}"')
        if total_steps is not None:
            self._set_total(total_steps)
            self._event("config", f', "total_steps": {self._total}')

    def _set_total(self, total: int) -> None:
        number = int(total)
        if number <= 0:
            raise ValueError(f"total steps must be positive, got {total!r}")
        if number != self._total:
            self._total = number
            self._total_text = f', "total_steps": {number}'

    # --- progress ---------------------------------------------------------------------

    def step(self, step: int, loss: float | None = None, lr: float | None = None,
             grad_norm: float | None = None, *, tokens: float | None = None,
             step_time: float | None = None, model_flops: float | None = None,
             total: int | None = None, **metrics: Any) -> None:
        """One optimizer step: `step` counts them; `tokens` is the tokens it trained on,
        `step_time` its seconds, `model_flops` its model FLOPs, `total` the planned
        steps (remembered, and written on every line after). With both `tokens` and
        `step_time`, the rate `tokens/s` is written too. Any other keyword is written as
        a metric of that name (`epoch=` is read as the epoch)."""
        if self._off:
            return
        try:  # free when nothing raises (Python 3.11+): the hot path pays nothing
            if step.__class__ is not int:
                step = int(step)
            self._step = step
            # Finite floats, the common case, are written inline (a call costs as much as
            # the formatting); everything else goes through _number.
            line = '{"step": ' + repr(step)
            if loss is not None:
                line += ', "loss": ' + (repr(loss) if loss.__class__ is float
                                        and loss - loss == 0.0 else _number(loss))
            if lr is not None:
                line += ', "lr": ' + (repr(lr) if lr.__class__ is float and lr - lr == 0.0
                                      else _number(lr))
            if grad_norm is not None:
                line += ', "grad_norm": ' + (repr(grad_norm) if grad_norm.__class__ is float
                                             and grad_norm - grad_norm == 0.0
                                             else _number(grad_norm))
            if tokens is not None:
                line += ', "tokens": ' + (repr(tokens) if tokens.__class__ is int
                                          else _number(tokens))
                if step_time is not None:
                    try:
                        rate = float(tokens) / float(step_time)
                    except (ZeroDivisionError, TypeError, ValueError):
                        pass
                    else:
                        # Derived, so 7 digits: a full repr of the quotient costs 3× more.
                        line += ', "tokens/s": ' + (f"{rate:.7g}" if rate - rate == 0.0
                                                    else _number(rate))
            if step_time is not None:
                line += ', "step_time": ' + (repr(step_time) if step_time.__class__ is float
                                             and step_time - step_time == 0.0
                                             else _number(step_time))
            if model_flops is not None:
                line += ', "model_flops": ' + (repr(model_flops)
                                               if model_flops.__class__ is float
                                               and model_flops - model_flops == 0.0
                                               else _number(model_flops))
            if metrics:
                for name, value in metrics.items():
                    if value.__class__ is float and value - value == 0.0:
                        line += (_key_text.get(name) or _key(name)) + repr(value)
                    elif value is not None:
                        try:  # a value that cannot be written costs it, not the line
                            line += _key(name) + _number(value)
                        except Exception as error:
                            self._failed(error)
            if total is not None and total != self._total:
                self._set_total(total)
            errors = self._errors
            if errors != self._errors_told:
                line = self._error_line() + line
            self._write(line + self._total_text + "}\n")
            self._errors_told = errors
            if "NaN" in line or "Infinity" in line:
                self.flush()  # the step where it went wrong must not wait in a buffer
            elif self._flush_every is not None:
                now = time.monotonic()
                if now - self._last_flush >= self._flush_every:
                    self._file.flush()
                    self._last_flush = now
        except Exception as error:
            self._failed(error)

    def eval(self, step: int | None = None, **metrics: Any) -> None:
        """An evaluation at `step` (default: the last step written). A name without an
        evaluation prefix gets `eval_` (`loss` → `eval_loss`), so babysit judges it as
        an evaluation metric rather than as the training loss."""
        if self._off:
            return
        try:
            self._eval(step, metrics)
        except Exception as error:
            self._failed(error)

    def _eval(self, step: int | None, metrics: dict[str, Any]) -> None:
        if step is None:
            step = self._step
        parts = [] if step is None else ['"step": ' + repr(int(step))]
        for name, value in metrics.items():
            if value is None:
                continue
            name = str(name)
            if not name.lower().startswith(_EVAL_PREFIXES):
                name = "eval_" + name
            parts.append(_key(name)[2:] + _number(value))
        if len(parts) > (step is not None):
            self._emit("{" + ", ".join(parts) + "}\n")
            self.flush()

    def phase(self, name: str) -> None:
        """What the run is about to do: "eval" (babysit then allows the quiet of an
        evaluation before it calls the run stalled) or "train" (babysit goes back to
        training at the next step line; this line only marks it in the log)."""
        if self._off:
            return
        if name not in PHASES:
            self._failed(ValueError(f"phase must be one of {', '.join(PHASES)}, got "
                                    f"{_shown(name)}"))
            return
        # babysit's evaluation banners include `Evaluating`.
        self._event("phase", ', "phase": "eval", "msg": "Evaluating"' if name == "eval"
                    else ', "phase": "train"')

    # --- events -----------------------------------------------------------------------

    def checkpoint(self, path: str | os.PathLike[str], ok: bool = True, *,
                   step: int | None = None, error: str | None = None) -> None:
        """A checkpoint save that completed (`ok=True`) or failed (`ok=False`, with the
        `error` if there is one). `step` defaults to the last step written. babysit
        names the newest good checkpoint and never one whose save failed; it reads the
        path up to the first space, so a path with spaces is known by its first word."""
        if self._off:
            return
        try:
            self._checkpoint(path, ok, step, error)
        except Exception as problem:
            self._failed(problem)

    def _checkpoint(self, path: str | os.PathLike[str], ok: bool, step: int | None,
                    error: str | None) -> None:
        where = os.fspath(path)
        at = self._step if step is None else int(step)
        at_text = "" if at is None else f', "step": {at}'
        if ok:
            # Megatron's words, read whatever the path looks like (the other forms want a
            # path with a separator or a digit in it, and no "error" or "fail" anywhere).
            # The path follows the message: babysit reads the path up to a space and
            # strips the quote and comma that end the message.
            msg = f"successfully saved checkpoint from iteration {at or 0} to {where}"
            self._event("checkpoint_saved", f'{at_text}, "msg": {_text(msg)}, '
                                            f'"path": {_text(where)}')
        else:
            fields = f'{at_text}, "msg": {_text(f"failed to save checkpoint to {where}")}, ' \
                     f'"path": {_text(where)}'
            if error:
                fields += f', "error": {_text(str(error))}'
            self._event("checkpoint_failed", fields)

    def done(self, step: int | None = None) -> None:
        """Training finished as planned (babysit: SUCCEEDED). `step` defaults to the
        last step written."""
        if self._off:
            return
        try:
            at = self._step if step is None else int(step)
        except Exception as error:
            self._failed(error)
            return
        self._event("train_end", "" if at is None else f', "step": {at}')

    def exception(self, error: BaseException | None = None) -> None:
        """Write a failure as Python prints it (`Traceback (most recent call last):` …
        `ValueError: …`), the text babysit reads as a crash: for a log that does not
        get the script's stderr. Default: the exception being handled. Leaving a
        `with Monitor(...)` block on an exception writes it too."""
        if self._off:
            return
        if error is None:
            error = sys.exc_info()[1]
            if error is None:
                return
        try:
            import traceback  # only when the run fails

            text = "".join(traceback.format_exception(type(error), error,
                                                      error.__traceback__))
            self._emit(text if text.endswith("\n") else text + "\n")
            self.flush()
        except Exception as problem:
            self._failed(problem)

    def _event(self, kind: str, fields: str) -> None:
        try:
            self._emit(f'{{"event": "{kind}"{fields}}}\n')
            self.flush()
        except Exception as error:
            self._failed(error)

    # --- errors: counted, never raised into the training loop -------------------------

    def _emit(self, text: str) -> None:
        """Write `text`, after the line telling of errors not yet told."""
        errors = self._errors
        if errors != self._errors_told:
            text = self._error_line() + text
        self._write(text)
        self._errors_told = errors  # told only once the write went through

    def _error_line(self) -> str:
        """The error event line and its newline. It starts with a newline too: a write
        that failed may have left half a line in the file."""
        count = self._errors
        msg = (f"babysit.hooks: {count} line{'s' if count != 1 else ''} or "
               f"value{'s' if count != 1 else ''} could not be written "
               f"(last: {self._last_error})")
        return f'\n{{"event": "hook_errors", "msg": {_text(msg)}}}\n'

    def _failed(self, error: BaseException) -> None:
        self._errors += 1
        self._last_error = _describe(error)
        if self._errors == 1:  # said once, where a person sees it; later ones only counted
            try:  # noqa: SIM105 (contextlib is not imported for this)
                sys.stderr.write(f"babysit.hooks: {self._last_error} (the training goes "
                                 "on; later errors are counted in the log)\n")
            except Exception:
                pass

    # --- the file ---------------------------------------------------------------------

    def flush(self) -> None:
        """Hand what is buffered to the operating system (babysit sees it then)."""
        self._last_flush = time.monotonic()
        try:
            self._file.flush()
        except Exception as error:
            self._failed(error)

    def _flush_quietly(self) -> None:
        try:
            if not getattr(self._file, "closed", False):
                self._file.flush()
        except Exception:
            pass  # at exit, a closed or broken stream is not worth a traceback

    def close(self) -> None:
        """Flush, and close the file if the Monitor opened it. Idempotent."""
        atexit.unregister(self._at_exit)
        try:
            if getattr(self._file, "closed", False):
                return
            if self._errors != self._errors_told:
                self._emit("")
            self._file.flush()
        except Exception as error:
            self._failed(error)
        finally:
            if self._owned and not getattr(self._file, "closed", False):
                try:
                    self._file.close()
                except Exception as error:  # a failed final flush: counted, not raised
                    self._failed(error)

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            if error is not None and not isinstance(error, GeneratorExit) and not (
                    isinstance(error, SystemExit) and error.code in (0, None)):
                self.exception(error)
        finally:
            self.close()

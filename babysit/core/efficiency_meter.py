"""How efficiently the run uses its GPUs, from what it already prints: MFU over a window
of updates, tokens per second, and goodput (the share of watched time the run made
progress). Every figure is labelled with its inputs; a missing input makes the figure
unavailable with the reason, never a guess."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

from babysit.config import EfficiencySettings
from babysit.efficiency.flops import flops_per_token
from babysit.efficiency.mfu import Update, mfu
from babysit.efficiency.peaks import peak_for
from babysit.model import Record

_WINDOW = 20  # updates in the MFU window
# Keys a log uses for tokens per second, per step time in ms / s, samples per second.
# (torchtitan's `tps` is per device: left out rather than misread as the run's total.)
_TOKENS_RATE = ("tokens/s", "tok/s", "tokens_per_second", "tokens_per_sec", "tokens/sec",
                "train_tokens_per_second")
_STEP_MS = ("time_ms", "step_time_ms", "iter_time_ms")
_STEP_S = ("step_time", "iter_time", "time_per_step", "train/step_time")
_SAMPLES_RATE = ("samples/s", "samples_per_second", "train_samples_per_second",
                 "samples/sec")
# The text formats that print MFU (nanoGPT, torchtitan) print a percentage; trackers
# usually log a fraction.
_LOG_MFU_PERCENT = ("mfu", "MFU")
_LOG_MFU_TRACKER = ("train/mfu",)
_TIMING_KEYS = frozenset((*_TOKENS_RATE, *_STEP_MS, *_STEP_S, *_SAMPLES_RATE, "model_flops"))
_DISAGREE = 0.2  # relative difference between the log's MFU and babysit's worth a flag


@dataclass(frozen=True)
class Efficiency:
    """The figures at one moment (the artifact's `efficiency` object)."""

    status: str  # "estimated" or "unavailable"
    mfu: float | None = None  # a fraction, not clamped
    reason: str = ""  # why unavailable
    inputs: dict[str, Any] = field(default_factory=dict)
    leaves_out: str = ""
    tokens_per_second: float | None = None
    log_mfu: float | None = None  # what the run printed, as a fraction
    disagreement: str = ""
    goodput: float | None = None

    def short(self) -> str:
        """`MFU ~31% (est.)` for the progress line; empty when unavailable."""
        if self.mfu is None:
            return ""
        return f"MFU ~{100 * self.mfu:.3g}% (est.)"

    def to_json(self) -> dict[str, Any]:
        return {"mfu": {"status": self.status,
                        "value": None if self.mfu is None else round(self.mfu, 6),
                        "reason": self.reason or None, "inputs": self.inputs,
                        "leaves_out": self.leaves_out or None,
                        "log_reported": self.log_mfu, "disagreement": self.disagreement or None},
                "tokens_per_second": None if self.tokens_per_second is None
                else round(self.tokens_per_second, 3),
                "goodput": None if self.goodput is None else round(self.goodput, 4)}


class EfficiencyMeter:
    def __init__(self, settings: EfficiencySettings) -> None:
        self.settings = settings
        self.facts: dict[str, float] = {}
        self._updates: deque[Update] = deque(maxlen=_WINDOW)
        self._flops_updates: deque[tuple[float, float]] = deque(maxlen=_WINDOW)
        self._last_step: int | None = None
        self._last_time: float | None = None
        self._log_mfu: float | None = None
        self._rate_only = False  # tokens/s weighted by nothing better than equal shares
        self._productive = 0.0
        self._watched = 0.0
        self._polls = 0

    # --- taking records in ---------------------------------------------------------------

    def observe(self, record: Record) -> None:
        if record.facts:
            self.facts.update(record.facts)
            if not record.metrics:
                return
        metrics = record.metrics
        if not metrics or record.sparse:
            return
        for key in _LOG_MFU_PERCENT:
            if key in metrics and metrics[key] >= 0:  # nanoGPT's first iteration says -100
                self._log_mfu = metrics[key] / 100
        for key in _LOG_MFU_TRACKER:
            if key in metrics and metrics[key] >= 0:
                self._log_mfu = metrics[key] if metrics[key] <= 1.5 else metrics[key] / 100
        steps = 1
        if record.step is not None and self._last_step is not None:
            steps = max(1, record.step - self._last_step)
        if record.step is not None:
            self._last_step = record.step
        if metrics.keys().isdisjoint(_TIMING_KEYS):
            return  # nothing here times a step (most tracker rows, eval records)
        per_step = self._tokens_per_step()
        seconds = self._step_seconds(metrics)
        flops = metrics.get("model_flops")
        if seconds is not None and flops is not None and flops > 0:
            # The run counted its own useful FLOPs for this step (babysit.hooks'
            # model_flops): exact for variable workloads, no per-token estimate needed.
            self._flops_updates.append((flops, seconds))
        if seconds is not None and per_step is not None:
            # A per-step time covers the step it is printed with (nanoGPT's `dt`).
            self._updates.append(Update(per_step, seconds))
            return
        rate = self._tokens_rate(metrics)
        if rate is None or rate <= 0:
            return
        if per_step is not None:
            tokens = steps * per_step
            self._updates.append(Update(tokens, tokens / rate))
        elif record.time is not None and self._last_time is not None \
                and record.time > self._last_time:
            gap = record.time - self._last_time
            self._updates.append(Update(rate * gap, gap))
        else:
            self._rate_only = True
            self._updates.append(Update(rate, 1.0))
        if record.time is not None:
            self._last_time = record.time

    def _tokens_per_step(self) -> float | None:
        return self.settings.tokens_per_step or self.facts.get("tokens_per_step")

    @staticmethod
    def _step_seconds(metrics: dict[str, float] | Any) -> float | None:
        for key in _STEP_MS:
            if key in metrics and metrics[key] > 0:
                return float(metrics[key]) / 1000
        for key in _STEP_S:
            if key in metrics and metrics[key] > 0:
                return float(metrics[key])
        return None

    def _tokens_rate(self, metrics: dict[str, float] | Any) -> float | None:
        for key in _TOKENS_RATE:
            if key in metrics:
                return float(metrics[key])
        seq = self.settings.seq_len
        for key in _SAMPLES_RATE:
            if key in metrics and seq:
                return float(metrics[key]) * seq
        return None

    def poll(self, seconds: float, progressed: bool) -> None:
        """Account a stretch of watched time: productive when the run moved."""
        self._polls += 1
        self._watched += seconds
        if progressed:
            self._productive += seconds

    # --- the figures ---------------------------------------------------------------------

    def _peak(self) -> tuple[float, str, str] | str:
        s = self.settings
        if s.peak_tflops is not None:
            return s.peak_tflops, "given (--peak-tflops)", s.precision
        if s.gpu is None:
            return "no GPU type: pass --gpu (e.g. h100-sxm, a100) or --peak-tflops"
        found = peak_for(s.gpu, s.precision)
        if isinstance(found, str):
            return found
        return found.tflops, f"{found.gpu} {found.precision}: {found.source}", found.precision

    def _from_reported_flops(self, rate: float | None, log_mfu: float | None,
                             goodput: float | None) -> Efficiency | None:
        """MFU from the FLOPs the run reported per step, when it did and the hardware
        is known."""
        if not self._flops_updates or self.settings.gpus is None:
            return None
        peak = self._peak()
        if isinstance(peak, str):
            return None
        flops = sum(f for f, _ in self._flops_updates)
        seconds = sum(t for _, t in self._flops_updates)
        if seconds <= 0:
            return None
        value = flops / seconds / (self.settings.gpus * peak[0] * 1e12)
        inputs = {"formula": "model_flops reported by the run for each step",
                  "peak_tflops_per_gpu": peak[0], "peak_source": peak[1],
                  "precision": peak[2], "gpus": self.settings.gpus,
                  "window_updates": len(self._flops_updates)}
        return Efficiency("estimated", value, inputs=inputs, tokens_per_second=rate,
                          log_mfu=log_mfu, goodput=goodput)

    def now(self) -> Efficiency:
        """The figures now. An MFU above 100 % (babysit's or the run's own) is not a
        figure but a reading error: one of its inputs is wrong, so it is reported as
        such, never as a value."""
        return _plausible(self._now())

    def _now(self) -> Efficiency:
        s = self.settings
        # One look (--once) says nothing about time lost: goodput needs a watch.
        goodput = self._productive / self._watched if self._polls >= 1 and \
            self._watched > 0 else None
        params = s.model_params or self.facts.get("model_params")
        per_token = flops_per_token(given=s.flops_per_token, params=params, layers=s.layers,
                                    width=s.width, seq_len=s.seq_len)
        rate = None
        if self._updates:
            total = sum(u.seconds for u in self._updates)
            rate = sum(u.tokens for u in self._updates) / total if total > 0 else None
        log_mfu = self._log_mfu

        def unavailable(reason: str) -> Efficiency:
            return Efficiency("unavailable", reason=reason, tokens_per_second=rate,
                              log_mfu=log_mfu, goodput=goodput)

        measured = self._from_reported_flops(rate, log_mfu, goodput)
        if measured is not None:
            return measured
        if isinstance(per_token, str):
            return unavailable(per_token)
        found_peak = self._peak()
        if isinstance(found_peak, str):
            return unavailable(found_peak)
        peak, source, precision = found_peak
        if s.gpus is None:
            return unavailable("the number of GPUs is not known: pass --gpus")
        if not self._updates:
            return unavailable("no tokens per second yet: the log shows neither tokens/s, "
                               "nor a step time with tokens per step (pass "
                               "--tokens-per-step), nor samples/s with --seq-len")
        found_mfu = mfu(list(self._updates), per_token.value, s.gpus, peak)
        if found_mfu is None:
            return unavailable("the window of updates holds no time")
        inputs: dict[str, Any] = {
            "flops_per_token": per_token.value, "formula": per_token.formula,
            "peak_tflops_per_gpu": peak, "peak_source": source, "precision": precision,
            "gpus": s.gpus, "tokens_per_step": self._tokens_per_step(),
            "window_updates": found_mfu.window,
        }
        if self._rate_only:
            inputs["weighting"] = "equal shares of the logged tokens/s (no step time)"
        disagreement = ""
        # A printed percentage is rounded (nanoGPT: 2 decimals): within that, no flag.
        if log_mfu is not None and log_mfu > 0 and abs(found_mfu.value - log_mfu) > 1e-4 \
                and abs(found_mfu.value - log_mfu) / log_mfu > _DISAGREE:
            disagreement = (f"the run reports MFU {100 * log_mfu:.3g}%, babysit estimates "
                            f"{100 * found_mfu.value:.3g}%: their FLOPs per token or peak "
                            f"differ")
        return Efficiency("estimated", found_mfu.value, inputs=inputs,
                          leaves_out=per_token.leaves_out,
                          tokens_per_second=found_mfu.tokens_per_second, log_mfu=log_mfu,
                          disagreement=disagreement, goodput=goodput)


def _plausible(found: Efficiency) -> Efficiency:
    """Turn an impossible MFU (above 100 % of the hardware's peak) into what it is: a
    reading error, with the inputs kept so a person can see which one is wrong."""
    log_mfu, note = found.log_mfu, found.disagreement
    if log_mfu is not None and log_mfu > 1:
        note = (f"the run printed MFU {100 * log_mfu:.3g}%, above 100% of the hardware's "
                f"peak: a reading error in its own FLOPs or peak, not a figure")
        log_mfu = None
    if found.mfu is not None and found.mfu > 1:
        return replace(found, status="unavailable", mfu=None, log_mfu=log_mfu,
                       disagreement=note,
                       reason=(f"the estimate came out at {100 * found.mfu:.3g}% of the "
                               f"hardware's peak, which is impossible: an input is wrong "
                               f"(the GPU count or type, the precision, the tokens per step "
                               f"or the FLOPs per token); see inputs"))
    return replace(found, log_mfu=log_mfu, disagreement=note)

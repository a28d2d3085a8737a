"""babysit.hooks: every line a Monitor writes is read by babysit's own parser as meant,
and a run written with it gets the verdict it should."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from babysit.hooks import Monitor
from babysit.model import EventKind, Record
from babysit.parsing.parser import LogParser
from babysit.reading.history import scan_history
from tests.conftest import artifact_in
from tests.forked_cli import python_m_babysit

NAN, INF = float("nan"), float("inf")


class Shell:
    """A Monitor writing into memory, and what babysit's parser makes of its lines."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self.mon = Monitor(self.out)
        self.parser = LogParser()
        self._read = 0

    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()

    def records(self) -> list[Record | None]:
        """One entry per line written since the last call (None: the line said nothing)."""
        new = self.lines()[self._read:]
        self._read += len(new)
        return [self.parser.feed(line) for line in new]

    def record(self) -> Record:
        records = self.records()
        assert len(records) == 1 and records[0] is not None, self.lines()
        return records[0]


def _kinds(record: Record) -> list[EventKind]:
    return [e.kind for e in record.events]


# --- metric lines --------------------------------------------------------------------


def test_step_line_carries_every_field():
    s = Shell()
    s.mon.step(10, loss=2.31, lr=3e-4, grad_norm=0.8, tokens=524288, step_time=0.41,
               model_flops=3.7e17, total=5000)
    r = s.record()
    assert r.fmt == "jsonl" and r.step == 10 and r.target_steps == 5000
    assert r.metrics == {"loss": 2.31, "lr": 3e-4, "grad_norm": 0.8, "tokens": 524288,
                         "tokens/s": pytest.approx(524288 / 0.41, rel=1e-6),
                         "step_time": 0.41, "model_flops": 3.7e17}
    assert not r.events and not r.facts
    assert json.loads(s.lines()[0])["step"] == 10


def test_bare_step_and_missing_values():
    s = Shell()
    s.mon.step(3)
    assert s.lines() == ['{"step": 3}'] and s.record().step == 3
    s.mon.step(4, loss=None, lr=2e-4, acc=None)
    r = s.record()
    assert r.step == 4 and r.metrics == {"lr": 2e-4}  # None is absent, not a made-up zero


def test_non_finite_values_reach_babysit_as_non_finite():
    s = Shell()
    s.mon.step(7, loss=NAN, lr=3e-4, grad_norm=INF, scale=-INF, step_time=NAN)
    line = s.lines()[0]
    assert "NaN" in line and "-Infinity" in line and "nan" not in line
    r = s.record()
    assert r.step == 7
    assert math.isnan(r.metrics["loss"]) and math.isnan(r.metrics["step_time"])
    assert r.metrics["grad_norm"] == INF and r.metrics["scale"] == -INF


def test_values_that_are_not_floats():
    np = pytest.importorskip("numpy")

    class Scalar:  # a 0-d tensor: float() works
        def __float__(self) -> float:
            return 1.5

    s = Shell()
    s.mon.step(np.int64(5), loss=np.float32(2.5), lr=Decimal("0.001"),
               grad_norm=np.float64("nan"), frac=Fraction(1, 4), scalar=Scalar(),
               flag=True, note='say "hi"\nthere', vec=np.zeros(3))
    assert len(s.lines()) == 1  # a newline in a value stays inside its JSON string
    r = s.record()
    assert r.step == 5
    assert r.metrics["loss"] == 2.5 and r.metrics["lr"] == 0.001
    assert math.isnan(r.metrics["grad_norm"])
    assert r.metrics["frac"] == 0.25 and r.metrics["scalar"] == 1.5
    assert {"flag", "note", "vec"}.isdisjoint(r.metrics)  # not numbers: not metrics


def test_extra_metrics_keep_their_names():
    s = Shell()
    s.mon.step(2, loss=1.0, **{"train/acc": 0.5, "Weird \"key\"": 3.0, "épsilon": 1e-8},
               epoch=0.25)
    r = s.record()
    # babysit's own normalising: lower case, spaces to `_`, outer quotes stripped.
    assert r.metrics == {"loss": 1.0, "train/acc": 0.5, 'weird_"key': 3.0, "épsilon": 1e-8}
    assert r.epoch == 0.25  # babysit reads `epoch` as the epoch, not a metric


def test_planned_steps_are_remembered():
    s = Shell()
    s.mon.step(1, loss=3.0, total=100)
    s.mon.step(2, loss=2.9)
    s.mon.step(3, loss=2.8, total=200)
    assert [r.target_steps for r in s.records() if r] == [100, 100, 200]
    s.mon.step(4, total=0)  # refused, counted, never raised into the loop
    s.mon.step(5)
    assert [r.target_steps for r in s.records() if r] == [200]
    assert "total steps must be positive" in s.lines()[-2]


def test_tokens_per_second_needs_a_step_time():
    s = Shell()
    s.mon.step(1, tokens=1000)
    s.mon.step(2, tokens=1000, step_time=0.0)
    s.mon.step(3, step_time=0.5)
    assert [sorted(r.metrics) for r in s.records() if r] == [
        ["tokens"], ["step_time", "tokens"], ["step_time"]]


# --- facts ---------------------------------------------------------------------------


def test_config_lines_are_facts_and_the_plan():
    s = Shell()
    s.mon.config(model_params=124e6, tokens_per_step=524288, total_steps=5000)
    params, tokens, plan = s.records()
    assert params is not None and params.facts == {"model_params": 124e6}
    assert not params.metrics and params.step is None
    assert tokens is not None and tokens.facts == {"tokens_per_step": 524288}
    assert tokens.step is None  # not misread as step 524288
    assert plan is not None and plan.target_steps == 5000 and not plan.metrics
    assert s.parser.facts == {"model_params": 124e6, "tokens_per_step": 524288}
    s.mon.step(1, loss=3.0)
    assert s.record().target_steps == 5000


def test_config_writes_only_what_it_is_given():
    s = Shell()
    s.mon.config(model_params=1.5e9)
    assert len(s.lines()) == 1 and s.record().facts == {"model_params": 1.5e9}
    s.mon.config(tokens_per_step=NAN)  # refused and counted, never raised into the loop
    s.mon.config(model_params=-1)
    s.mon.flush()
    assert len(s.lines()) == 1
    s.mon.step(1)
    assert "2 lines or values could not be written" in s.lines()[-2]


# --- evaluation and phases -----------------------------------------------------------


def test_eval_line_names_evaluation_metrics():
    s = Shell()
    s.mon.step(100, loss=2.0)
    s.mon.eval(val_loss=2.4, accuracy=0.61, **{"eval/ppl": 11.0})
    s.mon.eval(200, loss=2.2)
    s.mon.eval(300)  # nothing to say: no line
    _, first, second = s.records()
    assert first is not None and first.step == 100
    assert first.metrics == {"val_loss": 2.4, "eval_accuracy": 0.61, "eval/ppl": 11.0}
    assert second is not None and second.step == 200 and second.metrics == {"eval_loss": 2.2}
    assert len(s.lines()) == 3


def test_phases():
    s = Shell()
    s.mon.step(10, loss=2.0)
    s.records()
    s.mon.phase("eval")
    assert s.records() == [None] and s.parser.phase == "eval"
    s.mon.eval(val_loss=2.1)
    s.records()
    assert s.parser.phase == "eval"  # an evaluation at the same step is still the eval
    s.mon.phase("train")
    s.records()
    s.mon.step(11, loss=1.9)
    s.records()
    assert s.parser.phase == "train"
    s.mon.phase("evaluation")  # refused and counted, never raised into the loop
    s.mon.step(12)
    assert "phase must be one of train, eval" in s.lines()[-2]


# --- events --------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["out/ckpt-100", "/runs/failover_error/step100.pt", "ckpt",
                                  "C:/x/model.safetensors"])
def test_checkpoint_saved(path: str):
    s = Shell()
    s.mon.step(100, loss=2.0)
    s.mon.checkpoint(path)
    _, r = s.records()
    assert r is not None and r.step == 100 and _kinds(r) == [EventKind.CHECKPOINT_SAVED]
    assert r.events[0].detail == path
    assert s.parser.phase == "train"  # a save that is over


@pytest.mark.parametrize("path", ["out/init.pt", "init", "runs/error_free/init"])
def test_checkpoint_saved_before_any_step(path: str):
    s = Shell()
    s.mon.checkpoint(path)
    assert '"step"' not in s.lines()[0]
    r = s.record()
    assert r.step is None
    assert _kinds(r) == [EventKind.CHECKPOINT_SAVED] and r.events[0].detail == path
    s.mon.checkpoint("out/ckpt-7", step=7)
    r = s.record()
    assert r.step == 7 and r.events[0].detail == "out/ckpt-7"


def test_checkpoint_failed():
    s = Shell()
    s.mon.step(50, loss=2.0)
    s.mon.checkpoint(Path("out/ckpt-50"), ok=False)
    s.mon.checkpoint("out/ckpt-51", ok=False, error="OSError: [Errno 28] No space left on device")
    _, failed, full = s.records()
    assert failed is not None and failed.step == 50
    assert _kinds(failed) == [EventKind.CHECKPOINT_ERROR]
    assert failed.events[0].detail == "out/ckpt-50"
    assert full is not None and set(_kinds(full)) == {EventKind.CHECKPOINT_ERROR,
                                                      EventKind.DISK_FULL}
    assert next(e.detail for e in full.events
                if e.kind is EventKind.CHECKPOINT_ERROR) == "out/ckpt-51"


def test_done():
    s = Shell()
    s.mon.step(5000, loss=1.0, total=5000)
    s.mon.done()
    _, r = s.records()
    assert r is not None and r.step == 5000 and _kinds(r) == [EventKind.COMPLETED]
    fresh = Shell()
    fresh.mon.done()
    assert _kinds(fresh.record()) == [EventKind.COMPLETED]


def test_exception_is_written_as_python_prints_it():
    s = Shell()
    s.mon.step(3, loss=2.0)
    try:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    except RuntimeError:
        s.mon.exception()
    kinds = [k for r in s.records() if r for k in _kinds(r)]
    assert kinds[0] is EventKind.TRACEBACK_START and EventKind.EXCEPTION in kinds
    assert EventKind.CUDA_ERROR in kinds
    s.mon.exception()  # outside an except block: nothing to write
    assert s.records() == []


def test_leaving_a_with_block_on_an_error_writes_it(tmp_path: Path):
    log = tmp_path / "train.log"
    with pytest.raises(ValueError), Monitor(log) as mon:
        mon.step(1, loss=2.0)
        raise ValueError("bad batch")
    text = log.read_text(encoding="utf-8")
    assert "Traceback (most recent call last):" in text and text.endswith(
        "ValueError: bad batch\n")
    with pytest.raises(SystemExit), Monitor(log) as mon:
        sys.exit(0)  # a clean exit is no failure
    assert log.read_text(encoding="utf-8") == text


# --- every line --------------------------------------------------------------------


def test_every_line_is_json():
    s = Shell()
    s.mon.config(model_params=124e6, tokens_per_step=524288, total_steps=10)
    s.mon.step(1, loss=NAN, lr=1e-3, grad_norm=INF, tokens=10, step_time=0.1)
    s.mon.phase("eval")
    s.mon.eval(val_loss=2.0)
    s.mon.phase("train")
    s.mon.checkpoint("out/c 1")
    s.mon.checkpoint("out/c2", ok=False, error="boom")
    s.mon.done()
    for line in s.lines():
        assert isinstance(json.loads(line), dict)  # Python's json: NaN is allowed
    assert all(r is not None or line.startswith('{"event": "phase"')
               for r, line in zip(s.records(), s.lines(), strict=True))


def test_history_scan_of_a_long_log_finds_what_matters():
    """A long log's history is searched for event words and non-finite numbers: it must
    find the facts, the first NaN, the saves and the end, and skip the ordinary steps."""
    out = io.StringIO()
    mon = Monitor(out)
    mon.config(model_params=124e6, tokens_per_step=524288, total_steps=3000)
    for step in range(1, 3001):
        mon.step(step, loss=NAN if step == 1200 else 3.0 - step * 1e-4, lr=3e-4,
                 grad_norm=0.8, tokens=524288, step_time=0.41)
        if step % 1000 == 0:
            mon.checkpoint(f"out/ckpt-{step}")
    mon.done()
    data = out.getvalue().encode()
    records = list(scan_history(lambda at, size: data[at:at + size], 0, len(data)))
    facts = {k: v for r in records for k, v in r.facts.items()}
    assert facts == {"model_params": 124e6, "tokens_per_step": 524288}
    assert [r.step for r in records if any(math.isnan(v) for v in r.metrics.values())] == [1200]
    events = [(r.step, k) for r in records for k in _kinds(r)]
    assert (3000, EventKind.CHECKPOINT_SAVED) in events
    assert events[-1] == (3000, EventKind.COMPLETED)
    assert len(records) < 12  # the 2,999 finite steps are not event lines


# --- the file ------------------------------------------------------------------------


def test_a_path_is_appended_to_and_its_folder_made(tmp_path: Path):
    log = tmp_path / "runs" / "a" / "train.log"
    with Monitor(log) as mon:
        mon.step(1, loss=2.0)
    with Monitor(str(log)) as mon:
        mon.step(2, loss=1.9)
    assert [json.loads(line)["step"] for line in log.read_text().splitlines()] == [1, 2]


def test_flushing(tmp_path: Path):
    log = tmp_path / "train.log"
    mon = Monitor(log, flush_every=None)
    mon.step(1, loss=2.0)
    assert log.read_text() == ""  # buffered
    mon.step(2, loss=NAN)  # a non-finite value is flushed at once
    assert len(log.read_text().splitlines()) == 2
    mon.step(3, loss=1.8)
    mon.checkpoint("out/ckpt-3")  # so is an event
    assert len(log.read_text().splitlines()) == 4
    mon.step(4, loss=1.7)
    mon.flush()
    assert len(log.read_text().splitlines()) == 5
    mon.close()
    mon.close()

    every = Monitor(tmp_path / "every.log", flush_every=0)
    every.step(1, loss=2.0)
    assert (tmp_path / "every.log").read_text() == '{"step": 1, "loss": 2.0}\n'
    every.close()
    with pytest.raises(ValueError):
        Monitor(tmp_path / "x.log", flush_every=-1)


def test_a_file_object_is_not_closed():
    out = io.StringIO()
    with Monitor(out) as mon:
        mon.step(1, loss=2.0)
    assert not out.closed and out.getvalue() == '{"step": 1, "loss": 2.0}\n'


def test_no_target_writes_nothing(tmp_path: Path):
    mon = Monitor(None)
    mon.config(model_params=1e9, tokens_per_step=1000, total_steps=10)
    mon.step(1, loss=NAN, tokens=1, step_time=1.0)
    mon.eval(val_loss=1.0)
    mon.phase("eval")
    mon.checkpoint("x")
    mon.done()
    mon.flush()
    mon.close()
    assert list(tmp_path.iterdir()) == []


def test_imports_nothing_from_babysit():
    code = ("import sys, babysit.hooks; "
            "print(sorted(m for m in sys.modules if m.startswith('babysit')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "['babysit', 'babysit.hooks']"


# --- babysit's verdict on a run written with Monitor ----------------------------------


def _babysit_once(log: Path, out: Path, *extra: str) -> dict[str, Any]:
    done = python_m_babysit(str(log), "--once", "--json", "--out-dir", str(out), *extra,
                            cwd=Path.cwd(), timeout=120)
    assert done.returncode in (0, 1, 3), done.stderr
    return artifact_in(out)


def test_a_run_that_went_nan_and_failed_a_save(tmp_path: Path):
    log = tmp_path / "train.log"
    with Monitor(log) as mon:
        mon.config(model_params=124e6, tokens_per_step=524288, total_steps=100)
        for step in range(1, 61):
            mon.step(step, loss=NAN if step >= 40 else 4.0 - step * 0.02, lr=3e-4,
                     grad_norm=0.8, tokens=524288, step_time=0.41)
            if step == 20:
                mon.checkpoint("out/ckpt-20")
        mon.checkpoint("out/ckpt-60", ok=False)
    artifact = _babysit_once(log, tmp_path / "out")
    assert artifact["decision"] == "NO-GO"
    assert artifact["total_steps"] == 60 and artifact["target_steps"] == 100
    anomalies = {(a["type"], a["step"]) for a in artifact["anomalies_detected"]}
    assert ("nan-inf", 40) in anomalies and ("checkpoint-failure", 60) in anomalies
    assert artifact["best_checkpoint"] == "out/ckpt-20"


def test_a_finished_run_is_go(tmp_path: Path):
    log = tmp_path / "train.log"
    with Monitor(log) as mon:
        mon.config(model_params=124e6, tokens_per_step=524288, total_steps=100)
        for step in range(1, 101):
            mon.step(step, loss=4.0 - step * 0.02, lr=3e-4, grad_norm=0.8, tokens=524288,
                     step_time=0.41)
            if step % 50 == 0:
                mon.phase("eval")
                mon.eval(val_loss=4.1 - step * 0.02)
                mon.phase("train")
                mon.checkpoint(f"out/ckpt-{step}")
        mon.done()
    artifact = _babysit_once(log, tmp_path / "out", "--gpu", "h100-sxm", "--gpus", "1")
    assert artifact["decision"] == "GO", artifact["summary"]
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["total_steps"] == 100 and artifact["target_steps"] == 100
    assert artifact["best_checkpoint"] == "out/ckpt-100"
    # The facts reach the MFU estimate: 6 × 124M FLOPs per token, 524,288 tokens a step.
    mfu = artifact["efficiency"]["mfu"]
    assert mfu["status"] == "estimated"
    assert mfu["inputs"]["tokens_per_step"] == 524288
    assert mfu["inputs"]["flops_per_token"] == pytest.approx(6 * 124e6, rel=0.01)

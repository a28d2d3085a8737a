"""`babysit.hooks.Monitor` never breaks the training loop it watches: a full disk, a
closed stream, a value whose `str()` raises or a call given a value it cannot use is
swallowed and counted, and the count reaches babysit in the next line that can be
written."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from babysit.hooks import Monitor
from babysit.parsing.parser import LogParser


class FlakyStream(io.StringIO):
    """A text stream whose first `failures` writes raise, as a full disk does."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def write(self, text: str) -> int:
        if self.failures:
            self.failures -= 1
            raise OSError(28, "No space left on device")
        return super().write(text)


class Unprintable:
    """A metric value neither float() nor str() can turn into text."""

    def __float__(self) -> float:
        raise TypeError("not a number")

    def __str__(self) -> str:
        raise RuntimeError("str() raised")

    __repr__ = __str__


def lines_of(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines() if line]


def test_a_full_disk_never_raises_into_the_loop(capsys: pytest.CaptureFixture[str]):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with Monitor("/dev/full", flush_every=0) as mon:
        mon.config(model_params=1e6, total_steps=10)
        for step in range(1, 11):
            mon.step(step, loss=2.0 / step, custom=float("nan"))
        mon.eval(val_loss=1.0)
        mon.phase("eval")
        mon.checkpoint("out/ckpt-10")
        mon.done()
        mon.flush()
    err = capsys.readouterr().err
    # Said once, where a person sees it; not once per line.
    assert err.count("babysit.hooks:") == 1 and "No space left on device" in err


def test_lines_lost_to_errors_are_counted_in_the_next_line_written():
    out = FlakyStream(failures=3)
    mon = Monitor(out, flush_every=0)
    for step in range(1, 6):
        mon.step(step, loss=1.0)
    lines = lines_of(out)
    told = [line for line in lines if line.get("event") == "hook_errors"]
    assert len(told) == 1 and "3 lines or values could not be written" in str(told[0]["msg"])
    assert "No space left on device" in str(told[0]["msg"])
    assert [line["step"] for line in lines if "step" in line] == [4, 5]
    # babysit reads the error line's words (a full disk, here), not a metric or a step.
    parser = LogParser()
    records = [parser.feed(line) for line in out.getvalue().splitlines() if line]
    assert [r.step for r in records if r is not None] == [None, 4, 5]
    assert [e.kind.value for r in records if r is not None for e in r.events] == ["disk-full"]
    assert all(not r.metrics for r in records if r is not None and r.step is None)


def test_a_value_that_cannot_be_written_costs_that_value_not_the_step():
    out = io.StringIO()
    mon = Monitor(out, flush_every=0)
    mon.step(1, loss=2.0, odd=Unprintable(), acc=0.5)
    mon.step(2, loss=1.9)
    told, first, second = lines_of(out)  # the count goes first, on the same write
    assert first == {"step": 1, "loss": 2.0, "acc": 0.5}
    assert told["event"] == "hook_errors" and "str() raised" in str(told["msg"])
    assert second == {"step": 2, "loss": 1.9}


@pytest.mark.parametrize("call", [
    lambda m: m.phase("evaluation"),
    lambda m: m.step(4, total=0),
    lambda m: m.step("four"),
    lambda m: m.config(model_params=-1),
    lambda m: m.config(tokens_per_step=float("nan")),
    lambda m: m.checkpoint(Unprintable()),
    lambda m: m.done(step=Unprintable()),
    lambda m: m.eval(3, loss=Unprintable()),
])
def test_a_call_with_a_value_it_cannot_use_is_counted_not_raised(call):  # type: ignore[no-untyped-def]
    out = io.StringIO()
    mon = Monitor(out, flush_every=0)
    call(mon)
    mon.step(5, loss=1.0)
    lines = lines_of(out)
    assert lines[-1] == {"step": 5, "loss": 1.0}
    assert any(line.get("event") == "hook_errors" for line in lines)


def test_an_unwritable_target_never_raises(tmp_path: Path):
    (tmp_path / "file").write_text("")
    mon = Monitor(tmp_path / "file" / "train.log")  # a folder that is a file
    mon.step(1, loss=1.0)
    mon.close()
    stream = io.StringIO()
    closed = Monitor(stream)
    stream.close()
    closed.step(1, loss=1.0)
    closed.done()
    closed.close()


def test_errors_left_untold_are_written_at_close(tmp_path: Path):
    log = tmp_path / "train.log"
    mon = Monitor(log, flush_every=0)
    mon.step(1, loss=1.0)
    mon.phase("warmup")
    mon.close()
    assert "hook_errors" in log.read_text().splitlines()[-1]

"""PaddlePaddle v1's glog trainer: its epochs are passes (`Pass=N Batch=M …`), its plan
the command line's `--num_passes=N`, and its `--dot_period` dots glued before the next
line's glog head. A run whose last pass is the plan's last is a finished run."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.core.test_endings import once

_COMMAND = ("I0305 22:58:50.970368    35 Util.cpp:155] commandline: paddle_trainer "
            "--config=trainer_config.py --save_dir=./output --dot_period=10 "
            "--num_passes={passes} --use_gpu=false")


def _pass_lines(done: int) -> list[str]:
    lines = []
    for p in range(done):
        lines += [
            f"..........I0306 00:{p:02d}:25.552382    35 TrainerInternal.cpp:182]  Pass={p} "
            f"Batch=120 samples=15360 AvgCost={9.9 - p * 0.05:.5f} Eval: error=0.{40 - p}",
            f"I0306 00:{p:02d}:47.292623    35 Tester.cpp:127]  Test samples=900 "
            f"cost={9.95 - p * 0.04:.5f} Eval: error=0.{41 - p}",
            f"I0306 00:{p:02d}:47.294342    35 GradientMachine.cpp:112] Saving parameters "
            f"to ./output/pass-{p:05d}",
        ]
    return lines


def _feed(lines: list[str]):
    parser = LogParser()
    return [r for r in (parser.feed(line) for line in lines) if r is not None]


def test_a_pass_after_progress_dots_is_an_epoch_with_no_glog_head_in_its_metrics():
    records = _feed(_pass_lines(3))
    trained = [r for r in records if "avgcost" in r.metrics]
    assert [r.epoch for r in trained] == [0, 1, 2]
    assert not any(".cpp" in name for r in trained for name in r.metrics)


def test_a_pass_key_alone_is_no_epoch():
    records = _feed(["pass=3 loss=0.5", "pass=4 loss=0.4"])
    assert all(r.epoch is None for r in records)


def test_the_last_planned_pass_saved_is_a_finished_run(tmp_path: Path):
    text = "\n".join([_COMMAND.format(passes=12), *_pass_lines(12)]) + "\n"
    data = once(tmp_path, text)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")


def test_passes_short_of_the_plan_still_run(tmp_path: Path):
    text = "\n".join([_COMMAND.format(passes=50), *_pass_lines(12)]) + "\n"
    assert once(tmp_path, text)["terminal_state"] == "RUNNING"

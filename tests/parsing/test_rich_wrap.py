"""Rich's wrapped log records joined back, a source location that is no metric, and the
steps a run's checkpoints name (sealed-4's
colossalai_dreambooth_rich_wrapped_gpu_mem_only_checkpoint_1000_finished.log)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.formats import key_values
from babysit.parsing.parser import LogParser
from babysit.parsing.rich_wrap import RichWrap
from tests.core.test_endings import once

_W = 100  # the console's width the lines are padded to


def _pad(text: str) -> str:
    return text.ljust(_W)


_HEAD = "[04/12/24 17:15:52] INFO     "
_SAME = " " * 20 + "INFO     "
_CONT = " " * 29


def _location(line: int) -> list[str]:
    """ColossalAI's logger names the source line of each message in a record of its own,
    the path cut at the console's edge."""
    return [_pad(_HEAD + "colossalai - colossalai - INFO:"),
            _CONT + "/home/users/nus/e1216290/scratch/colossalai/ColossalAI/examples/images/dr",
            _pad(_CONT + f"eambooth/train_dreambooth_colossalai.py:{line} main")]


def _saved(path_end: str) -> list[str]:
    return [*_location(686), _pad(_SAME + "colossalai - colossalai - INFO: Saving model "
                                          "checkpoint to"),
            _CONT + "/home/users/nus/e1216290/scratch/colossalai/ColossalAI/examples/images/dr",
            _pad(_CONT + f"eambooth/{path_end}")]


def test_a_wrapped_record_is_one_line_again_cut_words_joined_without_a_space():
    lines, joined = RichWrap().join(_saved("weight_output/checkpoint-500"))
    assert joined == 4 and len(lines) == 2
    assert lines[1].endswith("INFO: Saving model checkpoint to /home/users/nus/e1216290/"
                             "scratch/colossalai/ColossalAI/examples/images/dreambooth/"
                             "weight_output/checkpoint-500")


def test_lines_of_other_logs_are_left_alone():
    lines = ["Epoch 1/3", "  step 10 loss 2.3", "       indented text", "INFO done"]
    assert RichWrap().join(lines) == (lines, 0)


def test_a_source_location_is_no_metric():
    assert key_values("eambooth/train_dreambooth_colossalai.py:669 main") == {}
    assert key_values("loss:0.5 acc:0.9") == {"loss": 0.5, "acc": 0.9}


def test_the_checkpoints_named_by_step_are_the_progress_of_a_log_that_prints_none():
    parser = LogParser()
    lines = [*_location(602), _pad(_SAME + "colossalai - colossalai - INFO:   Total "
                                           "optimization steps = 1000")]
    for _ in range(3):
        lines += [*_location(669), _pad(_SAME + "colossalai - colossalai - INFO: max "
                                                "GPU_mem cost is 3812.8251953125 MB")]
    lines += _saved("weight_output/checkpoint-500")
    records = parser.feed_lines(lines)
    assert parser.step == 500 and parser.target == 1000
    assert parser.reading().progress == "step"
    assert not any(r.metrics for r in records)  # no path read as a value


def test_a_log_whose_checkpoints_reach_the_planned_total_finished(tmp_path: Path):
    lines = [*_location(602), _pad(_SAME + "colossalai - colossalai - INFO:   Total "
                                           "optimization steps = 1000")]
    for end in ("weight_output/checkpoint-500", "weight_output/checkpoint-1000"):
        for _ in range(3):
            lines += [*_location(669), _pad(_SAME + "colossalai - colossalai - INFO: max "
                                                    "GPU_mem cost is 3812.8251953125 MB")]
        lines += _saved(end)
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    assert (data["total_steps"], data["target_steps"]) == (1000, 1000)


def test_checkpoints_short_of_the_plan_are_no_end(tmp_path: Path):
    lines = [*_location(602), _pad(_SAME + "colossalai - colossalai - INFO:   Total "
                                           "optimization steps = 1000")]
    lines += _saved("weight_output/checkpoint-500")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED" and data["decision"] != "GO", data["summary"]
    assert data["total_steps"] == 500


def test_a_checkpoint_number_with_no_plan_in_steps_is_no_step():
    """Ray Train's `checkpoint_000009` is an index; with no plan in steps it gives none."""
    parser = LogParser()
    parser.feed_lines(["(RayTrainWorker pid=727834) Checkpoint successfully created at: "
                       "Checkpoint(filesystem=local, path=/efs/llm/checkpoint_000009)"])
    assert parser.step is None and parser.reading().progress == "none"

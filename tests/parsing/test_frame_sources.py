"""A traceback frame's line of code that lost its indentation keeps the traceback open
(issue 23, item 4): HoVer-Net's parent and spawned-worker tracebacks interleaved on a
Windows console (sealed-12), where `trainer.run()` came out unindented between frames."""

from __future__ import annotations

import pytest

from babysit.parsing.frame_sources import frame_source


@pytest.mark.parametrize("line", [
    "trainer.run()",  # hover_net run_train.py:305, interleaved with multiprocessing's spawn
    "exitcode = _main(fd)",  # multiprocessing/spawn.py:105
    "return self._call_impl(*input, **kwargs)",
    "raise ValueError(\"bad input\")",
    "for batch in loader:",
    "model = build_model(cfg,",
])
def test_a_line_of_python_is_the_frame_s_source(line: str) -> None:
    assert frame_source(line)


@pytest.mark.parametrize("line", [
    "Epoch 1 loss 0.5",  # a record
    "loss: 0.5",  # parses as an annotation, but a number is no code
    "lr=0.001",
    "step=10 loss=0.3",
    "Done",
    "0.25",
    "Validation:",
    "",
])
def test_training_output_is_not(line: str) -> None:
    assert not frame_source(line)

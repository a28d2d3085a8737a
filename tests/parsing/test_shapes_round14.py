"""Shapes and judgements added in the fourteenth session, each on lines written in the
real shape of a public log."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _events(lines: list[str]) -> list[EventKind]:
    return [e.kind for r in LogParser().feed_lines(lines) for e in r.events]


@pytest.mark.parametrize("line", [
    "Something wrong happens! Current model is saved to <D:\\runs\\tmp_model>",
    "Something went wrong: CUDA out of memory. Tried to allocate 280.00 MiB",
    "[2019-01-06 10:24:25] ERROR - something went wrong, saving and exiting.",
])
def test_a_handlers_sentence_that_something_went_wrong_is_a_failure(line: str):
    # (what went wrong, when it is said, names the failure: an OOM is an OOM)
    assert {EventKind.EXCEPTION, EventKind.OOM} & set(
        _events(["step: 10,  total loss: 2517.050", line]))


@pytest.mark.parametrize("line", [
    "UserWarning: there might be something wrong with your environment.",
    "If something goes wrong, the checkpoint is kept.",
    "Nothing wrong happened: the run is fine.",
])
def test_advice_or_prose_about_something_wrong_is_no_failure(line: str):
    assert EventKind.EXCEPTION not in _events(["step: 10,  total loss: 2517.050", line])


def test_the_exit_path_after_a_caught_error_is_no_success(tmp_path: Path):
    # A style-transfer loop's handler catches the error mid-epoch, saves a temporary
    # model, and the script goes on to its own `Done training!` lines on the way out.
    lines = [line for step in range(5000, 5640, 20)
             for line in (f"step: {step},  total loss: {2600 - step / 100:.3f},  "
                          f"elapsed time: 0:54:17.473793", f"content loss: {2478.894:.3f}")]
    lines += ["", "Something wrong happens! Current model is saved to <D:\\wxd\\tmp_model>", "",
              "Done training! Elapsed time: 0:54:30.136937",
              "Model is saved to: model_retrain/style_weight_1e-2.ckpt", "",
              ">>> Successfully! Done all training...", ""]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")


@pytest.mark.parametrize("footer", ["[Finished in 1928.4s]", "Process finished with exit code 0"])
def test_an_exit_status_0_after_a_loop_seen_over_is_the_runs_success(tmp_path: Path,
                                                                     footer: str):
    # An NTM copy task run from Sublime Text: a round count of epochs and nothing said,
    # then the editor's footer for status 0. The loop seen over alone is ENDED; the
    # status the runner saw confirms it.
    lines = [f"Epoch: ({i}), Loss : {5.5 / (1 + i / 50):.6f} , acc: {min(100.0, 48 + i / 5):.4f}%"
             for i in range(1000)]
    data = verdict_of(tmp_path, [*lines, footer])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")
    (tmp_path / "alone").mkdir()
    data = verdict_of(tmp_path / "alone", lines)
    assert data["terminal_state"] != "SUCCEEDED"

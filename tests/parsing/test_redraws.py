"""The redraw collapse: of a run of redraws of one bar only the last is read, and the
fast version babysit runs answers exactly as a plain reference one, on real logs and on
any text."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from babysit.parsing.parser import LogParser
from babysit.parsing.redraws import kept_lines, redraw_key
from tests.conftest import LOGS, development_logs


def reference_key(line: str) -> tuple[str, str] | None:
    """`redraw_key` as first written, plainly: the one the fast version is held to."""
    end = line.rstrip()
    if not end.endswith("]"):
        return None
    bar_at = end.find("%|")
    if bar_at < 0:
        return None
    bracket = end.find(" [", bar_at)
    if bracket < 0:
        bracket = end.find("[", bar_at)
        if bracket < 0:
            return None
    if "=" in end[bracket:]:
        return None
    slash = end.rfind("/", bar_at, bracket)
    return end[: max(0, bar_at - 3)], end[slash + 1 : bracket]


def reference_kept_lines(lines: list[str]) -> list[tuple[int, bool]]:
    """`kept_lines` as first written, one line at a time."""
    kept: list[tuple[int, bool]] = []
    for index, line in enumerate(lines):
        key = reference_key(line)
        following = reference_key(lines[index + 1]) if index + 1 < len(lines) else None
        if key is None or key != following:
            kept.append((index, key is not None))
    return kept


def same_answer(lines: list[str]) -> bool:
    return (kept_lines(lines) == reference_kept_lines(lines)
            and [redraw_key(line) for line in lines] == [reference_key(line) for line in lines])


BAR = " 50%|#####     | 500/1000 [01:02<01:02,  8.00it/s]"


def test_only_the_last_redraw_of_a_bar_is_read():
    lines = [BAR.replace("500/", f"{n}/") for n in range(500, 510)]
    lines.append("{'loss': 2.0, 'epoch': 0.5}")
    assert kept_lines(lines) == [(9, True), (10, False)]


def test_redraws_of_two_bars_are_read_where_one_gives_way_to_the_other():
    train = [BAR.replace("500/", f"{n}/") for n in (500, 501)]
    evaluation = ["Evaluating: 10%|#  | 1/10 [00:01<00:09, 1.00it/s]",
                  "Evaluating: 20%|## | 2/10 [00:02<00:08, 1.00it/s]"]
    assert kept_lines(train + evaluation + train) == [(1, True), (3, True), (5, True)]


def test_a_bar_with_a_postfix_or_text_after_it_is_read_at_every_frame():
    assert redraw_key(BAR[:-1] + ", loss=0.52]") is None
    assert redraw_key(BAR + "{'loss': 2.0}") is None
    assert redraw_key(BAR + "  \t") == ("", "1000")
    assert redraw_key("train: " + BAR) == ("train: ", "1000")


@pytest.mark.parametrize("name", [str(p.relative_to(LOGS)) for p in development_logs(LOGS)])
def test_the_collapse_answers_as_the_reference_on_every_fixture_log(name: str):
    text = (LOGS / name).read_bytes().decode("utf-8", errors="replace")
    lines = [line for line in re.split(r"[\r\n]", text) if line]
    assert same_answer(lines)


_PIECES = st.sampled_from([
    "%|", "%", "|", " [", "[", "]", "=", "/", " ", "\t", "\u00a0", "\u2003", "50", "100",
    "it/s", "Epoch 1", "é", "语", "😀", "\x00", "\r", "#####", "loss", "{'", "<", ",",
])
_LINE = st.lists(_PIECES, max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=25))
def test_the_collapse_answers_as_the_reference_on_any_text(lines: list[str]):
    assert same_answer(lines)


# The parts of frames of a few bars, so that runs of redraws of one bar (and their
# edges: another bar of the same shape, a different total, a postfix) are common.
_FRAME_PARTS = (
    ["", "a", "ab", "Epoch 1: ", "Epoch 2: ", "x|y ", "é: ", "50%"],
    ["", "5", "50", " 5", "  5", " 50", "100", "1%|"],
    ["1", "9", "10", " 10"], ["10", "100", "1/10", "20", ""],
    [" [", "[", "  [", "", " [a/b ["],
    ["00:01<00:02, 1it/s", "", "loss=1", "a]b", "語"],
    ["", " ", "\t", "\u3000", "x", "\u00a0"],
)


def _frame(desc: str, pct: str, n: str, total: str, bracket: str, inside: str,
           tail: str) -> str:
    return f"{desc}{pct}%|##  |{n}/{total}{bracket}{inside}]{tail}"


_FRAME = st.builds(_frame, *(st.sampled_from(parts) for parts in _FRAME_PARTS))


def test_the_collapse_answers_as_the_reference_on_a_seeded_sweep_of_frames():
    """Hypothesis favours the first choices of each part; a plain seeded sweep covers
    the pairs of neighbours evenly (3,000 runs of six frames)."""
    rng = random.Random(20261201)
    for _ in range(3000):
        lines = [_frame(*(rng.choice(parts) for parts in _FRAME_PARTS)) for _ in range(6)]
        assert same_answer(lines), lines


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_FRAME, _FRAME, _FRAME, _LINE), max_size=30))
def test_the_collapse_answers_as_the_reference_on_runs_of_frames(lines: list[str]):
    assert same_answer(lines)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=20))
def test_the_collapse_answers_as_the_reference_on_arbitrary_unicode(lines: list[str]):
    assert same_answer(lines)


def test_a_loss_dict_after_its_bar_is_one_point_with_the_bar_s_step_and_rate():
    frames = [BAR.replace("500/", f"{n}/") for n in (500, 501, 502)]
    records = LogParser().feed_lines([*frames, "{'loss': 2.0, 'epoch': 0.5}"])
    assert [(r.step, r.target_steps, r.epoch, dict(r.metrics)) for r in records] == [
        (502, 1000, 0.5, {"it/s": 8.0, "loss": 2.0})]


def test_a_line_read_apart_from_the_usual_records_still_takes_in_the_bar_before_it():
    """A Keras epoch header is built by its own path, not with the other records: the
    bar before it is folded into it all the same, as into a loss dict."""
    records = LogParser().feed_lines([BAR, "Epoch 2/5"])
    assert [(r.step, r.epoch, dict(r.metrics)) for r in records] == [(500, 1.0, {"it/s": 8.0})]

"""Lua's uncaught error: the interpreter's message, then `stack traceback:` and its
tab-indented frames (LuaJIT under Torch7, karpathy/char-rnn's train.lua as torch.save
failed, sealed-12)."""

from __future__ import annotations

from babysit.model import EventKind, LogEvent
from babysit.parsing.foreign_failures import foreign_failure
from babysit.parsing.parser import LogParser

_FRAMES = ["stack traceback:", "\t[C]: at 0x7f6baa9c8750", "\t[C]: in function 'DiskFile'",
           "\t/home/mwr/torch/install/share/lua/5.1/torch/File.lua:301: in function 'save'",
           "\ttrain.lua:338: in main chunk", "\t[C]: in function 'dofile'"]


def _events(*lines: str) -> list[LogEvent]:
    parser = LogParser()
    found = [e for line in lines if (r := parser.feed(line)) is not None for e in r.events]
    return found + [e for r in parser.finish() for e in r.events]


def test_an_error_raised_in_c_under_the_interpreter_s_path_is_lua_s() -> None:
    # THDiskFile.c raised it: no `train.lua:N:` in the message, the interpreter's path is.
    (event,) = foreign_failure("/home/mwr/torch/install/bin/luajit: cannot open "
                               "<cv/lm_lstm_epoch2.36_1.7848.t7> in mode  w at "
                               "/home/mwr/torch/pkg/torch/lib/TH/THDiskFile.c:484")
    assert event.kind is EventKind.EXCEPTION
    assert event.detail.startswith("Lua: cannot open <cv/lm_lstm_epoch2.36_1.7848.t7>")


def test_a_bare_name_and_any_words_is_not() -> None:
    assert foreign_failure("lua: 5.1 found") == []  # no path: a setting, not the interpreter


def test_one_error_for_the_message_and_its_traceback() -> None:
    found = _events("/usr/local/bin/luajit: train.lua:212: attempt to index local 'x' "
                    "(a nil value)", *_FRAMES)
    assert [e.kind for e in found] == [EventKind.EXCEPTION]


def test_the_line_above_stack_traceback_is_the_error() -> None:
    found = _events("./util/OneHot.lua:17: bad argument #1 to 'index' (out of range)", *_FRAMES)
    (event,) = [e for e in found if e.kind is EventKind.EXCEPTION]
    assert event.detail == "Lua: ./util/OneHot.lua:17: bad argument #1 to 'index' (out of range)"


def test_the_error_during_an_announced_save_broke_it() -> None:
    found = _events("saving checkpoint to cv/lm_lstm_epoch2.36_1.7848.t7\t",
                    "/home/mwr/torch/install/bin/luajit: cannot open "
                    "<cv/lm_lstm_epoch2.36_1.7848.t7> in mode  w at "
                    "/home/mwr/torch/pkg/torch/lib/TH/THDiskFile.c:484", *_FRAMES)
    kinds = [e.kind for e in found]
    assert EventKind.EXCEPTION in kinds and EventKind.CHECKPOINT_ERROR in kinds

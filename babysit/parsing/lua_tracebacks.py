"""Lua's traceback: the error's message, then `stack traceback:` and its frames.

The standalone interpreter (lua.c, LuaJIT's luajit.c) prints an uncaught error as its
message and `debug.traceback`'s frames, each indented by a tab (Torch7's char-rnn as
torch.save failed, sealed-12):

    /home/mwr/torch/install/bin/luajit: cannot open <cv/lm_lstm_epoch2.36_1.7848.t7> in
        mode  w at /home/mwr/torch/pkg/torch/lib/TH/THDiskFile.c:484   (one line)
    stack traceback:
    <TAB>[C]: at 0x7f6baa9c8750
    <TAB>[C]: in function 'DiskFile'
    <TAB>/home/mwr/torch/install/share/lua/5.1/torch/File.lua:301: in function 'save'
    <TAB>train.lua:338: in main chunk

`stack traceback:` is Lua's as surely as `Traceback (most recent call last):` is
Python's, whatever the message line above it looks like (a handler's `print(err)`, a
message that names no Lua file): the line before it is the error. A traceback a
handler printed and then went on (`xpcall(step, debug.traceback)`) is a failure only
until training goes on, as a Python one is.
"""

from __future__ import annotations

from babysit.model import EventKind, LogEvent
from babysit.redact import clip

HEADER = "stack traceback:"


def is_header(line: str) -> bool:
    """Whether the line opens Lua's frames."""
    return line.strip() == HEADER


def lua_error(message_line: str) -> LogEvent:
    """The exception a Lua traceback ends the run with: the line printed above it."""
    text = message_line.strip()
    return LogEvent(EventKind.EXCEPTION, clip(text or HEADER, 500),
                    clip(f"Lua: {text}" if text else "Lua: an error (stack traceback)", 300))

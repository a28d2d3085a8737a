"""A traceback frame's source line that lost its indentation.

Python prints each frame as `  File "x.py", line 3, in f` and, under it, the line of
code, indented by four spaces. Two processes writing one console at once break that
up: a Windows run whose DataLoader workers are started by `spawn` prints the parent's
traceback and the child's (`multiprocessing/spawn.py … in spawn_main`) together, and
one process's indentation can land before the other's line (HoVer-Net on Windows cmd,
sealed-12):

      File "C:\\…\\multiprocessing\\spawn.py", line 114, in _main
    trainer.run()
      File "run_train.py", line 289, in run

A paste may lose the indentation the same way. The line right after a frame, when it
is a line of Python, is that frame's code, not training output that followed an
abandoned traceback: the traceback goes on.
"""

from __future__ import annotations

import ast

from babysit import lazy_re

# A statement's first line that Python cannot parse alone: a block's header, or a call
# continued on the next line (`model = build(cfg,`).
_BLOCK = lazy_re.compile(r"^(?:async\s+)?(?:if|elif|else|for|while|with|try|except|finally|"
                         r"def|class)\b.*:$")
_CALL_OPENED = lazy_re.compile(r"^(?:[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*=\s*)?"
                               r"[A-Za-z_][\w.]*\(.*[(\[{,\\]$")


def frame_source(text: str) -> bool:
    """Whether `text` (unindented, right after a frame line) is a line of Python code."""
    code = text.strip()
    if not code or len(code) > 300:
        return False
    if code.endswith(":"):
        return _BLOCK.match(code) is not None
    if _CALL_OPENED.match(code):
        return True
    tree = _parsed(code)
    if tree is None:
        return False
    if len(tree.body) != 1:
        return False
    statement = tree.body[0]
    # A bare name or number parses too (`Done`, `0.25`), and so do a record's pairs
    # (`loss: 0.5` an annotation, `lr=0.001` an assignment): a number is no code.
    if isinstance(statement, ast.Expr):
        return not isinstance(statement.value, (ast.Name, ast.Constant))
    if isinstance(statement, ast.AnnAssign):
        return False
    if isinstance(statement, ast.Assign):
        return not isinstance(statement.value, (ast.Constant, ast.UnaryOp))
    return True


_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _parsed(code: str) -> ast.Module | None:
    """`code` parsed as Python; or, where it is the first line of a statement continued
    below (`return _run_code(code, main_globals, None,`, `raise ProcessExitedException(`,
    `launch(`: Python shows a frame's first line only), parsed with its open brackets
    closed. None when it is no Python either way."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):
        pass
    opened: list[str] = []
    for char in code:
        if char in _CLOSERS:
            opened.append(_CLOSERS[char])
        elif char in ")]}" and (not opened or opened.pop() != char):
            return None
    if not opened:
        return None
    try:
        return ast.parse(code.rstrip(",\\ ") + "".join(reversed(opened)))
    except (SyntaxError, ValueError):
        return None

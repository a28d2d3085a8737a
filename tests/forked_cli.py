"""`babysit ARGS` run the way `python -m babysit ARGS` runs it, as a separate process with
its own arguments, environment, working directory, output and exit code, but forked
from a server process that has already imported the target's client library.

Importing mlflow or the Google clients costs about two CPU seconds per process; the
tests of those targets start babysit a few dozen times. What this leaves out — Python's
own start-up and babysit's imports — is exercised by every other command-line test.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO


def fork(target: Callable[..., None], args: Sequence[Any], preload: Sequence[str],
         pipes: int) -> tuple[Any, list[TextIO]]:
    """Start `target(*args, *write_ends)` in a child of the forkserver (which imports
    `preload` once per worker); returns the process and the read end of each of `pipes`
    pipes. The first call in a worker starts its server: later preload lists are ignored
    (the child then imports what it lacks itself)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([*preload, "babysit.entry", "tests.forked_cli"])
    # Pipe ends are handed to the child by the forkserver, not inherited.
    ends = [context.Pipe(duplex=False) for _ in range(pipes)]
    child = context.Process(target=target, args=(*args, *(w for _, w in ends)))
    child.start()
    readers = []
    for reader, writer in ends:
        writer.close()
        readers.append(os.fdopen(os.dup(reader.fileno()), "r", errors="replace"))
        reader.close()
    return child, readers


def run_babysit(args: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
                preload: Sequence[str]) -> subprocess.CompletedProcess[str]:
    child, streams = fork(_babysit, (list(args), str(cwd), dict(env)), preload, pipes=2)
    texts: dict[int, str] = {}
    readers = [threading.Thread(target=_read_all, args=(stream, index, texts), daemon=True)
               for index, stream in enumerate(streams)]
    for reader in readers:
        reader.start()
    child.join(timeout)
    if child.exitcode is None:
        child.kill()
        child.join(10)
        raise subprocess.TimeoutExpired(["babysit", *args], timeout)
    for reader in readers:
        reader.join(10)
    return subprocess.CompletedProcess(["babysit", *args], child.exitcode,
                                       texts.get(0, ""), texts.get(1, ""))


def _read_all(stream: TextIO, index: int, texts: dict[int, str]) -> None:
    with stream:
        texts[index] = stream.read()


def _babysit(args: list[str], cwd: str, env: dict[str, str], out: Any, err: Any) -> None:
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    out.close()
    err.close()
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["babysit", *args]
    code = 1
    try:
        from babysit.entry import main

        code = main(args)
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)

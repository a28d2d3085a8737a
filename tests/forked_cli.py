"""`babysit ARGS` run the way `python -m babysit ARGS` runs it, as a separate process with
its own arguments, environment, working directory, output and exit code, but forked
from a server process that has already imported babysit (and the target's client
library, where one is named).

Importing mlflow or the Google clients costs about two CPU seconds per process; the
tests of those targets start babysit a few dozen times. A fresh `python -m babysit`
costs ~0.3 CPU seconds (Python, typer, rich, babysit's modules and their patterns), a
fork of one that has them ~0.05: the command-line tests that are about what babysit
prints, writes and exits with (`python_m_babysit`) start it that way: it gets the
caller's arguments, environment, working directory and umask. What this leaves out —
Python's own start-up, babysit's imports, a terminal, signals — is exercised by
the tests that still start `python -m babysit` (tests/test_entry.py,
tests/test_invocation.py, tests/test_next_commands.py, the scheduling and injection
tests, every test that presses Ctrl-C or watches a live process).
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

import babysit

# What babysit imports to watch a log: preloaded by every server, so that no test's fork
# pays for them, whichever test started the server.
_BABYSIT = ["babysit.entry", "babysit.cli", "babysit.core.session", "tests.forked_cli"]
# `sys.argv[0]` under `python -m babysit`: babysit names itself from it (babysit/invocation.py).
_MAIN = str(Path(babysit.__file__).parent / "__main__.py")
_server_preload: set[str] = set()


def fork(target: Callable[..., None], args: Sequence[Any], preload: Sequence[str],
         pipes: int) -> tuple[Any, list[TextIO]]:
    """Start `target(*args, *write_ends)` in a child of the forkserver (which imports
    `preload` once per worker); returns the process and the read end of each of `pipes`
    pipes. A server started without a module now asked for is started again with both
    lists (a child that imported mlflow itself would pay what the server is for), unless
    a child of it still runs: the server reports its exit code."""
    context = multiprocessing.get_context("forkserver")
    wanted = {*preload, *_BABYSIT}
    if not wanted <= _server_preload and not multiprocessing.active_children():
        if _server_preload:
            from multiprocessing import forkserver

            forkserver._forkserver._stop()  # the next Process starts a new one
        _server_preload.update(wanted)
        context.set_forkserver_preload(sorted(_server_preload))
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


def python_m_babysit(*args: str, cwd: Path, env: Mapping[str, str] | None = None,
                     timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`subprocess.run([sys.executable, "-m", "babysit", *args], capture_output=True,
    text=True)`, forked (see above); `env` as subprocess takes it (None: this one's)."""
    return run_babysit(args, cwd=cwd, env=os.environ if env is None else env,
                       timeout=timeout, preload=(), argv0=_MAIN)


def run_babysit(args: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
                preload: Sequence[str], argv0: str = "babysit"
                ) -> subprocess.CompletedProcess[str]:
    umask = os.umask(0o022)  # read it: a fork of the server has the server's, not ours
    os.umask(umask)
    child, streams = fork(_babysit, (list(args), str(cwd), dict(env), argv0, umask), preload,
                          pipes=2)
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


def _babysit(args: list[str], cwd: str, env: dict[str, str], argv0: str, umask: int,
             out: Any, err: Any) -> None:
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    out.close()
    err.close()
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    os.umask(umask)
    sys.argv = [argv0, *args]
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

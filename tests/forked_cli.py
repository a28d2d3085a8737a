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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def run_babysit(args: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
                preload: Sequence[str]) -> subprocess.CompletedProcess[str]:
    context = multiprocessing.get_context("forkserver")
    # The first call in a worker starts its server; later lists are ignored (and the
    # child imports what is missing itself).
    context.set_forkserver_preload([*preload, "babysit.entry", "tests.forked_cli"])
    out_reader, out_writer = context.Pipe(duplex=False)
    err_reader, err_writer = context.Pipe(duplex=False)
    child = context.Process(target=_babysit, args=(list(args), str(cwd), dict(env), out_writer,
                                                   err_writer))
    child.start()
    out_writer.close()
    err_writer.close()
    texts: dict[str, str] = {}
    readers = [threading.Thread(target=_read_all, args=(conn, name, texts), daemon=True)
               for conn, name in ((out_reader, "out"), (err_reader, "err"))]
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
                                       texts.get("out", ""), texts.get("err", ""))


def _read_all(conn: Any, name: str, texts: dict[str, str]) -> None:
    with os.fdopen(os.dup(conn.fileno()), "r", errors="replace") as stream:
        conn.close()
        texts[name] = stream.read()


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

"""TensorBoard event files: the kind's declaration.

Cheap to import: claiming a path looks only at names in the file system, and
TensorBoard's protobufs are imported when a target is opened (`events`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from babysit.targets.base import Target
from babysit.targets.kinds import Request, TargetKind

MARK = "tfevents"  # every event file's name holds it: events.out.tfevents.<time>.<host>…
# How far claiming a directory looks: a log dir holds its runs a level or three down
# (exp1/train, lightning_logs/version_0); a home directory must not be walked.
SEARCH_DEPTH = 4
SEARCH_ENTRIES = 2000


def is_event_file_name(name: str) -> bool:
    return MARK in name


def holds_event_files(directory: str, depth: int = SEARCH_DEPTH,
                      budget: int = SEARCH_ENTRIES) -> bool:
    """Whether `directory`, or a folder up to `depth` levels below it, holds an event file;
    gives up (False) after looking at `budget` entries. Depth first, each folder entered
    as soon as it is met: a sweep's log dir of thousands of run folders is recognised in
    its first run, not given up on while its top level is still being listed."""
    stack: list[tuple[Iterator[os.DirEntry[str]], int]] = []

    def enter(folder: str, level: int) -> None:
        with contextlib.suppress(OSError):
            stack.append((os.scandir(folder), level))

    enter(directory, 0)
    seen = 0
    try:
        while stack:
            entries, level = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                entries.close()  # type: ignore[attr-defined]
                continue
            seen += 1
            if seen > budget:
                return False
            try:
                if entry.is_dir(follow_symlinks=False):
                    if level < depth and not entry.name.startswith("."):
                        enter(entry.path, level + 1)
                elif is_event_file_name(entry.name) and entry.is_file():
                    return True
            except OSError:
                continue
        return False
    finally:
        for entries, _ in stack:
            entries.close()  # type: ignore[attr-defined]


def claims(text: str) -> bool:
    """An event file (its name says `tfevents`), or a directory holding some."""
    if is_event_file_name(os.path.basename(text.rstrip("/"))):
        return True
    return os.path.isdir(text) and holds_event_files(text)


def _open(request: Request) -> Target:
    from babysit.targets.tensorboard.events import TensorBoardTarget

    return TensorBoardTarget(request.value)


KIND = TargetKind(
    name="tensorboard", title="TensorBoard event files", flag=None, metavar="LOGDIR",
    help="TensorBoard event files (events.out.tfevents.*): one file, or a log dir whose "
         "runs (train/, eval/, …) are read together as they grow; scalar tags map to "
         "babysit's names (train/loss → loss, eval/loss → eval_loss, learning_rate → lr).",
    open=_open, example="babysit ./runs/exp1 --total-steps 10000",
    extra="tensorboard", claims=claims)

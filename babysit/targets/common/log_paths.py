"""What to say about a log path that is not a log: the names the user may have meant.

A typo (`trian.log`, `lgos/train.log`) should fail at once with "did you mean
train.log?", not wait ten minutes for a file that will never appear; a folder given
instead of its log should name the log inside. Every listing is bounded: a folder of a
million checkpoints costs at most `_LISTED` names."""

from __future__ import annotations

import difflib
import errno
import itertools
import os
import re
from pathlib import Path

from babysit import lazy_re

_LISTED = 2000  # names read from one folder, at most
_SHOWN = 3
_CLOSE = 0.75  # difflib ratio: `trian.log`/`train.log` 0.89, `eval.log`/`train.log` 0.59
_LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".jsonl")


def _names(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return [entry.name for entry in itertools.islice(entries, _LISTED)]
    except OSError:
        return []


def _close(name: str, names: list[str]) -> list[str]:
    exact_but_case = [n for n in names if n.lower() == name.lower()]
    return exact_but_case or difflib.get_close_matches(name, names, n=_SHOWN, cutoff=_CLOSE)


def _shown(path: Path) -> str:
    text = os.fspath(path)
    return text[2:] if text.startswith("./") else text


def near_paths(path: str) -> list[str]:
    """Existing paths that differ from `path` (which does not exist) by a typo in one
    component: the first component that is missing is compared with its siblings."""
    parts = Path(path).parts
    here = Path(parts[0]) if Path(path).is_absolute() else Path(".")
    rest = parts[1:] if Path(path).is_absolute() else parts
    for index, part in enumerate(rest):
        if (here / part).exists():
            here = here / part
            continue
        found = []
        for name in _close(part, _names(here)):
            candidate = here.joinpath(name, *rest[index + 1:])
            if candidate.exists():
                found.append(_shown(candidate))
        return found
    return []


def folder_is_missing(path: str) -> bool:
    parent = Path(path).parent
    return not parent.is_dir()


def logs_inside(folder: str) -> list[str]:
    """The files in `folder` that look like logs, newest first."""
    found: list[tuple[float, str]] = []
    for name in _names(Path(folder)):
        candidate = Path(folder) / name
        if not (name.endswith(_LOG_SUFFIXES) or "log" in name.lower()):
            continue
        try:
            if candidate.is_file():
                found.append((candidate.stat().st_mtime, _shown(candidate)))
        except OSError:
            continue
    return [name for _, name in sorted(found, reverse=True)[:_SHOWN]]


def did_you_mean(paths: list[str]) -> str:
    """` (did you mean train.log?)`, or "" when there is nothing to suggest."""
    if not paths:
        return ""
    return f" (did you mean {' or '.join(paths)}?)"


def not_found(path: str) -> str:
    """The message for a log path that does not exist: a close name, or the missing
    folder, when there is one to name."""
    if Path(path).is_symlink():  # a link to nothing, or links that lead back to themselves
        try:
            Path(path).resolve(strict=True)
        except RuntimeError:  # Python 3.11 raises this for a loop
            return f"log file not found: {path} is a symbolic link that leads back to itself"
        except OSError as error:
            if error.errno == errno.ELOOP:
                return f"log file not found: {path} is a symbolic link that leads back to itself"
            return f"log file not found: {path} is a symbolic link to a missing file"
    near = near_paths(path)
    if near:
        return f"log file not found: {path}{did_you_mean(near)}"
    if folder_is_missing(path):
        return f"log file not found: {path} (there is no folder {Path(path).parent}/)"
    return f"log file not found: {path}"


# A run's number or version in a name (`run2`, `train_v2`, `epoch-10`): names that
# differ only there are runs of a series, not a typo of each other.
_SERIES_PART = lazy_re.compile(r"[_.-]?v?\d+", re.IGNORECASE)


def next_in_series(path: str, existing: str) -> bool:
    """Whether `path` differs from an existing name only by a run's number or version
    (`run2.log` beside `run1.log`, `train_v2.log` beside `train.log`): the next run of a
    series, which a user starts babysit before, not a typo (`trian.log`)."""
    ours, theirs = Path(path).name, Path(existing).name
    return ours != theirs and _SERIES_PART.sub("", ours) == _SERIES_PART.sub("", theirs)


def worth_waiting_for(path: str) -> bool:
    """A missing log the run may still create: its folder exists and nothing there has
    a name close to it (a close name is a typo, not a log to come) — unless the close
    name is an earlier run of the same series (`run1.log` when `run2.log` is asked for)."""
    if folder_is_missing(path):
        return False
    return all(next_in_series(path, near) for near in near_paths(path))

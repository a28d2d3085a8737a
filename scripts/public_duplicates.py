"""Public logs that are another public log again: the same run's output under a new name.

Each held-out set is meant to be logs nobody here had seen. A collector who takes a file
from a fork, a later commit or a second paste of the same run brings back a log an earlier
set already holds (a CRLF copy, a longer or shorter cut of the same file), and its score
then measures memory, and where the two readers disagreed, counts one of them wrong
whatever babysit says. A log is a copy of another when nearly all the distinct lines of
one of them (`_CONTAINED`) are lines of the other, compared after line endings and the
whitespace around each line are dropped; the copy is the one in the later set.

    python scripts/public_duplicates.py      # list the copies and their `duplicate_of`

The later copy's expectation names the earlier log in `duplicate_of` (`sealed-6/x.log`;
a development-split log by its bare name); the scorer leaves such entries out of its
count, and tests/test_public_logs.py fails on a copy that does not say so.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / "tests" / "fixtures" / "logs" / "public"

# Share of one log's distinct lines the other must hold to be the same run's output.
_CONTAINED = 0.9
# Distinct lines a log needs before it can be called a copy: a handful of lines (a
# banner, a traceback's frames) is shared by unrelated runs of one program.
_MIN_LINES = 10
# A line held by more logs than this is boilerplate (a framework's banner), no evidence.
_COMMON = 4


def _split_order(split: str) -> int:
    """The development split first, then sealed, sealed-2, …, in the order collected."""
    if not split:
        return 0
    number = re.fullmatch(r"sealed(?:-(\d+))?", split)
    return int(number.group(1) or 1) if number else 10**6


def name_of(log: Path) -> str:
    """The log as `duplicate_of` names it: `split/file`, or the bare file name."""
    split = _split(log, PUBLIC)
    return f"{split}/{log.name}" if split else log.name


def _lines(log: Path) -> set[bytes]:
    text = log.read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return {hashlib.blake2b(line.strip(), digest_size=8).digest()
            for line in text.split(b"\n") if line.strip()}


def _split(log: Path, public: Path) -> str:
    folder = log.parent.relative_to(public).as_posix()
    return "" if folder == "." else folder


def _logs(public: Path) -> list[Path]:
    return sorted(public.rglob("*.log"),
                  key=lambda log: (_split_order(_split(log, public)), log.name))


def copies(public: Path = PUBLIC) -> Iterator[tuple[Path, Path]]:
    """(later copy, earlier log) for each log that repeats an earlier one."""
    logs = _logs(public)
    lines = {log: _lines(log) for log in logs}
    holders: dict[bytes, list[Path]] = defaultdict(list)
    for log in logs:
        for line in lines[log]:
            holders[line].append(log)
    shared: dict[tuple[Path, Path], int] = defaultdict(int)
    for held_by in holders.values():
        if 1 < len(held_by) <= _COMMON:
            for pair in combinations(held_by, 2):
                shared[pair] += 1
    # Each log's own lines: those few logs hold (boilerplate is in neither count).
    own = {log: sum(len(holders[line]) <= _COMMON for line in lines[log]) for log in logs}
    rank = {log: index for index, log in enumerate(logs)}
    for (first, second), count in sorted(shared.items(), key=lambda item: rank[item[0][1]]):
        smaller = min(own[first], own[second])
        if smaller >= _MIN_LINES and count >= _CONTAINED * smaller:
            earlier, later = sorted((first, second), key=rank.__getitem__)
            yield later, earlier


def marked(said: object, earlier: str) -> bool:
    """Whether a `duplicate_of` names this earlier log: the name, or a list of the names
    of a log that repeats two earlier ones (a run collected twice before)."""
    return said == earlier or (isinstance(said, list) and earlier in said)


def main() -> int:
    found = 0
    for later, earlier in copies():
        expected = json.loads((later.parent / "expected.json").read_text())
        said = expected.get(later.name, {}).get("duplicate_of")
        mark = "ok" if marked(said, name_of(earlier)) else "NOT MARKED"
        print(f"{mark:10s} {name_of(later)}\n           duplicate_of {name_of(earlier)}")
        found += 1
    print(f"{found} copies")
    return 0


if __name__ == "__main__":
    sys.exit(main())

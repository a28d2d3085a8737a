"""A golden check for the log parser: every Record it produces for every fixture log.

    python scripts/parse_golden.py write golden.json     # record the digests
    python scripts/parse_golden.py check golden.json     # compare; exit 1 on a difference
    python scripts/parse_golden.py dump LOG [MODE]       # the records of one log, one a line

Each log under tests/fixtures/logs/ (all folders) is read three ways, as the readers read:
- `whole`: split by LineSplitter in the follower's 4 MiB chunks, `feed_lines` per chunk,
  then the unterminated last line and `finish()`;
- `drip`: the same in 4093-byte chunks, so a bar's redraws and the line after them
  straddle `feed_lines` calls;
- `follow`: a LogFollower with a 16 KiB tail, so a log over 32 KiB takes the history
  scan (`learn_start_up`, lines parsed alone) before its tail is parsed in full.
A log's digest covers the repr of every Record (field order and metric order included)
and, after the read, `reading()`, the formats counted, the phase, the schedule and facts.
Restructuring the parser must leave every digest as it was.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from babysit.parsing.parser import LogParser  # noqa: E402
from babysit.reading.follower import LogFollower  # noqa: E402
from babysit.reading.lines import LineSplitter  # noqa: E402
from babysit.targets.common.log_file import LocalFileAccess  # noqa: E402

LOGS = ROOT / "tests" / "fixtures" / "logs"
MODES = ("whole", "drip", "follow")


def _split_read(path: Path, chunk: int) -> Iterator[str]:
    parser = LogParser()
    splitter = LineSplitter()
    data = path.read_bytes()
    for start in range(0, len(data), chunk):
        for record in parser.feed_lines(splitter.feed(data[start:start + chunk])):
            yield repr(record)
    for record in parser.feed_lines(splitter.flush()):
        yield repr(record)
    for record in parser.finish():
        yield repr(record)
    yield _state(parser)


def _state(parser: LogParser) -> str:
    return repr((parser.reading(), sorted(parser.formats.items()), parser.phase,
                 parser.lr_schedule, sorted(parser.facts.items()), parser.step, parser.target))


def _follow_read(path: Path) -> Iterator[str]:
    follower = LogFollower(LocalFileAccess(str(path), use_grep=False), tail_bytes=16 * 1024)
    try:
        snapshot = follower.poll(final=True)
    finally:
        follower.close()
    log = snapshot.log
    for record in log.records:
        yield repr(record)
    yield repr((log.new_lines, log.formats, log.phase, log.reading, log.lr_schedule,
                snapshot.notices))


def lines_of(path: Path, mode: str) -> Iterator[str]:
    if mode == "whole":
        return _split_read(path, 4 * 1024 * 1024)
    if mode == "drip":
        return _split_read(path, 4093)
    return _follow_read(path)


def logs() -> list[Path]:
    return sorted(p for p in LOGS.rglob("*") if p.is_file() and p.suffix not in (".md", ".json"))


def digests() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in logs():
        name = str(path.relative_to(LOGS))
        for mode in MODES:
            digest = hashlib.sha256()
            for text in lines_of(path, mode):
                digest.update(text.encode("utf-8", "surrogatepass") + b"\n")
            found[f"{name} [{mode}]"] = digest.hexdigest()
    return found


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "dump":
        for text in lines_of(LOGS / argv[1], argv[2] if len(argv) > 2 else "whole"):
            print(text)
        return 0
    if len(argv) != 2 or argv[0] not in ("write", "check"):
        print(__doc__)
        return 2
    found = digests()
    if argv[0] == "write":
        Path(argv[1]).write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"{len(found)} digests ({len(found) // len(MODES)} logs) written")
        return 0
    expected: dict[str, str] = json.loads(Path(argv[1]).read_text())
    differ = sorted(k for k in expected.keys() | found.keys()
                    if expected.get(k) != found.get(k))
    for key in differ:
        print(f"DIFFERS: {key}")
    print(f"{len(found) - len(differ)} of {len(found)} identical "
          f"({len(found) // len(MODES)} logs × {len(MODES)} ways)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

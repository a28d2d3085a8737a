"""The hyperscan searcher of the history scan: chunks scanned on several threads give
exactly the matches of a plain sequential search, and its compiled-pattern cache never
gets in the way."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from babysit.reading import finders
from babysit.reading.finders import local_finder, python_offsets

pytest.importorskip("hyperscan")

MIB = 1024 * 1024
WORD = "Traceback"


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("BABYSIT_CACHE_DIR", str(cache))
    return cache


def _log_with_words_around_chunk_edges(path: Path) -> None:
    """~5 MiB of filler with the word at each 1 MiB edge: ending just before it, across
    it, starting on it, its last byte on it."""
    data = bytearray(b"step 1 | loss 2.0\n" * (5 * MIB // 18))
    places = [0, 77, MIB - len(WORD), 2 * MIB - 4, 3 * MIB, 4 * MIB - len(WORD) + 1]
    for at in places:
        data[at : at + len(WORD)] = WORD.encode()
    path.write_bytes(bytes(data))


def _starts(path: Path, start: int, end: int) -> list[int]:
    hits = local_finder(str(path))(WORD, start, end)  # hyperscan: the match's last byte
    return [hit - (len(WORD) - 1) for hit in hits]


def _expected(path: Path, start: int, end: int) -> list[int]:
    data = path.read_bytes()
    read = lambda offset, size: data[offset : offset + size]  # noqa: E731
    return list(python_offsets(read, WORD, start, end))


def test_threads_find_every_match_a_sequential_search_finds(tmp_path: Path):
    log = tmp_path / "train.log"
    _log_with_words_around_chunk_edges(log)
    size = log.stat().st_size
    found = _starts(log, 0, size)
    assert found == _expected(log, 0, size)
    assert len(found) == 6  # none lost at an edge, none counted twice


def test_a_range_that_starts_and_ends_inside_chunks_is_searched_exactly(tmp_path: Path):
    log = tmp_path / "train.log"
    _log_with_words_around_chunk_edges(log)
    start, end = MIB - 3, 4 * MIB + 5
    assert _starts(log, start, end) == [at for at in _expected(log, 0, log.stat().st_size)
                                        if start <= at and at + len(WORD) <= end]


def test_a_chunk_thick_with_matches_is_read_to_its_end(tmp_path: Path):
    """More matches in one chunk than are collected at a time (a NaN flood): the search
    goes on from the line after the last one kept, and nothing is repeated."""
    log = tmp_path / "train.log"
    lines = [f"iter {i}: loss nan\n" for i in range(20_000)]  # ~400 KiB: one chunk
    log.write_text("".join(lines) + "step 2 | loss 1.0\n" * (3 * MIB // 18))
    hits = list(local_finder(str(log))("nan", 0, log.stat().st_size))
    assert len(hits) == 20_000 and hits == sorted(set(hits))


def test_closing_a_search_early_stops_its_threads(tmp_path: Path):
    log = tmp_path / "train.log"
    _log_with_words_around_chunk_edges(log)
    hits = local_finder(str(log))(WORD, 0, log.stat().st_size)
    assert next(hits) == len(WORD) - 1
    hits.close()
    assert not [t for t in threading.enumerate() if t.name == "babysit-scan"]


def test_the_compiled_pattern_is_kept_and_a_damaged_entry_compiled_again(tmp_path: Path,
                                                                         own_cache: Path):
    log = tmp_path / "train.log"
    _log_with_words_around_chunk_edges(log)
    size = log.stat().st_size
    expected = _expected(log, 0, size)
    assert _starts(log, 0, size) == expected
    (entry,) = own_cache.glob("hyperscan-*.db")
    kept = entry.read_bytes()
    entry.write_bytes(kept[: len(kept) // 2])  # cut short, as by a full disk
    assert _starts(log, 0, size) == expected
    assert entry.read_bytes() == kept  # written again, whole


def test_a_cache_that_cannot_be_written_or_read_changes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    log = tmp_path / "train.log"
    _log_with_words_around_chunk_edges(log)
    size = log.stat().st_size
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    monkeypatch.setenv("BABYSIT_CACHE_DIR", str(not_a_dir))
    assert _starts(log, 0, size) == _expected(log, 0, size)


def test_a_fifo_where_the_cache_entry_goes_does_not_block(tmp_path: Path, own_cache: Path):
    log = tmp_path / "train.log"
    _log_with_words_around_chunk_edges(log)
    size = log.stat().st_size
    _starts(log, 0, size)
    (entry,) = own_cache.glob("hyperscan-*.db")
    entry.unlink()
    os.mkfifo(entry)
    assert _starts(log, 0, size) == _expected(log, 0, size)  # and it returned at all


def test_one_thread_is_used_where_only_one_cpu_is(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(finders, "_workers", lambda: 1)
    log = tmp_path / "train.log"
    _log_with_words_around_chunk_edges(log)
    size = log.stat().st_size
    assert _starts(log, 0, size) == _expected(log, 0, size)

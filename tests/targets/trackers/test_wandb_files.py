"""WandbRunDir against real runs: wandb.init(mode="offline") in child processes
(wandb_writer.py), then the files it leaves, copied, cut and damaged."""

from __future__ import annotations

import importlib.util
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from babysit.targets.wandb import files as wandb_files
from babysit.targets.wandb.files import RunFileUpdate, WandbFormatError, WandbRunDir
from tests.targets.trackers.wandb_runs import STEPS, WIDE, _start

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("wandb") is None,
                                 reason="wandb is not installed"),
              pytest.mark.service]  # real W&B runs, slow: `-m service` (.ci/run's second stage)

def _steps(update: RunFileUpdate) -> list[int | None]:
    return [step for step, _ in update.history]


def test_clean_run_gives_every_row_config_summary_and_exit(
        runs: dict[str, tuple[Path, int]]) -> None:
    root, _ = runs["finish"]
    reader = WandbRunDir(root / "wandb")
    update = reader.poll()
    assert _steps(update) == list(range(STEPS))
    first = dict(update.history[0][1])
    assert first == {"loss": 1.0, "lr": 0.001, "acc/top1": 0.0}  # no "phase", no "_…"
    assert update.history[-1][1]["loss"] == pytest.approx(1.0 / STEPS)
    assert update.config == {"lr": 0.001, "optimizer/name": "adamw",
                             "optimizer/betas": [0.9, 0.999], "batch_size": 32}
    assert update.summary["best_loss"] == pytest.approx(1.0 / STEPS)
    assert update.summary["loss"] == pytest.approx(1.0 / STEPS)
    assert update.run["project"] == "babysit-tests"
    assert update.run["display_name"] == "writer-finish"
    assert reader.path.name == f"run-{update.run['run_id']}.wandb"
    assert "url" not in update.run and "entity" not in update.run  # offline: neither is known
    assert (update.exit_code, update.finished, update.skipped_records) == (0, True, 0)
    assert update.system and all("_timestamp" in row for row in update.system)
    assert all(isinstance(v, float) for row in update.system for v in row.values())
    # Nothing new: an empty update.
    again = reader.poll()
    assert again == RunFileUpdate((), (), {}, {}, {}, None, False, 0)


def test_every_way_of_naming_the_run_finds_the_same_file(
        runs: dict[str, tuple[Path, int]]) -> None:
    root, _ = runs["finish"]
    target = WandbRunDir(root).path
    run_dir = target.parent
    for name in (root / "wandb", root / "wandb" / "latest-run", run_dir, target):
        assert WandbRunDir(name).path == target
    assert run_dir.name.startswith("offline-run-")


def test_nan_and_inf_are_kept(runs: dict[str, tuple[Path, int]]) -> None:
    update = WandbRunDir(runs["nan"][0]).poll()
    row = dict(update.history)[5]
    assert math.isnan(row["loss"])
    assert row["grad_norm"] == math.inf
    assert not math.isnan(dict(update.history)[6]["loss"])


def test_typed_history_encoding_reads_the_same(runs: dict[str, tuple[Path, int]]) -> None:
    typed = WandbRunDir(runs["typed"][0]).poll()
    plain = WandbRunDir(runs["finish"][0]).poll()
    assert typed.history == plain.history


def test_uncaught_exception_leaves_an_exit_record_with_code_1(
        runs: dict[str, tuple[Path, int]]) -> None:
    root, returncode = runs["raise"]
    assert returncode == 1
    update = WandbRunDir(root).poll()
    # wandb's exit hook finishes the run with the process's exit code.
    assert (update.finished, update.exit_code) == (True, 1)
    assert _steps(update) == [0, 1, 2, 3, 4]


def test_sigkill_leaves_no_exit_record_and_history_up_to_the_kill(
        runs: dict[str, tuple[Path, int]]) -> None:
    root, returncode = runs["kill"]
    assert returncode == -9
    update = WandbRunDir(root).poll()
    assert (update.finished, update.exit_code) == (False, None)
    steps = _steps(update)
    # Step 4 may still sit in the SDK (a row is sent when the next step starts).
    assert steps in ([0, 1, 2, 3], [0, 1, 2, 3, 4])
    assert update.skipped_records == 0


def test_reading_while_the_run_writes_loses_and_repeats_nothing(tmp_path: Path) -> None:
    proc = _start(tmp_path, "--mode", "slow", "--steps", "12", "--delay", "0.25")
    try:
        deadline = time.monotonic() + 120
        reader = None
        while reader is None:
            try:
                reader = WandbRunDir(tmp_path / "wandb")
            except FileNotFoundError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
        updates: list[RunFileUpdate] = []
        live_polls_with_rows = 0
        while proc.poll() is None:
            assert time.monotonic() < deadline
            update = reader.poll()
            updates.append(update)
            if update.history and proc.poll() is None:
                live_polls_with_rows += 1
            time.sleep(0.1)
        updates.append(reader.poll())
    finally:
        proc.kill()
        proc.wait()
    steps = [step for update in updates for step, _ in update.history]
    assert steps == list(range(12))
    assert live_polls_with_rows >= 3
    assert [u.finished for u in updates].count(True) == 1


@pytest.mark.parametrize("read_size", [1 << 20, 777])
def test_file_growing_in_arbitrary_pieces_reads_like_the_whole(
        runs: dict[str, tuple[Path, int]], tmp_path: Path, read_size: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wandb_files, "_READ_SIZE", read_size)
    source = WandbRunDir(runs["wide"][0]).path
    data = source.read_bytes()
    whole = WandbRunDir(source).poll()
    assert len(whole.history[0][1]) == WIDE + 3 and len(data) > 3 * 32 * 1024
    target = tmp_path / "run-copy.wandb"
    target.write_bytes(b"")
    reader = WandbRunDir(target)
    pieces: list[RunFileUpdate] = []
    cuts = [3, 7, 8, 100, 5000, 32767, 32768, 32769, 40000, 70001, len(data) - 1, len(data)]
    written = 0
    for cut in cuts:
        with target.open("ab") as handle:
            handle.write(data[written:cut])
        written = cut
        pieces.append(reader.poll())
    assert [row for p in pieces for row in p.history] == list(whole.history)
    assert sum(len(p.system) for p in pieces) == len(whole.system)
    assert [p.finished for p in pieces] == [False] * (len(cuts) - 1) + [True]
    assert all(p.skipped_records == 0 for p in pieces)
    # The wide row (step 0) spans blocks: it arrives only once its LAST chunk has.
    assert next(i for i, p in enumerate(pieces) if p.history) > cuts.index(70001)


def test_file_cut_mid_record_returns_complete_records_and_the_rest_waits(
        runs: dict[str, tuple[Path, int]], tmp_path: Path) -> None:
    data = WandbRunDir(runs["finish"][0]).path.read_bytes()
    whole = WandbRunDir(runs["finish"][0]).poll()
    target = tmp_path / "run-cut.wandb"
    for cut in range(7, len(data), 97):
        target.write_bytes(data[:cut])
        reader = WandbRunDir(target)
        head = reader.poll()
        assert head.history == whole.history[: len(head.history)]
        with target.open("ab") as handle:
            handle.write(data[cut:])
        rest = reader.poll()
        assert head.history + rest.history == whole.history
        assert (head.skipped_records, rest.skipped_records) == (0, 0)
        assert rest.finished and not head.finished


def test_corrupt_bytes_are_skipped_and_counted(
        runs: dict[str, tuple[Path, int]], tmp_path: Path) -> None:
    data = bytearray(WandbRunDir(runs["finish"][0]).path.read_bytes())
    whole = WandbRunDir(runs["finish"][0]).poll()
    # Damage the 6th history row: the rest of its 32 KiB block (here: the file) is lost.
    at = _nth(data, b"acc", 6)
    data[at] ^= 0x20
    target = tmp_path / "run-bad.wandb"
    target.write_bytes(bytes(data))
    update = WandbRunDir(target).poll()
    assert update.skipped_records == 1
    assert 0 < len(update.history) < STEPS
    assert update.history == whole.history[: len(update.history)]


@pytest.mark.parametrize("read_size", [1 << 20, 1000])
def test_a_corrupt_block_costs_only_its_records(
        runs: dict[str, tuple[Path, int]], tmp_path: Path, read_size: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wandb_files, "_READ_SIZE", read_size)
    data = bytearray(WandbRunDir(runs["wide"][0]).path.read_bytes())
    # wandb writes the wide summary update first, then the wide history row, so the last
    # MIDDLE chunk (a whole block) belongs to the row of step 0: damage it.
    middle = [start for start, kind in _chunk_starts(data) if kind == 3][-1]
    data[middle + 1000] ^= 0xFF
    target = tmp_path / "run-bad.wandb"
    target.write_bytes(bytes(data))
    update = WandbRunDir(target).poll()
    assert _steps(update) == list(range(1, STEPS))
    assert update.skipped_records == 1 and update.finished


def test_undecodable_record_with_a_good_checksum_is_skipped(
        runs: dict[str, tuple[Path, int]], tmp_path: Path) -> None:
    import struct
    import zlib

    data = WandbRunDir(runs["kill"][0]).path.read_bytes()
    garbage = b"\xff" * 12
    chunk = struct.pack("<IHB", zlib.crc32(b"\x01" + garbage), len(garbage), 1) + garbage
    target = tmp_path / "run-junk.wandb"
    target.write_bytes(data + chunk)
    update = WandbRunDir(target).poll()
    assert update.skipped_records == 1
    assert len(update.history) >= 4


def test_missing_run_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"run-\*\.wandb"):
        WandbRunDir(tmp_path)
    with pytest.raises(FileNotFoundError):
        WandbRunDir(tmp_path / "nowhere")


def test_file_that_vanishes_shrinks_or_is_not_wandb(
        runs: dict[str, tuple[Path, int]], tmp_path: Path) -> None:
    data = WandbRunDir(runs["finish"][0]).path.read_bytes()
    target = tmp_path / "run-x.wandb"
    target.write_bytes(data)
    reader = WandbRunDir(target)
    reader.poll()
    with target.open("r+b") as handle:
        handle.truncate(100)
    with pytest.raises(WandbFormatError, match="shrank"):
        reader.poll()
    target.unlink()
    with pytest.raises(FileNotFoundError, match=r"run-x\.wandb"):
        reader.poll()
    target.write_bytes(b"PK\x03\x04 definitely not a wandb file")
    with pytest.raises(WandbFormatError, match="not a W&B transaction log"):
        WandbRunDir(target).poll()


def test_header_not_yet_written_is_not_an_error(tmp_path: Path) -> None:
    target = tmp_path / "run-new.wandb"
    target.write_bytes(b":W&")
    reader = WandbRunDir(target)
    assert reader.poll().history == ()


def _chunk_starts(data: bytearray) -> list[tuple[int, int]]:
    """(offset, type) of each chunk, walking the 32 KiB blocks as wandb lays them out."""
    found: list[tuple[int, int]] = []
    at = 7
    while at + 7 <= len(data):
        left = 32768 - at % 32768
        if left < 7:
            at += left
            continue
        length, kind = int.from_bytes(data[at + 4:at + 6], "little"), data[at + 6]
        found.append((at, kind))
        at += 7 + length
    return found


def _nth(data: bytearray, needle: bytes, n: int) -> int:
    at = -1
    for _ in range(n):
        at = data.index(needle, at + 1)
    return at


def test_module_does_not_import_wandb_until_records_are_decoded() -> None:
    code = ("import sys, babysit.targets.wandb.files as m; "
            "print('wandb' in sys.modules or 'google.protobuf' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_copy_tree_keeps_working(runs: dict[str, tuple[Path, int]], tmp_path: Path) -> None:
    """A run directory copied elsewhere (as a user might before reporting) reads the same."""
    root, _ = runs["finish"]
    copy = tmp_path / "copy"
    shutil.copytree(WandbRunDir(root).path.parent, copy)
    assert WandbRunDir(copy).poll().history == WandbRunDir(root).poll().history


def test_missing_wandb_package_loses_nothing(
        runs: dict[str, tuple[Path, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> object:
        raise ModuleNotFoundError("reading a W&B run file needs the wandb package")

    reader = WandbRunDir(runs["finish"][0])
    with monkeypatch.context() as patch:
        patch.setattr(wandb_files, "_record_class", missing)
        with pytest.raises(ModuleNotFoundError, match="wandb package"):
            reader.poll()
    assert _steps(reader.poll()) == list(range(STEPS))

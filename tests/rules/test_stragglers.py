"""A rank whose steps take longer than the other ranks' is a straggler named with its
rank (and host, where the record says where it came from); ranks that keep pace within
their noise are not (issue 24). Lines are shaped as torchtitan, a custom loop and a
timestamped logger print them, per rank."""

from __future__ import annotations

import random
from dataclasses import replace

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.model import Anomaly, AnomalyType, Record
from babysit.parsing.parser import LogParser


def stragglers(records: list[Record]) -> list[Anomaly]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(records)
    return [a for a in run.ledger.anomalies if a.type is AnomalyType.STRAGGLER]


def titan_line(rank: int, step: int, tps: float) -> str:
    return (f"[rank{rank}]:[titan] 2025-01-01 12:00:{step % 60:02d},000 - root - INFO - "
            f"step: {step:2d}  loss:  {9 - 0.01 * step:.4f}  memory: 30.52GiB(38.61%)  "
            f"tps: {tps:,.0f}  mfu: 35.12%")


def interleaved(slow_rank: int | None, slower: float, seed: int = 0) -> list[Record]:
    rng = random.Random(seed)
    lines = [titan_line(rank, step, 6543 * (1 - slower if rank == slow_rank else 1)
                        * rng.uniform(0.97, 1.03))
             for step in range(1, 31) for rank in range(4)]
    return LogParser().feed_lines(lines)


def test_a_rank_30_percent_slower_in_interleaved_torchtitan_lines_is_named():
    [found] = stragglers(interleaved(slow_rank=2, slower=0.3))
    assert "rank 2" in found.description and "slower per step" in found.description
    assert "tps" in found.description or "tokens/s" in found.description


def test_ranks_keeping_pace_within_their_noise_raise_no_straggler():
    for seed in range(5):
        assert stragglers(interleaved(slow_rank=None, slower=0.0, seed=seed)) == []


def test_a_rank_5_percent_slower_is_within_what_ranks_differ_by():
    assert stragglers(interleaved(slow_rank=1, slower=0.05)) == []


def rank_file(rank: int, seconds: float, host: str = "") -> list[Record]:
    lines = [f"step={s} loss={3 - 0.001 * s:.4f} step_time={seconds * (1 + 0.02 * (s % 3)):.3f}"
             for s in range(1, 41)]
    return [replace(r, rank=rank, source=host) for r in LogParser().feed_lines(lines)]


def test_a_rank_file_whose_printed_step_time_is_30_percent_longer_is_named_with_its_host():
    records = [r for rank in range(4) for r in
               rank_file(rank, 0.65 if rank == 3 else 0.5, host=f"pod trainer-worker-{rank}")]
    [found] = stragglers(records)
    assert "rank 3 (pod trainer-worker-3)" in found.description
    assert "30 % slower" in found.description


def test_a_rank_slower_by_its_own_timestamps_is_a_straggler():
    def timed(rank: int, seconds: float) -> list[Record]:
        lines = [f"2025-01-01 12:{int(s * seconds) // 60:02d}:{int(s * seconds) % 60:02d},000 "
                 f"- INFO - step {s}/1000 | loss {3 - 0.001 * s:.4f}" for s in range(1, 41)]
        return [replace(r, rank=rank) for r in LogParser().feed_lines(lines)]

    records = [r for rank in range(4) for r in timed(rank, 13.0 if rank == 1 else 10.0)]
    found = stragglers(records)
    assert [a.key for a in found] == ["rank1 pace"]
    assert "rank 1" in found[0].description


def test_a_straggler_that_catches_up_is_resolved():
    slow = interleaved(slow_rank=2, slower=0.3)
    again = LogParser().feed_lines([titan_line(rank, step, 6543)
                                    for step in range(31, 45) for rank in range(4)])
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(slow)  # one poll, then the next
    run.absorb(again)
    [found] = run.ledger.anomalies
    assert found.type is AnomalyType.STRAGGLER and found.resolved

"""What each rank of a 4-rank run prints, for the tests that every rank counts (issue 24):
a custom loop's `step=… loss=… step_time=…` line, its step time jittering a little as a
real one does."""

from __future__ import annotations

RANKS = 4
STEPS = 40


def rank_lines(rank: int, *, nan_at: int | None = None, seconds: float = 0.5,
               steps: int = STEPS) -> list[str]:
    """One rank's lines: loss NaN from step `nan_at` on, each step taking ~`seconds`."""
    def loss(step: int) -> str:
        return "nan" if nan_at is not None and step >= nan_at else f"{3 - 0.01 * step:.4f}"

    return [f"step={s} loss={loss(s)} step_time={seconds * (1 + 0.02 * (s % 3)):.3f}"
            for s in range(1, steps + 1)]


def four_ranks(*, nan_on: int | None = None, slow: int | None = None) -> list[list[str]]:
    """The lines of ranks 0-3: rank `nan_on` goes NaN at step 31, rank `slow` takes 30 %
    longer per step."""
    return [rank_lines(rank, nan_at=31 if rank == nan_on else None,
                       seconds=0.65 if rank == slow else 0.5) for rank in range(RANKS)]

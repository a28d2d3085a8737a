"""Slurm's `srun -l` labels (`3: …`, ` 0: …`) are read as ranks, once the log shows them
to be labels; a line that only starts with a number and a colon stays as it is."""

from __future__ import annotations

from babysit.parsing.parser import LogParser
from babysit.parsing.task_labels import TaskLabels


def test_interleaved_labels_are_ranks_once_they_go_back_down():
    lines = [f"{rank}: step {s}/100 | loss={2 - s * 0.01:.3f}" for s in range(1, 6)
             for rank in range(4)]
    records = LogParser().feed_lines(lines)
    assert [(r.rank, r.step) for r in records[4:8]] == [(0, 2), (1, 2), (2, 2), (3, 2)]
    assert records[5].metrics == {"loss": 1.98}


def test_labels_right_aligned_to_the_widest_task_number():
    labels = TaskLabels()
    found = [labels.split(f"{rank:2d}: step {s}") for s in range(2) for rank in range(12)]
    assert found[12] == (0, "step 1") and found[23] == (11, "step 1")


def test_a_single_task_labelled_0_is_rank_0():
    records = LogParser().feed_lines(["srun: job 42 step 0"] +
                                     [f"0: step {s}/100 | loss=2.0" for s in range(1, 6)])
    assert [r.rank for r in records if r.step is not None][-2:] == [0, 0]


def test_a_loop_printing_its_step_with_a_colon_is_not_a_task():
    records = LogParser().feed_lines([f"{s}: loss={2 - s * 0.01:.3f}" for s in range(30)])
    assert all(r.rank is None for r in records)
    assert records[3].metrics == {"loss": 1.97}


def test_a_wrapped_terminal_line_starting_0_is_not_a_task():
    """A tmux capture wraps `aux_bce_loss_0: 0.31` after the `_`: few lines start `0: `."""
    lines = []
    for i in range(10):
        lines += [f"iter: {i}  total_loss: 1.2  aux_bce_loss_", "0: 0.3117  aux_dice_loss_0: "
                  "0.1771", "eta: 0:10:00  lr: 0.0001"]
    labels = TaskLabels()
    assert all(labels.split(line)[0] is None for line in lines)

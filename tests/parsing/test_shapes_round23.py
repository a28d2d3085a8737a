"""Shapes read and judged since the twenty-third session, each on lines written in the
real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def test_a_traceback_frame_s_code_naming_an_error_is_not_the_error(tmp_path: Path):
    # Python prints each frame's source under it; code that raises (or catches) an
    # out-of-memory error names it without reporting one. The finding quotes the
    # closing line, which says how much memory was asked for.
    lines = [f"step {s}/50 loss {2.0 / s:.4f}" for s in range(1, 25)]
    lines += ['Traceback (most recent call last):',
              '  File "train.py", line 219, in <module>',
              '    loss = loss_fn(forward(x), y)',
              '  File "train.py", line 206, in forward',
              '    raise torch.OutOfMemoryError(',
              'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. '
              'GPU 0 has a total capacity of 79.25 GiB of which 1.31 GiB is free.']
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    oom = [f for f in artifact["findings"] if f["title"].startswith("oom")]
    assert len(oom) == 1 and "Tried to allocate 2.50 GiB" in oom[0]["description"]
    assert "raise torch" not in oom[0]["description"]

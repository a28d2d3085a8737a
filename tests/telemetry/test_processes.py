"""Which command lines are babysit itself (left out when looking for the run)."""

from __future__ import annotations

import pytest

from babysit.telemetry.processes import is_babysit_command


@pytest.mark.parametrize("argv", [
    ["babysit", "train.log"],
    ["/home/me/.local/bin/babysit", "watch", "train.log"],
    ["/home/me/babysit/.venv/bin/python3", "/home/me/babysit/.venv/bin/babysit", "x.log"],
    ["python", "-m", "babysit", "train.log"],
    ["/usr/bin/python3.12", "-mbabysit", "--proc", "train.py"],
])
def test_babysit_is_recognised_by_its_program(argv: list[str]) -> None:
    assert is_babysit_command(argv)


@pytest.mark.parametrize("argv", [
    # The folder names "babysit" (a clone, a venv, a conda env), the program does not.
    ["/home/me/babysit/.venv/bin/python3", "train.py", "--lr", "3e-4"],
    ["/opt/conda/envs/babysit/bin/python", "-m", "torch.distributed.run", "train.py"],
    ["/home/me/babysit/.venv/bin/torchrun", "--nproc-per-node", "8", "train.py"],
    # The demo's trainer is a run to watch, not babysit.
    ["python3", "-m", "babysit.demo.trainer", "--log", "/tmp/demo/train.log"],
    ["python3", "train.py", "--out", "babysit"],
    [],
])
def test_a_run_under_a_path_that_says_babysit_is_not_babysit(argv: list[str]) -> None:
    assert not is_babysit_command(argv)

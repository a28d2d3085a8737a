"""Part 7 of 8 of the held-out logs' first verdicts (see `tests/held_out.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.held_out import held_right, keeps_its_verdict

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize(("folder", "name"), held_right(6))
def test_a_held_out_log_keeps_the_verdict_it_was_first_given(folder: Path, name: str):
    keeps_its_verdict(folder, name)

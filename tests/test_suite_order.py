"""The suite's own scheduling list names files that exist (a renamed file would silently
fall back to the end of the run)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONG_FILES


def test_every_long_file_named_for_the_scheduler_exists():
    here = Path(__file__).parent
    assert [name for name in LONG_FILES if not (here / name).is_file()] == []

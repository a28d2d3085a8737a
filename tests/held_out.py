"""The held-out logs babysit was right on when their sets were first scored, shared out
over several test files: the suite runs with `--dist loadfile` (one worker per file), and
one file holding all of them (over 1,300 verdicts) was the suite's last worker, alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

PUBLIC = FIXTURES / "logs" / "public"
PARTS = 8


def held_right(part: int) -> list[Any]:
    """This part's (set, log) pairs: one test each."""
    sets = [PUBLIC / "sealed", *sorted(p for p in PUBLIC.glob("sealed-*") if p.is_dir())]
    pairs = [(folder, name) for folder in sets
             for name in json.loads((folder / "score.json").read_text())["right_logs"]]
    return [pytest.param(folder, name, id=f"{folder.name}/{name}")
            for index, (folder, name) in enumerate(pairs) if index % PARTS == part]


# Held-out logs babysit was right on for a wrong reason, found and corrected later: each
# with the verdict it now gives and why (reviewed one by one; the blind score stands).
CORRECTIONS = json.loads((PUBLIC / "held_corrections.json").read_text())


def keeps_its_verdict(folder: Path, name: str) -> None:
    """A change may not make babysit wrong on a held-out log it was right on when the set
    was first scored (score.json): the held-out logs are never developed against. A log
    in `CORRECTIONS` keeps the corrected verdict instead."""
    from scripts.score_public_logs import judge, verdict_on

    expected = json.loads((folder / "expected.json").read_text())[name]
    corrected = CORRECTIONS.get(f"{folder.name}/{name}")
    if corrected is not None:
        expected = {**expected, "decision": corrected["decision"],
                    "terminal_state": corrected["terminal_state"]}
    wrong = judge(verdict_on(folder / name), expected)
    assert not [w for w in wrong if w.startswith(("decision", "state"))], wrong

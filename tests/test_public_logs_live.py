"""The public logs (tests/test_public_logs.py) followed live: each written in uneven
pieces, one per poll, must get the verdict it gets read at once. A file of its own so
that it runs on another worker than the verdicts read at once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from babysit.config import PollSettings, Settings
from babysit.core.reports import NullObserver
from babysit.core.session import run_session
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import FakeClock, artifact_in
from tests.public_verdicts import EXPECTED, PUBLIC, cases, check


@pytest.mark.parametrize("name", cases(EXPECTED, "known_failure_live"))
def test_live_replay_of_a_public_log_in_uneven_pieces(tmp_path: Path, name: str):
    """The same log written in 7 uneven pieces, cut mid-line and mid-character, one per
    poll, and then the run goes quiet: the same decision as reading it at once."""
    source = (PUBLIC / name).read_bytes()
    cuts = sorted({len(source) * k // 7 + 3 * k for k in range(1, 7)})
    pieces = [source[a:b] for a, b in zip([0, *cuts], [*cuts, len(source)], strict=True)]
    log = tmp_path / name
    log.write_bytes(pieces[0])
    rest = iter(pieces[1:])

    def grow(_: FakeClock) -> None:
        with log.open("ab") as handle:
            handle.write(next(rest, b""))

    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), max_polls=len(pieces) + 3),
                         out_dir=tmp_path), NullObserver(), clock=FakeClock(on_sleep=grow))
    check(artifact_in(tmp_path), EXPECTED[name], live=True)

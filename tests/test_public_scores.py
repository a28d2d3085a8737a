"""scripts/public_duplicates.py and scripts/blind_scores.py on a public tree of their own:
a later set's copy of an earlier log is found whatever its line endings, and the blind
figure leaves it out."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.blind_scores import blind_scores
from scripts.public_duplicates import copies

_RUN = "".join(f"epoch {n} | loss {1 / (n + 1):.4f} | acc {n / 40:.3f}\n" for n in range(30))
_OTHER = "".join(f"step {n * 10}: train_loss={2 - n / 50:.3f}\n" for n in range(30))


def _set(public: Path, name: str, logs: dict[str, str], right: list[str],
         copied: dict[str, str] | None = None) -> None:
    folder = public / name
    folder.mkdir(parents=True)
    for log, text in logs.items():
        (folder / log).write_bytes(text.encode())
    expected = {log: {"decision": "GO", "terminal_state": "SUCCEEDED"} for log in logs}
    for log, earlier in (copied or {}).items():
        expected[log]["duplicate_of"] = earlier
    (folder / "expected.json").write_text(json.dumps(expected))
    (folder / "score.json").write_text(json.dumps(
        {"commit": "abc1234", "logs": len(logs), "right": len(right), "right_logs": right}))


def test_a_crlf_copy_in_a_later_set_is_found_and_left_out_of_its_blind_score(tmp_path: Path):
    _set(tmp_path, "sealed", {"run.log": _RUN}, ["run.log"])
    _set(tmp_path, "sealed-2", {"again.log": _RUN.replace("\n", "\r\n") + "Training done\n",
                                "other.log": _OTHER}, ["again.log"],
         copied={"again.log": "sealed/run.log"})

    found = [(later.relative_to(tmp_path).as_posix(), earlier.relative_to(tmp_path).as_posix())
             for later, earlier in copies(tmp_path)]

    assert found == [("sealed-2/again.log", "sealed/run.log")]
    assert blind_scores(tmp_path) == [("sealed", "abc1234", 1, 1, 0),
                                      ("sealed-2", "abc1234", 0, 1, 1)]


def test_two_runs_of_one_program_are_not_copies(tmp_path: Path):
    _set(tmp_path, "sealed", {"run.log": _RUN}, [])
    _set(tmp_path, "sealed-2", {"run2.log": _RUN.replace("loss 0.", "loss 1.")}, [])

    assert list(copies(tmp_path)) == []

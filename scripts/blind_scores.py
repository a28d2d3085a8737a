"""Each held-out set's first, blind score, as its `score.json` keeps it.

    python scripts/blind_scores.py

A set is scored once, before any work on it; its `score.json` records the commit, the
logs and the ones babysit was right on. A log an earlier set already held
(`duplicate_of`, see scripts/public_duplicates.py) was no unseen log: it is counted apart,
so that the figure is the share of logs nobody here had seen.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.public_duplicates import PUBLIC, _split_order  # noqa: E402


def blind_scores(public: Path = PUBLIC) -> list[tuple[str, str, int, int, int]]:
    """(set, commit, right, logs, copies left out) for each scored held-out set."""
    rows = []
    for folder in sorted(public.glob("sealed*/"), key=lambda f: _split_order(f.name)):
        score_file = folder / "score.json"
        if not score_file.is_file():
            continue
        score = json.loads(score_file.read_text())
        expected = json.loads((folder / "expected.json").read_text())
        copies = {name for name, e in expected.items() if e.get("duplicate_of")}
        right = len(set(score["right_logs"]) - copies)
        rows.append((folder.name, score["commit"], right, score["logs"] - len(copies),
                     len(copies)))
    return rows


def main() -> int:
    total_right = total = 0
    for split, commit, right, logs, copies in blind_scores():
        left_out = f" ({copies} copies of earlier logs left out)" if copies else ""
        print(f"{split:10s} at {commit}: {right}/{logs} = {100 * right / logs:.0f} %{left_out}")
        total_right += right
        total += logs
    print(f"all sets: {total_right}/{total} = {100 * total_right / max(total, 1):.0f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

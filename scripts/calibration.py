"""How often each anomaly type fires on healthy public logs, and how many broken ones of
its kind it catches (issue 24, item 7).

    python scripts/calibration.py            # print the table (development split)
    python scripts/calibration.py --write    # also refresh the figures the test holds
    python scripts/calibration.py --split sealed-4   # the same on a held-out set

Healthy logs are those whose expectation says `healthy` (or, for the older entries, a GO)
and insists on no anomaly, on a run that neither failed nor finished with a GO held back
(see `healthy`); a false alarm is a high or blocker anomaly of that type still open at the
end of a healthy log. A broken log "of its kind" is one whose expectation
insists on the type (`must_flag`, or `anomalies` for the older entries). The figures are
kept in tests/fixtures/logs/public/calibration.json; tests/test_public_logs.py recomputes
them and fails when a false-alarm count rises or a catch count falls.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.score_public_logs import PUBLIC, healthy, insisted, verdict_on  # noqa: E402

FIGURES = PUBLIC / "calibration.json"


def compute(folder: Path = PUBLIC) -> dict[str, dict[str, int]]:
    """{type: {false_alarms, healthy_logs, caught, broken_logs}} over the logs of one
    folder (the development split unless told)."""
    expected: dict[str, dict[str, Any]] = json.loads((folder / "expected.json").read_text())
    alarms: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    healthy_logs = 0
    for name, expect in sorted(expected.items()):
        if expect.get("duplicate_of"):
            continue  # an earlier set's log again: counted there
        data = verdict_on(folder / name)
        seen = {a["type"] for a in data["anomalies_detected"]}
        if healthy(expect):
            healthy_logs += 1
            for kind in {a["type"] for a in data["anomalies_detected"]
                         if a["severity"] in ("high", "blocker")
                         and "resolved:" not in a["description"]}:
                alarms[kind] += 1
        for kind in insisted(expect):
            broken[kind] += 1
            caught[kind] += kind in seen
    kinds = sorted(set(alarms) | set(broken))
    return {kind: {"false_alarms": alarms[kind], "healthy_logs": healthy_logs,
                   "caught": caught[kind], "broken_logs": broken[kind]} for kind in kinds}


def table(figures: dict[str, dict[str, int]]) -> str:
    rows = ["| type | high/blocker on healthy logs | broken logs of its kind caught |",
            "|---|---|---|"]
    for kind, f in figures.items():
        catches = f"{f['caught']} of {f['broken_logs']}" if f["broken_logs"] else "—"
        rows.append(f"| `{kind}` | {f['false_alarms']} of {f['healthy_logs']} | {catches} |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="refresh calibration.json")
    parser.add_argument("--split", help="a held-out set's folder (sealed, sealed-2, ...) "
                        "instead of the development split; never written")
    args = parser.parse_args()
    if args.split and args.write:
        parser.error("--write keeps the development split's figures only")
    figures = compute(PUBLIC / args.split if args.split else PUBLIC)
    print(table(figures))
    if args.write:
        FIGURES.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

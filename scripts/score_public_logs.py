"""Score babysit's `--once` verdicts on the public logs against their written expectations.

    python scripts/score_public_logs.py            # the development split
    python scripts/score_public_logs.py --sealed   # the sealed split (run it once, at the end)
    python scripts/score_public_logs.py --split sealed-2   # a later held-out set, likewise
    python scripts/score_public_logs.py --json     # one line per log, for tools

A verdict is right when its decision and terminal state are the expected ones. Also
counted: anomaly types the expectation insists on (`must_flag`, or `anomalies` for the
older entries) that babysit missed, and high or blocker anomalies on a log the
expectation calls healthy (false alarms). Failures are grouped by class. A log whose
expectation names it `duplicate_of` an earlier set's log is left out (see
scripts/public_duplicates.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from babysit.config import PollSettings, Settings  # noqa: E402
from babysit.core.reports import NullObserver  # noqa: E402
from babysit.core.session import run_session  # noqa: E402
from babysit.targets.common.log_file import LocalLogTarget  # noqa: E402

PUBLIC = ROOT / "tests" / "fixtures" / "logs" / "public"


def verdict_on(log: Path) -> dict[str, Any]:
    """babysit's `--once` verdict on a copy of the log written just now."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / log.name
        shutil.copyfile(log, copy)
        now = time.time()
        os.utime(copy, (now, now))
        run_session(lambda: LocalLogTarget(copy), str(copy), "local-log",
                    Settings(poll=replace(PollSettings(), once=True), out_dir=Path(tmp)),
                    NullObserver())
        data: dict[str, Any] = json.loads((Path(tmp) / "babysit-training.json").read_text())
        return data


# Ends no healthy run has: an error or a time limit stopped it.
_FAILED_ENDS = {"FAILED", "TIMEOUT"}


def healthy(expect: dict[str, Any]) -> bool:
    """A run nothing is wrong with, as its expectation tells: it says `healthy` and insists
    on no anomaly, did not end on an error or a time limit, and is not a finished run whose
    reader held back a GO (by the pinned rule a CONDITIONAL on a SUCCEEDED run means a
    worrying problem). Some collectors wrote `healthy: true` for "the training itself was
    fine" on runs that then crashed (`must_flag: ["crash"]`, FAILED): an alarm the
    expectation itself demands is no false alarm."""
    if insisted(expect) or expect.get("terminal_state") in _FAILED_ENDS:
        return False
    if expect.get("terminal_state") == "SUCCEEDED" and expect["decision"] != "GO":
        return False
    if "healthy" in expect:
        return bool(expect["healthy"])
    return expect["decision"] == "GO"


# The collectors' briefs named some kinds in their own words (`nan`, `stall`,
# `nccl-error`); babysit's types are `nan-inf`, `stalled`, `nccl`.
_KIND_ALIASES = {"nan": "nan-inf", "stall": "stalled", "nccl-error": "nccl",
                 "spike": "loss-spike", "gradient-explosion": "grad-explosion"}


def insisted(expect: dict[str, Any]) -> list[str]:
    return [_KIND_ALIASES.get(kind, kind)
            for kind in expect.get("must_flag", expect.get("anomalies", []))]


def judge(data: dict[str, Any], expect: dict[str, Any]) -> list[str]:
    """The ways a verdict differs from its expectation (empty: right)."""
    wrong: list[str] = []
    if data["decision"] != expect["decision"]:
        wrong.append(f"decision {data['decision']} (expected {expect['decision']})")
    if data["terminal_state"] != expect["terminal_state"]:
        wrong.append(f"state {data['terminal_state']} (expected {expect['terminal_state']})")
    types = {a["type"] for a in data["anomalies_detected"]}
    missed = [t for t in insisted(expect) if t not in types]
    if missed:
        wrong.append("missed " + ", ".join(missed))
    if healthy(expect):
        alarms = sorted({a["type"] for a in data["anomalies_detected"]
                         if a["severity"] in ("high", "blocker") and a["type"] != "stalled"
                         and "resolved:" not in a["description"]})
        if alarms:
            wrong.append("false alarm " + ", ".join(alarms))
    return wrong


def failure_class(expect: dict[str, Any], data: dict[str, Any], wrong: list[str]) -> str:
    head = wrong[0].split(" (")[0]
    if data["decision"] == "GO" and expect["decision"] != "GO":
        return "false GO"
    if head.startswith("missed"):
        return "missed anomaly"
    if head.startswith("false alarm"):
        return "false alarm on a healthy run"
    if head.startswith("state"):
        return f"terminal state {data['terminal_state']} for {expect['terminal_state']}"
    return f"decision {data['decision']} for {expect['decision']}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sealed", action="store_true", help="score the sealed split")
    parser.add_argument("--split", default="",
                        help="score the held-out set in this folder of the public logs "
                             "(sealed, sealed-2, ...)")
    parser.add_argument("--json", action="store_true", help="one JSON line per log")
    parser.add_argument("--only", default="", help="only logs whose name contains this")
    args = parser.parse_args()
    split = args.split or ("sealed" if args.sealed else "")
    if split and not (PUBLIC / split / "expected.json").is_file():
        parser.error(f"no held-out set named {split!r} in {PUBLIC}")
    folder = PUBLIC / split if split else PUBLIC
    expected: dict[str, dict[str, Any]] = json.loads((folder / "expected.json").read_text())
    right = both = 0
    classes: Counter[str] = Counter()
    failures: list[str] = []
    scored = 0
    copies = []
    for name, expect in sorted(expected.items()):
        if args.only and args.only not in name:
            continue
        if expect.get("duplicate_of"):
            # An earlier set's log again (scripts/public_duplicates.py): scored there.
            copies.append(name)
            continue
        scored += 1
        data = verdict_on(folder / name)
        wrong = judge(data, expect)
        verdict_right = not any(w.startswith(("decision", "state")) for w in wrong)
        right += verdict_right
        both += not wrong
        if args.json:
            print(json.dumps({"log": name, "right": verdict_right, "wrong": wrong,
                              "summary": data["summary"],
                              "expected": expect["decision"],
                              "anomalies": sorted({
                                  f"{a['type']}:{a['severity']}"
                                  + (":resolved:" + a["description"].split("resolved:")[-1][:60]
                                     if "resolved:" in a["description"] else "")
                                  for a in data["anomalies_detected"]})}))
        elif wrong:
            classes[failure_class(expect, data, wrong)] += 1
            failures.append(f"  {name}: {'; '.join(wrong)}\n      {data['summary'][:200]}")
    if not args.json:
        print("\n".join(failures))
        print(f"\n{split or 'development'} split: {right}/{scored} verdicts right "
              f"(decision and terminal state, {100 * right / max(scored, 1):.0f}%); "
              f"{both}/{scored} with no missed or false anomaly either"
              + (f"; {len(copies)} copies of earlier sets' logs left out" if copies else ""))
        for name, count in classes.most_common():
            print(f"  {count:3d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

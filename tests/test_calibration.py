"""The rules' calibration on the public logs (issue 24): how often each anomaly type
raises a high or blocker alarm on a healthy run, and how many broken runs of its kind it
catches. The figures are published in references/common-issues.md and kept in
tests/fixtures/logs/public/calibration.json; this recomputes them and fails when one gets
worse. A change that makes them better refreshes the file (scripts/calibration.py
--write) and the table."""

from __future__ import annotations

import json

from scripts.calibration import FIGURES, compute


def test_no_anomaly_type_got_noisier_or_blinder_on_the_public_logs():
    kept = json.loads(FIGURES.read_text())
    now = compute()
    worse = []
    for kind, before in kept.items():
        after = now.get(kind, {"false_alarms": 0, "caught": 0})
        if after["false_alarms"] > before["false_alarms"]:
            worse.append(f"{kind}: high/blocker on {after['false_alarms']} healthy logs "
                         f"(was {before['false_alarms']})")
        if after["caught"] < before["caught"]:
            worse.append(f"{kind}: caught {after['caught']} broken logs (was {before['caught']})")
    for kind, after in now.items():
        if kind not in kept and after["false_alarms"]:
            worse.append(f"{kind}: new type, high/blocker on {after['false_alarms']} healthy logs")
    assert not worse, worse

"""The user's own alerts in babysit.toml: checked like the built-in rules, reported the
same way, and validated with one clear error (exit 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from babysit.config import ConfigError, RuleSettings, load_settings
from babysit.core.run import Run
from babysit.model import AnomalyType, Severity
from babysit.parsing.parser import LogParser
from babysit.user_alerts import UserAlert
from tests.test_cli import babysit

VAL_ACC_FLOOR = """
[[alerts]]
metric = "val_acc"
below = 0.5
after_step = 1000
severity = "high"
"""


def log_with(val_acc: dict[int, float]) -> str:
    lines = []
    for step in range(100, 2001, 100):
        lines.append(f"step={step} loss={3.0 - step / 1000:.3f}")
        if step in val_acc:
            lines.append(f"step={step} val_acc={val_acc[step]}")
    return "\n".join([*lines, "Training complete"]) + "\n"


def run_babysit(tmp_path: Path, config: str, log: str) -> tuple[int, dict]:
    (tmp_path / "babysit.toml").write_text(config)
    (tmp_path / "train.log").write_text(log)
    done = babysit("train.log", "--once", cwd=tmp_path)
    return done.returncode, json.loads((tmp_path / "babysit-training.json").read_text())


def test_val_acc_below_05_after_step_1000_fires_on_a_run_that_breaks_it(tmp_path: Path):
    code, data = run_babysit(tmp_path, VAL_ACC_FLOOR,
                             log_with({500: 0.3, 1000: 0.55, 1500: 0.45, 2000: 0.48}))
    [found] = [a for a in data["anomalies_detected"] if a["type"] == "user-alert"]
    assert found["severity"] == "high" and found["step"] == 1500
    assert "val_acc = 0.45 at step 1500" in found["description"]
    assert "val_acc below 0.5 after step 1000" in found["description"]
    assert data["decision"] == "CONDITIONAL" and code == 3  # an unresolved high


def test_val_acc_below_05_after_step_1000_is_quiet_on_a_run_that_keeps_it(tmp_path: Path):
    # Below 0.5 only before step 1000: outside the alert's range.
    code, data = run_babysit(tmp_path, VAL_ACC_FLOOR,
                             log_with({500: 0.3, 1000: 0.55, 1500: 0.61, 2000: 0.7}))
    assert data["anomalies_detected"] == [] and data["decision"] == "GO" and code == 0


def alerts_in(tmp_path: Path, config: str) -> tuple[UserAlert, ...]:
    (tmp_path / "babysit.toml").write_text(config)
    return load_settings(tmp_path, env={}).alerts


def track(tmp_path: Path, lines: list[str], config: str) -> Run:
    run = Run(RuleSettings(), None, 0.0, alerts=alerts_in(tmp_path, config))
    run.absorb(LogParser().feed_lines(lines))
    return run


def test_not_improving_for_n_evaluations_fires_then_resolves_on_a_new_best(tmp_path: Path):
    config = '[[alerts]]\nmetric = "eval_loss"\nnot_improving_for = 3\n'
    values = [2.0, 1.8, 1.9, 1.85, 1.95, 1.7]
    run = track(tmp_path, [f"step={10 * i} eval_loss={v}" for i, v in enumerate(values, 1)],
                config)
    [found] = run.ledger.anomalies
    assert (found.type, found.step, found.severity) == (AnomalyType.USER_ALERT, 50,
                                                         Severity.MEDIUM)
    assert found.resolved  # 1.7 at step 60 is a new best


def test_rises_by_percent_over_its_recent_low(tmp_path: Path):
    config = ('[[alerts]]\nname = "grad blow-up"\nmetric = "grad_norm"\n'
              'rises_by_percent = 50\nwindow = 5\nseverity = "blocker"\n')
    norms = [1.0, 0.9, 1.1, 1.0, 1.6]
    run = track(tmp_path, [f"step={i} loss=2.0 grad_norm={g}" for i, g in enumerate(norms, 1)],
                config)
    found = [a for a in run.ledger.anomalies if a.type is AnomalyType.USER_ALERT]
    assert [(a.key, a.step, a.severity) for a in found] == [("grad blow-up", 5,
                                                             Severity.BLOCKER)]


@pytest.mark.parametrize("config, says", [
    ('[[alerts]]\nmetric = "val_acc"\nbelow = 0.5\nabove = 0.9\n', "exactly one condition"),
    ('[[alerts]]\nmetric = "val_acc"\n', "exactly one condition"),
    ('[[alerts]]\nmetric = "val_acc"\nbelow = "half"\n', "below: expected a number"),
    ('[[alerts]]\nmetric = "val_acc"\nbelow = 0.5\nseverity = "urgent"\n', "severity: one of"),
    ('[[alerts]]\nmetric = "val_acc"\nbelow = 0.5\nafter_step = 900\nbefore_step = 100\n',
     "before_step (100) must be after after_step (900)"),
    ('[[alerts]]\nmetric = "val_acc"\nbellow = 0.5\n', "unknown key(s) bellow"),
    ('[[alerts]]\nbelow = 0.5\n', "'metric' must name the metric"),
    ('[[alerts]]\nmetric = "eval_loss"\nnot_improving_for = 2.5\n', "a whole number"),
    ('alerts = "val_acc below 0.5"\n', "must be [[alerts]] tables"),
])
def test_a_bad_alert_is_one_clear_usage_error(tmp_path: Path, config: str, says: str):
    with pytest.raises(ConfigError) as raised:
        alerts_in(tmp_path, config)
    assert says in str(raised.value)
    (tmp_path / "train.log").write_text(log_with({}))
    done = babysit("train.log", "--once", cwd=tmp_path)
    assert done.returncode == 2
    # The usage-error box may wrap the line: compare the words.
    assert " ".join(says.split()) in " ".join(re.sub(r"[│╭╮╰╯─]", " ", done.stderr).split())
    assert not (tmp_path / "babysit-training.json").exists()

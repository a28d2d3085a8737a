"""A raiser may say how serious one anomaly is if still open when the run ends, on its
own evidence (flat_scores: a held-out score at chance on every evaluation of the run is a
blocker at the end, where the type's catalogue entry says high)."""

from __future__ import annotations

from babysit.core.ledger import AnomalyLedger
from babysit.model import AnomalyType, Severity

_NL = AnomalyType.NOT_LEARNING


def test_an_anomaly_raised_with_its_own_end_severity_gets_it_at_the_end():
    ledger = AnomalyLedger()
    ledger.raise_(_NL, 5, "not learning: s_auc at 0.5", key="auc s_auc",
                  severity_at_end=Severity.BLOCKER)
    ledger.raise_(_NL, 5, "not learning: the loss is flat", key="")
    ledger.escalate_at_end(_NL, Severity.HIGH, "still open when the run ended")
    by_key = {a.key: a.severity for a in ledger.anomalies}
    assert by_key == {"auc s_auc": Severity.BLOCKER, "": Severity.HIGH}
    assert ledger.has_open_blocker()


def test_no_end_severity_leaves_it_as_raised_and_never_lowers():
    ledger = AnomalyLedger()
    ledger.raise_(_NL, 1, "identical losses", severity=Severity.HIGH)
    ledger.escalate_at_end(_NL, None, "still open when the run ended")
    ledger.escalate_at_end(_NL, Severity.MEDIUM, "still open when the run ended")
    assert [a.severity for a in ledger.anomalies] == [Severity.HIGH]


def test_a_resolved_anomaly_is_not_escalated_and_a_new_raise_forgets_the_old_override():
    ledger = AnomalyLedger()
    ledger.raise_(_NL, 1, "auc at chance", key="k", severity_at_end=Severity.BLOCKER)
    ledger.resolve(_NL, "moved", key="k")
    ledger.raise_(_NL, 9, "auc at chance again", key="k")
    ledger.escalate_at_end(_NL, Severity.HIGH, "still open when the run ended")
    assert [a.severity for a in ledger.anomalies] == [Severity.MEDIUM, Severity.HIGH]


def test_a_new_run_makes_room_at_the_cap_by_dropping_the_oldest_resolved():
    """The cap keeps the artifact bounded, never at the cost of what a later run of the
    same log gets wrong (a sweep's last configuration)."""
    ledger = AnomalyLedger(max_per_type=12)
    for run in range(12):
        ledger.raise_(AnomalyType.EVAL_DEGRADATION, run, f"run {run} got worse", key="val")
        ledger.resolve(AnomalyType.EVAL_DEGRADATION, "a new run began", key="val")
    assert ledger.raise_(AnomalyType.EVAL_DEGRADATION, 12, "at the cap", key="val") is None
    ledger.new_run()
    latest = ledger.raise_(AnomalyType.EVAL_DEGRADATION, 13, "the last run got worse", key="val")
    assert latest is not None and not latest.resolved
    kept = [a.description.split(" —")[0] for a in ledger.anomalies]
    assert kept[-1] == "the last run got worse" and "run 0 got worse" not in kept
    assert len(kept) <= 12
    assert ledger.resolve(AnomalyType.EVAL_DEGRADATION, "back near its best", key="val")
    assert ledger.anomalies[-1].resolved


def test_within_one_run_a_type_at_its_cap_records_no_more():
    ledger = AnomalyLedger(max_per_type=2)
    for key in ("a", "b", "c"):
        ledger.raise_(AnomalyType.LOSS_SPIKE, 1, f"spike {key}", key=key)
        ledger.resolve(AnomalyType.LOSS_SPIKE, "gone", key=key)
    assert [a.key for a in ledger.anomalies] == ["a", "b"]
    assert ledger.suppressed == 1

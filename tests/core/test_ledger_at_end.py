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

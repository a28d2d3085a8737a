"""An evaluation whose precision, recall and F1 are all exactly 0 found nothing: the model
predicts only the background class (conlleval's `accuracy:  69.18%; precision:   0.00%;
recall:   0.00%; FB1:   0.00` after a BERT NER run), whatever its accuracy shows."""

from __future__ import annotations

from babysit.model import AnomalyType
from babysit.rules.no_positives import found_nothing
from tests.rules.test_loss_rules import run_of


def _conlleval(accuracy: float, precision: float, recall: float, f1: float) -> list[str]:
    found = 0 if precision == 0 else 12
    return [f"processed 1500 tokens with 40 phrases; found: {found} phrases; correct: 0.",
            f"accuracy:  {accuracy:.2f}%; precision:  {precision:6.2f}%; "
            f"recall:  {recall:6.2f}%; FB1:  {f1:6.2f}"]


def _open_not_learning(lines: list[str]) -> list[str]:
    return [a.description for a in run_of(lines).ledger.anomalies
            if a.type is AnomalyType.NOT_LEARNING and not a.resolved]


def test_all_three_scores_at_zero_is_a_model_that_finds_nothing():
    found = _open_not_learning(_conlleval(71.5, 0.0, 0.0, 0.0))
    assert len(found) == 1 and "predicts no positive" in found[0]


def test_a_later_evaluation_that_finds_something_resolves_it():
    lines = _conlleval(71.5, 0.0, 0.0, 0.0) + _conlleval(88.0, 61.2, 55.0, 57.9)
    assert _open_not_learning(lines) == []


def test_one_score_at_zero_alone_is_not_this():
    assert found_nothing({"precision": 0.0, "recall": 0.4, "f1": 0.0}) is False
    assert found_nothing({"train_precision": 0.0, "train_recall": 0.0,
                          "train_f1": 0.0}) is None
    assert found_nothing({"eval_precision": 0.0, "eval_recall": 0.0, "eval_f1": 0.0})


def _segmenter(epoch: int, accuracy: float, f1: float, stage: str = "Validating") -> str:
    return (f"2020-11-10 13:2{epoch}:32,477 - INFO - {stage} Epoch: {epoch}, accuracy: "
            f"{accuracy}, Pk: 0.3286, Windiff: 0.3286, B: 0.0, S: 0.9453 ,F1: {f1} . ")


def test_an_f1_printed_alone_at_zero_found_nothing():
    # A text segmenter's validation: no precision or recall printed, F1 0 with an accuracy
    # that is the share of sentences ending no segment.
    assert found_nothing({"accuracy": 0.9477, "pk": 0.3286, "f1": 0.0}) is True
    assert found_nothing({"accuracy": 0.9518, "f1": 0.3597}) is False
    assert found_nothing({"f1_person": 0.0, "f1_org": 0.41}) is None  # a class's F1


def test_the_same_evaluation_finding_nothing_epoch_after_epoch_is_a_blocker(tmp_path):
    from tests.rules.test_loss_rules import verdict_of
    lines = [f"2020-11-10 13:2{e}:06,897 - DEBUG - Training Epoch: {e}, Loss: 0.21{e}."
             for e in range(1, 5)]
    lines = [x for e in range(1, 5) for x in (lines[e - 1], _segmenter(e, 0.9477, 0.0))]
    data = verdict_of(tmp_path, lines)
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and found[0]["severity"] == "blocker", found
    assert data["terminal_state"] == "RUNNING" and data["decision"] == "NO-GO"


def test_evaluations_that_find_nothing_but_change_stay_a_notice_while_running():
    lines = [_segmenter(e, 0.9477 + 0.001 * e, 0.0) for e in range(1, 5)]
    found = [a for a in run_of(lines).ledger.anomalies
             if a.type is AnomalyType.NOT_LEARNING and not a.resolved]
    assert [a.severity.value for a in found] == ["medium"]


def test_one_evaluation_printed_again_at_its_step_counts_once():
    from babysit.config import RuleSettings
    from babysit.rules.no_positives import NoPositiveRule
    from babysit.rules.signals import Observation
    rule = NoPositiveRule(RuleSettings())
    figures = {"eval_accuracy": 0.95, "eval_f1": 0.0}
    signals = [s for step in (100, 100, 100, 200) for s in
               rule.observe(Observation(step=step, metrics=figures))]
    assert [type(s).__name__ for s in signals] == ["Raise"]
    signals = rule.observe(Observation(step=300, metrics=figures))
    assert [type(s).__name__ for s in signals] == ["Reassess"]

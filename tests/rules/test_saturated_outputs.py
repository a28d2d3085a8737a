"""A classifier whose outputs saturated at hard 0s and 1s: Keras's and TF.js's clipped
cross-entropy then reads exactly 16.118 × (1 − accuracy) (−ln 1e-7 per wrong prediction).
After a lower loss that is a divergence, from the start a run that never learned; a
blocker either way."""

from __future__ import annotations

from pathlib import Path

from babysit.model import AnomalyType, Severity
from babysit.rules.saturated_outputs import saturated
from tests.rules.test_loss_rules import run_of, verdict_of


def _tfjs_epochs(pairs: list[tuple[float, float]]) -> list[str]:
    # TensorFlow.js's model.fitDataset progress, in its real shape.
    lines: list[str] = []
    for i, (acc, loss) in enumerate(pairs, 1):
        lines += [f"Epoch {i} / 30", "eta=0.0 ============> ",
                  f"2100ms 175000us/step - acc={acc:.2f} loss={loss:.2f} "]
    return lines


def _keras_epochs(pairs: list[tuple[float, float]]) -> list[str]:
    lines: list[str] = []
    for i, (acc, loss) in enumerate(pairs, 1):
        lines += [f"Epoch {i}/40",
                  f"200/200 [==============================] - 2s 9ms/step - loss: {loss:.4f}"
                  f" - acc: {acc:.4f}"]
    return lines


def _open(lines: list[str], kind: AnomalyType) -> list[Severity]:
    return [a.severity for a in run_of(lines).ledger.anomalies
            if a.type is kind and not a.resolved]


def test_the_saturated_level_is_the_clip_ceiling_times_the_wrong_share():
    assert saturated(16.12, 0.0)
    assert saturated(8.0590, 0.5)
    assert saturated(14.5063, 0.1)
    assert not saturated(0.16, 0.99)  # a good classifier's small loss: no evidence
    assert not saturated(2.30, 0.10)  # ln 10: a uniform guess, not saturated outputs


def test_a_collapse_to_the_ceiling_after_learning_is_a_blocking_divergence(tmp_path: Path):
    lines = _tfjs_epochs([(0.88, 0.35), (0.0, 16.12), (0.0, 16.12), (0.0, 16.12)])
    assert _open(lines, AnomalyType.DIVERGENCE) == [Severity.BLOCKER]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"


def test_saturated_from_the_start_is_not_learning():
    lines = _keras_epochs([(0.5, 8.0590)] * 4)
    assert _open(lines, AnomalyType.NOT_LEARNING) == [Severity.BLOCKER]
    assert not _open(lines, AnomalyType.DIVERGENCE)


def test_two_saturated_records_or_a_recovery_say_nothing():
    assert not _open(_tfjs_epochs([(0.9, 0.3), (0.0, 16.12), (0.0, 16.12)]),
                     AnomalyType.DIVERGENCE)
    recovered = _tfjs_epochs([(0.9, 0.3)] + [(0.0, 16.12)] * 3 + [(0.7, 0.9)])
    assert not _open(recovered, AnomalyType.DIVERGENCE)


def test_a_healthy_classifier_is_left_alone():
    lines = _keras_epochs([(0.6 + 0.03 * i, 1.2 - 0.08 * i) for i in range(10)])
    assert not _open(lines, AnomalyType.DIVERGENCE)
    assert not _open(lines, AnomalyType.NOT_LEARNING)


def _caffe(iterations: list[tuple[int, float]]) -> list[str]:
    # Caffe's glog solver lines, in their real shape (no accuracy output in this net).
    lines: list[str] = []
    for it, loss in iterations:
        lines += [f"I1009 13:08:39.377732 86511 solver.cpp:229] Iteration {it}, loss = {loss}",
                  f"I1009 13:08:39.377784 86511 solver.cpp:245]     Train net output #0: "
                  f"loss = {loss} (* 1 = {loss} loss)",
                  f"I1009 13:08:39.377825 86511 sgd_solver.cpp:106] Iteration {it}, lr = 1e-06"]
    return lines


def test_caffe_pinned_at_minus_ln_flt_min_is_a_divergence_at_once(tmp_path: Path):
    # SoftmaxWithLoss clamps p to FLT_MIN: 87.3365 is every output saturated and wrong.
    artifact = verdict_of(tmp_path, _caffe([(0, 21.4058), (20, 87.3365)]))
    assert artifact["decision"] == "NO-GO"
    assert [a["type"] for a in artifact["anomalies_detected"]] == ["divergence"]
    assert "FLT_MIN" in artifact["anomalies_detected"][0]["description"]


def test_a_loss_near_but_not_at_the_float32_ceiling_says_nothing():
    lines = _caffe([(0, 95.2), (20, 87.31), (40, 87.2), (60, 86.9)])
    assert _open(lines, AnomalyType.DIVERGENCE) == []
    assert _open(lines, AnomalyType.NOT_LEARNING) == []


def test_pytorch_bce_clamp_ceiling_times_the_wrong_share():
    assert saturated(50.0, 0.5)  # BCELoss's log clamped at −100, half wrong
    assert saturated(87.3365, 0.0)


def test_caffes_averaged_display_or_its_loss_layer_at_the_ceiling_is_caught():
    # Caffe's `loss = 87.3363` averages the last iterations; its loss layer's own output
    # (`Train net output #0: SoftmaxWithLoss1 = 87.3365`) is the ceiling as printed.
    averaged = [f"I1128 08:59:24.187857 14972 solver.cpp:218] Iteration {i} (6.2 iter/s, "
                f"62.4s/390 iters), loss = 87.3363" for i in (1170, 1560, 1950)]
    assert _open(averaged, AnomalyType.NOT_LEARNING) == [Severity.BLOCKER]
    layer = [line for i in (1170, 1560) for line in (
        f"I1128 08:59:24.187857 14972 solver.cpp:218] Iteration {i} (6.2 iter/s, "
        f"62.4s/390 iters), loss = {80 + i / 1000:.4f}",
        "I1128 08:59:24.187876 14972 solver.cpp:237]     Train net output #0: "
        "SoftmaxWithLoss1 = 87.3365 (* 1 = 87.3365 loss)")]
    assert _open(layer, AnomalyType.NOT_LEARNING) == [Severity.BLOCKER]
    assert _open(averaged[:2], AnomalyType.NOT_LEARNING) == []  # two points: not yet

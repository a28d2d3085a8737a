"""The loss rules judged against the run's own noise: the healthy runs of issue 24 raise
nothing serious, the broken ones are caught with the severity their consequence calls
for. Series are fed through the real parser and Run, as a log would be."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from babysit.config import PollSettings, RuleSettings, Settings, load_settings
from babysit.core.reports import NullObserver
from babysit.core.run import Run
from babysit.core.session import run_session
from babysit.model import AnomalyType, Severity
from babysit.parsing.parser import LogParser
from babysit.targets.common.log_file import LocalLogTarget
from tests.conftest import FakeClock, artifact_in

_SERIOUS = (Severity.HIGH, Severity.BLOCKER)


def run_of(lines: list[str]) -> Run:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return run


def verdict_of(tmp_path: Path, lines: list[str]) -> dict[str, Any]:
    """The artifact of `babysit --once` on a log of these lines."""
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path),
                NullObserver(), clock=FakeClock())
    return artifact_in(tmp_path)


def serious(run: Run) -> list[tuple[str, str, str]]:
    return [(a.type.value, a.severity.value, a.description) for a in run.ledger.anomalies
            if a.severity in _SERIOUS]


def losses(values: list[float], start: int = 1, every: int = 1) -> list[str]:
    return [f"step={start + i * every} loss={v:.5g}" for i, v in enumerate(values)]


def test_a_fine_tune_wandering_between_042_and_065_raises_nothing_serious():
    # The healthy fine-tune: 21 "divergences" under the old five-rises rule.
    for seed in range(3):
        rng = random.Random(seed)
        values = [rng.uniform(0.42, 0.65) for _ in range(3000)]
        assert serious(run_of(losses(values))) == []


def test_a_falling_loss_with_005_noise_raises_nothing_serious():
    for seed in range(3):
        rng = random.Random(seed)
        values = [0.5 + 2.0 * math.exp(-t / 300) + rng.gauss(0, 0.05) for t in range(3000)]
        assert serious(run_of(losses(values))) == []


def test_a_learning_rate_step_that_lifts_the_loss_a_little_is_not_divergence():
    # detectron2 stepping its LR: total_loss 0.147 → 0.155 and staying there.
    rng = random.Random(7)
    values = [0.30 * math.exp(-t / 60) + 0.147 + rng.gauss(0, 0.003) for t in range(300)]
    values += [0.155 + rng.gauss(0, 0.003) for _ in range(200)]
    assert serious(run_of(losses(values, every=20))) == []


def test_a_training_loss_rising_by_design_while_validation_improves_is_a_notice(tmp_path):
    # A curriculum run: train loss rises as harder data comes in, val loss improves
    # from 0.029 to 0.0137, and the run completes.
    lines = []
    for i in range(60):
        step = (i + 1) * 10
        lines.append(f"step={step} loss={0.30 + 0.01 * i:.4f}")
        if i % 5 == 4:
            lines.append(f"step={step} eval_loss={0.029 - 0.00028 * i:.5f}")
    data = verdict_of(tmp_path, [*lines, "Training complete"])
    divergence = [a for a in data["anomalies_detected"] if a["type"] == "divergence"]
    assert divergence and all(a["severity"] == "low" for a in divergence)
    assert "not shared by validation" in divergence[0]["description"]
    assert data["decision"] == "GO", data["summary"]

def test_the_same_rise_shared_by_validation_stays_serious():
    lines = []
    for i in range(60):
        step = (i + 1) * 10
        lines.append(f"step={step} loss={0.30 + 0.01 * i:.4f}")
        if i % 5 == 4:
            lines.append(f"step={step} eval_loss={0.029 + 0.001 * i:.5f}")
    assert [t for t, _, _ in serious(run_of(lines))] == ["divergence"]


def test_a_megatron_loss_climbing_from_116_to_204_is_a_blocker():
    values = [11.6, 11.2, 11.0, 10.9, 11.0] + [11.0 + 0.35 * i for i in range(1, 27)]
    lines = [f" iteration {10 * (i + 1):8d}/    1000 | lm loss: {v:.6E} |"
             for i, v in enumerate(values)]
    run = run_of(lines)
    found = [(a.type, a.severity) for a in run.ledger.anomalies]
    assert found == [(AnomalyType.DIVERGENCE, Severity.BLOCKER)], run.ledger.anomalies
    assert "above where the run started" in run.ledger.anomalies[0].description


def test_a_short_megatron_log_climbing_from_116_to_204_is_a_blocker_too():
    values = [11.6, 11.2, 11.3, 11.9, 12.6, 13.4, 14.5, 15.7, 16.9, 18.2, 19.3, 20.4]
    run = run_of([f" iteration {10 * (i + 1):8d}/    1000 | lm loss: {v:.6E} |"
                  for i, v in enumerate(values)])
    found = [(a.type, a.severity) for a in run.ledger.anomalies]
    assert found == [(AnomalyType.DIVERGENCE, Severity.BLOCKER)], run.ledger.anomalies


def test_a_loss_above_ln_vocab_and_not_coming_back_is_a_blocker():
    # A log that begins mid-run (no starting value) but names its vocabulary: a loss
    # above ln(50257) = 10.8 scores worse than a uniform guess.
    values = [7.0, 7.1, 6.9, 7.0, 6.95] + [7.0 + 0.4 * i for i in range(1, 20)]
    run = Run(RuleSettings(), None, 0.0)
    run.series.note_facts({"vocab_size": 50257.0})
    run.absorb(LogParser().feed_lines(
        [f" iteration {5000 + 10 * i:8d}/  100000 | lm loss: {v:.6E} |"
         for i, v in enumerate(values)]))
    found = [(a.type, a.severity) for a in run.ledger.anomalies]
    assert found == [(AnomalyType.DIVERGENCE, Severity.BLOCKER)], run.ledger.anomalies
    assert "ln(vocabulary)" in run.ledger.anomalies[0].description

def test_a_rise_that_comes_back_down_is_high_not_a_blocker():
    # mlx-lm's public log: 2.09 → 1.41 → 6.44, then back towards 4.6.
    values = [2.086, 1.593, 1.406, 3.316, 6.437, 5.478, 4.857, 4.874, 4.604]
    run = run_of(losses(values, every=25))
    assert [(t, s) for t, s, _ in serious(run)] == [("divergence", "high")]


def test_a_flat_loss_that_then_finishes_is_not_learning_and_not_go(tmp_path):
    rng = random.Random(3)
    lines = losses([10.82 + rng.gauss(0, 0.01) for _ in range(500)])
    data = verdict_of(tmp_path, [*lines, "Training complete"])
    found = [(a["type"], a["severity"]) for a in data["anomalies_detected"]]
    assert found == [("not-learning", "high")]
    assert data["decision"] != "GO"

def test_a_loss_identical_on_every_step_is_not_learning():
    # No batch changes it: the weights or the data are frozen, and a run there does not
    # leave it on its own — a blocker while it goes (sealed-13's Keras MNIST at `loss:
    # 2.3567 - accuracy: 0.1044` on eleven epochs, the share of one digit).
    run = run_of(losses([10.8259] * 30))
    found = [(a.type, a.severity, a.key) for a in run.ledger.anomalies]
    assert (AnomalyType.NOT_LEARNING, Severity.BLOCKER, "identical") in found


def test_lr_and_grad_norm_zero_throughout_is_not_learning():
    lines = [f"step={s} loss={2.0 - 0.01 * s:.3f} lr=0.0 grad_norm=0.0" for s in range(1, 12)]
    keys = {a.key for a in run_of(lines).ledger.anomalies
            if a.type is AnomalyType.NOT_LEARNING}
    # Both at 0 from the first point: one finding that says so (a sparse log needs only
    # three such points).
    assert keys == {"zero updates"}


def test_a_loss_that_learns_is_not_flagged_as_not_learning():
    rng = random.Random(4)
    values = [2.0 * math.exp(-t / 100) + 1.0 + rng.gauss(0, 0.01) for t in range(500)]
    assert run_of(losses(values)).ledger.anomalies == ()


def test_a_converged_loss_printed_with_few_digits_is_not_identical():
    # lsf_painn's public log: 0.0008 on every line once converged.
    lines = losses([0.5 / (1 + t) for t in range(20)] + [0.0008] * 20)
    assert all(a.key != "identical" for a in run_of(lines).ledger.anomalies)


def test_the_vocabulary_can_be_given_in_the_config_when_the_log_does_not_say_it(
        tmp_path: Path):
    (tmp_path / "babysit.toml").write_text("[rules]\nvocab_size = 50257\n")
    rules = load_settings(tmp_path, env={}).rules
    values = [7.0, 7.1, 6.9, 7.0, 6.95] + [7.0 + 0.4 * i for i in range(1, 20)]
    run = Run(rules, None, 0.0)
    run.absorb(LogParser().feed_lines(
        [f" iteration {5000 + 10 * i:8d}/  100000 | lm loss: {v:.6E} |"
         for i, v in enumerate(values)]))
    [found] = run.ledger.anomalies
    assert found.severity is Severity.BLOCKER and "ln(vocabulary)" in found.description


@pytest.mark.parametrize("phi", [0.5, 0.8])
@pytest.mark.parametrize("seed", range(8))
def test_a_smoothed_loss_wandering_slowly_in_its_band_raises_nothing_serious_once_known(
        seed: int, phi: float):
    # A logged loss averaged over many batches drifts slowly: AR(1) noise, squashed into
    # the band 0.42-0.65. Its first few dozen points cannot tell a drift from a
    # rise; after that its range is known and nothing serious may fire.
    rng, x, values = random.Random(seed), 0.0, []
    for _ in range(2000):
        x = phi * x + rng.gauss(0, 1)
        values.append(0.535 + 0.115 * math.tanh(x * math.sqrt(1 - phi * phi) / 1.5))
    run = run_of(losses(values))
    assert [(a.type, a.step) for a in run.ledger.anomalies
            if a.severity in _SERIOUS and (a.step or 0) > 50] == []


def test_a_second_training_stage_at_its_own_loss_level_is_not_a_spike():
    # fits_electricity (public): a second stage starts again at epoch 1 with a loss of
    # 0.22 where the first ended at 0.11, and stays there.
    first = [0.8 * 0.9 ** e + 0.112 + 0.004 * ((e * 3) % 5 - 2) / 2 for e in range(1, 101)]
    second = [0.217 + 0.004 * ((e * 7) % 5 - 2) / 2 for e in range(1, 30)]
    lines = []
    for stage in (first, second):
        for e, v in enumerate(stage, start=1):
            lines += [f"\titers: 100, epoch: {e} | loss: {v:.7f}",
                      "\tspeed: 1.7756s/iter; left time: 4746.0909s",
                      f"Epoch: {e} cost time: 105.48945927619934",
                      f"Epoch: {e}, Steps: 132 | Train Loss: {v:.7f} Vali Loss: 0.1756565 "
                      f"Test Loss: 0.2073350",
                      "Updating learning rate to 9.149791903054614e-06"]
    assert serious(run_of(lines)) == []


def _keras_climb(best_saved: bool) -> list[str]:
    """Keras 2 `fit(verbose=2)` with ModelCheckpoint(save_best_only): the loss falls for
    ten epochs, then climbs 0.03 an epoch; the best weights were saved before the climb."""
    draw = random.Random(0)
    losses = [1.0 + 0.6 * math.exp(-e / 2.5) + draw.uniform(-0.01, 0.01) for e in range(10)]
    losses += [1.0 + 0.03 * k + draw.uniform(-0.01, 0.01) for k in range(1, 31)]
    lines = ["Train on 45000 samples, validate on 5000 samples"]
    for epoch, loss in enumerate(losses, 1):
        lines.append(f"Epoch {epoch}/{len(losses)}")
        if best_saved:
            lines.append(f"Epoch {epoch - 1:05d}: val_loss improved from 1.3 to 1.2, saving "
                         f"model to model.weights.best.hdf5" if epoch <= 10 else
                         f"Epoch {epoch - 1:05d}: val_loss did not improve")
        lines.append(f"49s - loss: {loss:.4f} - acc: 0.5 - val_loss: 1.2 - val_acc: 0.5")
    return [*lines, "", " Test accuracy: 0.68"]


def test_a_finished_run_that_diverged_after_saving_its_best_weights_is_conditional(
        tmp_path: Path):
    """The best weights predate the rise: the run's deliverable stands (high,
    CONDITIONAL); its final weights do not."""
    data = verdict_of(tmp_path, _keras_climb(best_saved=True))
    kinds = {a["type"]: a["severity"] for a in data["anomalies_detected"]}
    assert kinds.get("divergence") == "high", data["anomalies_detected"]
    assert data["decision"] == "CONDITIONAL" and data["terminal_state"] == "SUCCEEDED"


def test_a_finished_run_that_diverged_with_no_best_weights_kept_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _keras_climb(best_saved=False))
    kinds = {a["type"]: a["severity"] for a in data["anomalies_detected"]}
    assert kinds.get("divergence") == "blocker" and data["decision"] == "NO-GO"

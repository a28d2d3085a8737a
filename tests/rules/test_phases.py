"""A step of a setting the records carry (a curriculum's horizon, a stage) starts a new
phase of the objective: the loss after it is judged against its own levels (sealed-18's
soil-moisture run: `K= 1` for twelve epochs at 0.000165, then `K= 7` at 0.00046, read as
a divergence before). The lines are that run's shape, rebuilt."""

from __future__ import annotations

from pathlib import Path

from babysit.rules.phases import PhaseWatch
from tests.rules.test_loss_rules import verdict_of


def test_a_setting_held_then_stepped_is_a_new_phase():
    watch = PhaseWatch()
    said = [watch.changed({"k": 1.0, "loss": 0.1}) for _ in range(12)]
    assert said == [None] * 12
    assert [watch.changed({"k": 7.0, "loss": 0.5}) for _ in range(4)] == \
        [None, None, "k 1 → 7", None]


def test_an_outcome_count_that_goes_back_is_no_phase():
    # a multi-agent DQN's `Collisions: 0`, 1 for one episode, 0 again (sealed-11)
    watch = PhaseWatch()
    values = [0.0] * 12 + [1.0] + [0.0] * 5 + [2.0, 2.0] + [0.0] * 3
    assert all(watch.changed({"collisions": v, "loss": 1.0}) is None for v in values)


def test_counters_measures_and_short_holds_are_no_phase():
    watch = PhaseWatch()
    for step in range(20):
        assert watch.changed({"epoch": float(step // 5), "mem_mb": 11174.0 + (step > 10),
                              "num_tokens": 2048.0 * (1 + (step > 12)), "loss": 0.3}) is None
    for value in (1.0, 1.0, 2.0, 2.0, 3.0):  # a value held for two records
        assert watch.changed({"stage": value}) is None


def _soil_moisture(later: list[float], k_later: int) -> list[str]:
    lines = [f"epoch {e:3d}  K= 1  loss={1.65e-4 + (e % 3) * 1e-6:.5e}  v1=0.0123"
             for e in range(12)]
    lines += [f"epoch {12 + i:3d}  K= {k_later}  loss={v:.5e}  v1=0.0123"
              for i, v in enumerate(later)]
    return lines


def test_the_loss_of_a_harder_phase_is_no_divergence(tmp_path: Path):
    later = [2.9e-3, 5.0e-4] + [4.6e-4 + (i % 4) * 2e-6 for i in range(40)]
    data = verdict_of(tmp_path, _soil_moisture(later, k_later=7))
    assert "divergence" not in {a["type"] for a in data["anomalies_detected"]}


def test_the_same_rise_with_the_setting_unchanged_is_a_divergence(tmp_path: Path):
    later = [2.9e-3, 5.0e-4] + [4.6e-4 + (i % 4) * 2e-6 for i in range(40)]
    data = verdict_of(tmp_path, _soil_moisture(later, k_later=1))
    assert "divergence" in {a["type"] for a in data["anomalies_detected"]}

"""Shapes read and judged since the twenty-eighth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

import random
from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.events import find_events
from babysit.rules.whole_run import WholeRun
from tests.rules.test_loss_rules import verdict_of

# -- An epoch's ending sentence, and an epoch's own batch counter ---------------------------


def test_an_epochs_training_finished_is_a_stage_not_the_run():
    kinds = [e.kind for e in find_events("Epoch: 42 training finished. Time: 301.40s, speed: "
                                         "131.40st/s,  total loss: 276056.44716")]
    assert kinds == [EventKind.NEW_STAGE]
    assert [e.kind for e in find_events("Training finished. Time: 301.40s")] \
        == [EventKind.COMPLETED]


def _ncrf_epoch(epoch: int, level: float, rng: random.Random, dev: float) -> list[str]:
    """One epoch of an NCRF++-style log: a loss summed over windows of 500 instances, the
    count starting again each epoch, and a short last window."""
    lines = [f"Epoch: {epoch}/30", " Learning rate is setted as: 0.015"]
    for instance in range(500, 10001, 500):
        loss = level * rng.uniform(0.95, 1.05)
        lines.append(f"     Instance: {instance}; Time: 3.80s; loss: {loss:.4f}; "
                     f"acc: {instance * 18}.0/{instance * 19}.0=0.9170")
    lines.append(f"     Instance: 10104; Time: 0.88s; loss: {level * 0.2:.4f}; "
                 f"acc: 181872.0/191976.0=0.9168")
    lines += [f"Epoch: {epoch} training finished. Time: 301.40s, speed: 131.40st/s,  "
              f"total loss: {level * 20:.5f}",
              "gold_num =  0  pred_num =  0  right_num =  0",
              f"Dev: time: 4.60s speed: 418.05st/s; acc: {dev:.4f}"]
    return lines


def test_a_loss_blown_up_within_the_epochs_is_divergence_not_each_epoch_a_new_run(
        tmp_path: Path):
    rng = random.Random(3)
    lines: list[str] = []
    for epoch in range(30):
        blown = epoch >= 20
        lines += _ncrf_epoch(epoch, 30000 if blown else 3500, rng,
                             0.08 if blown else 0.93)
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "divergence" and "resolved:" not in a["description"]
               for a in artifact["anomalies_detected"])


def test_the_same_log_whose_loss_holds_raises_no_divergence(tmp_path: Path):
    rng = random.Random(3)
    lines = [line for epoch in range(30) for line in _ncrf_epoch(epoch, 3500, rng, 0.93)]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "divergence"]
    assert artifact["decision"] != "NO-GO"


_PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "public"


def test_a_blow_up_whose_falls_were_single_short_windows_ends_undone(tmp_path: Path):
    # The real log (sealed-61): NCRF++'s CCG supertagger, its summed loss 3.5e3 for fifty
    # epochs, then 3e4-7e4 from epoch 91 to its end, each epoch's short last window (104
    # instances of 500) a fifth of the others; every divergence used to be resolved there.
    log = _PUBLIC / "sealed-61" / ("ncrfpp_ccg_supertag_bilstm_loss_blowup_epoch91_dev_acc_"
                                   "collapse_finished_100.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines())
    assert artifact["decision"] == "NO-GO"
    assert "ended undone" in artifact["summary"]


def test_the_whole_runs_sample_stays_spread_over_the_run():
    sample = WholeRun()
    for value in range(100_000):
        sample.add(float(value))
    assert sample.median() is not None and 40_000 < sample.median() < 60_000
    assert WholeRun().median() is None

"""Marian NMT's lines (C++, `src/training/scheduler.h`), in the shapes its versions print
(the examples are those its users posted and its own docs show)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.marian import parse_marian
from tests.core.test_endings import once


def test_a_training_line_gives_the_update_epoch_cost_speed_and_rate():
    parsed = parse_marian("[2019-03-25 14:51:54] Ep. 1 : Up. 1000 : Sen. 1,269,755 : Cost "
                          "7.95987511 : Time 785.53s : 17289.59 words/s : L.r. 1.2500e-05")
    assert parsed is not None
    assert (parsed.step, parsed.epoch) == (1000, 1.0)
    assert parsed.metrics == {"loss": 7.95987511, "words/s": 17289.59, "lr": 1.25e-05}


def test_the_cost_with_its_label_counts_since_1_9_and_a_gradient_norm():
    parsed = parse_marian("[2021-05-26 23:22:42] Ep. 1 : Up. 500 : Sen. 15,203 : Cost "
                          "6.01253986 * 414,436 after 414,436 : Time 609.91s : 679.50 words/s"
                          " : gNorm 0.5432")
    assert parsed is not None and parsed.step == 500
    assert parsed.metrics == {"loss": 6.01253986, "words/s": 679.5, "grad_norm": 0.5432}


def test_a_validation_line_is_the_evaluations_at_its_update():
    parsed = parse_marian("[2019-03-25 16:37:33] [valid] Ep. 1 : Up. 5000 : ce-mean-words : "
                          "5.21277 : new best")
    assert parsed is not None and parsed.step == 5000
    assert parsed.metrics == {"valid/ce-mean-words": 5.21277}


def test_prose_with_an_abbreviation_is_no_marian_line():
    assert parse_marian("See Ep. 3 of the podcast : Up. next") is None


def test_a_nan_cost_in_a_marian_run_is_no_go(tmp_path: Path):
    lines = [f"[2019-03-25 14:{i:02d}:54] Ep. 1 : Up. {i * 1000} : Sen. {i * 64000:,} : Cost "
             f"{9.0 - i * 0.1:.8f} : Time 785.53s : 17289.59 words/s" for i in range(1, 30)]
    lines.append("[2019-03-25 15:00:00] Ep. 1 : Up. 30000 : Sen. 1,920,000 : Cost nan : "
                 "Time 785.53s : 17289.59 words/s")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["decision"] == "NO-GO"
    assert any(a["type"] == "nan-inf" and a["step"] == 30000
               for a in data["anomalies_detected"])

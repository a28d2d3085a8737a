"""Shapes read and judged since the thirty-fifth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from babysit.rules.loss_parts import sums_its_terms
from tests.rules.test_loss_rules import verdict_of

# -- A loss printed as the sum of its terms -------------------------------------------------


def _sgl_epochs(epochs: int) -> list[str]:
    """NeuRec's SGL: a BPR term that learns, an InfoNCE term that sits near ln N by its
    nature (N negatives), a regulariser; their sum is the printed loss."""
    lines = []
    for e in range(1, epochs + 1):
        bpr, nce, reg = 0.6931 * 0.9 ** e, 6.3374 + 0.0002 * e, 0.0023 * e
        lines.append(f"2022-04-13 01:23:25.892: [iter {e} : loss : {bpr + nce + reg:.4f} = "
                     f"{bpr:.4f} + {nce:.4f} + {reg:.4f}, time: 362.553843]")
        lines.append(f"2022-04-13 01:23:39.990: epoch {e}:\t{0.002 + 0.001 * e:.8f}  "
                     f"\t0.00507033  \t0.00407281  ")
    return lines


def test_the_terms_of_a_summed_loss_are_read_beside_it():
    record = LogParser().feed("2022-04-13 01:23:25.892: [iter 1 : loss : 7.0305 = 0.6931 + "
                              "6.3374 + 0.0000, time: 362.553843]")
    assert record is not None
    assert record.metrics["loss"] == 7.0305
    assert [record.metrics[f"loss_term{i}"] for i in (1, 2, 3)] == [0.6931, 6.3374, 0.0]


def test_a_summed_loss_near_ln_1000_is_no_guess(tmp_path: Path):
    # 7.03 began near ln 1000 = 6.91 and stays within 7 % of it: judged as one
    # cross-entropy it would be a model that guesses; it is three objectives' total.
    lines = [*_sgl_epochs(26), "2022-04-13 03:58:15.441: Early stopping is trigger at epoch: 26"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_loss_is_a_sum_only_when_its_terms_add_up_to_it():
    assert sums_its_terms({"loss": 1.0, "loss_cls": 0.6, "loss_bbox": 0.4}, 1.0)
    # the same loss averaged another way, and one term alone: no sum
    assert not sums_its_terms({"loss": 1.0, "avg_loss": 1.2, "loss_cls": 0.6}, 1.0)
    assert not sums_its_terms({"loss": 1.0, "loss_cls": 1.0}, 1.0)
    # an equals sign with no plus is an assignment, not a sum
    assert "loss_term1" not in (LogParser().feed("step 3 loss = 2.5 lr = 0.1") or
                                LogParser().feed("step 3")).metrics

"""Shapes read and judged since the forty-fifth session, each on lines written in the real
shape of a public log (sealed-144 and sealed-145, each scored blind first), and the review
leftovers of the forty-fourth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list[Any]:
    parser = LogParser()
    return [r for r in (parser.feed(line) for line in lines) if r is not None] + parser.finish()


def _open(artifact: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- review leftovers ---------------------------------------------------------------------

def test_a_kl_weight_warmed_a_little_every_step_still_leaves_a_divergence_judged(
        tmp_path: Path):
    lines = []
    for step in range(1, 401):
        loss = 2.0 - step / 400 if step <= 200 else 1.5 + (step - 200) * 0.2
        lines.append(f"step {step} | loss {loss:.4f} | kl_weight {step / 400:.5f}")
    opened = _open(verdict_of(tmp_path, lines))
    assert ("divergence", "blocker") in opened or ("divergence", "high") in opened


def test_a_score_named_a_coefficient_is_no_loss_weight():
    from babysit.core.series import _LOSS_WEIGHT
    for name in ("dice_coef", "val_dice_coef", "jaccard_coef", "matthews_corrcoef"):
        assert not _LOSS_WEIGHT.match(name), name
    for name in ("kl_coef", "recon_coef", "beta", "lambda_gp", "cls_weight"):
        assert _LOSS_WEIGHT.match(name), name


def test_a_best_heading_gives_back_the_lines_of_a_log_that_indents_its_training():
    lines = ["Best model so far:"] + [f"  epoch {epoch} loss {3.0 / epoch:.4f} acc 0.{epoch:02d}"
                                     for epoch in range(1, 81)]
    records = [r for r in _records(lines) if r.metrics and "loss" in r.metrics]
    assert 30 <= len(records) <= 41  # the block is bounded; the rest are read

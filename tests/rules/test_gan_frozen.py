"""A GAN player's loss frozen at one value while the run's other losses move is a network
that stopped learning (issue 24). Shape: sealed-7 haftfusion_gan_tqdm_cr_epoch…, whose
`Disc: 0.500` sits on every redraw of 34 epochs beside a `Gen` and an `L1` that move."""

from __future__ import annotations

from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def bars(disc: list[float]) -> list[str]:
    return [f"Epoch: {i // 20}, L1: {0.07 + 0.001 * (i % 7):.3f}, Gen: {0.49 + 0.001 * (i % 5):.3f}"
            f", Disc: {d:.3f}:  50%|█████     | {i}/496 [15:35<10:25,  2.53s/it]"
            for i, d in enumerate(disc, 1)]


def not_learning(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.key for a in run.ledger.anomalies
            if a.type.value == "not-learning" and not a.resolved]


def test_a_discriminator_frozen_at_0_500_is_not_learning(tmp_path: Path):
    assert not_learning(bars([0.5] * 60)) == ["frozen disc"]
    data = verdict_of(tmp_path, bars([0.5] * 60))
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and "disc" in found[0]["description"], found


def test_a_discriminator_whose_loss_moves_is_learning():
    assert not_learning(bars([0.5 + 0.001 * (i % 9) for i in range(60)])) == []


def test_a_player_at_0_or_frozen_for_fewer_points_is_left_alone():
    assert not_learning(bars([0.0] * 60)) == []
    assert not_learning(bars([0.5] * 40)) == []

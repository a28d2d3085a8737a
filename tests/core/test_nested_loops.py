"""A bilevel loop printing its outer and inner epochs on every line minimises a fresh
objective in each round: the loss falling below 0 and jumping back at the next round is
its shape, not a divergence. Shape: sealed-13's multi-source transfer run,
`2022/09/01 11:33:07 epoch_out: 1, epoch_in: 0, loss: 1.4882671326398849`."""

from __future__ import annotations

from pathlib import Path

from babysit.core.nested_loops import NestedLoops
from tests.rules.test_loss_rules import verdict_of


def rounds(count: int, fall: float = 0.25) -> list[str]:
    lines = []
    for out in range(count):
        for inner in range(10):
            loss = 1.3 + 0.01 * out - fall * inner
            lines.append(f"2022/09/01 11:{10 + out:02d}:{inner * 5:02d} epoch_out: {out}, "
                         f"epoch_in: {inner}, loss: {loss!r}")
        lines.append(f"2022/09/01 11:{10 + out:02d}:55 -------update alpha finished------")
    return [*lines, "2022/09/01 11:47:41 training time: 931.7394649982452"]


def test_a_loss_that_starts_again_each_outer_round_is_no_divergence(tmp_path: Path):
    data = verdict_of(tmp_path, rounds(8))
    assert [a for a in data["anomalies_detected"] if a["type"] == "divergence"] == []


def test_only_an_inner_counter_going_back_as_an_outer_one_moves_on_starts_a_round():
    loops = NestedLoops()
    assert not loops.round_began({"epoch_out": 0, "epoch_in": 9, "loss": -1.5})
    assert loops.round_began({"epoch_out": 1, "epoch_in": 0, "loss": 1.4})
    batches = NestedLoops()  # an epoch's batch index is one training's
    assert not batches.round_began({"epoch": 1, "epoch_iter": 499, "loss": 0.5})
    assert not batches.round_began({"epoch": 2, "epoch_iter": 0, "loss": 0.5})
    patience = NestedLoops()
    assert not patience.round_began({"epoch": 4, "epochs_since_best": 3, "loss": 0.5})
    assert not patience.round_began({"epoch": 5, "epochs_since_best": 0, "loss": 0.4})

"""A new run in the same log starts its loss afresh (issue 24): a grid search's next
configuration begins at step 50 with a loss of 0.8 again, which is its start, not a
divergence from the previous configuration's best of 0.45. A new run that does diverge
is still caught, against its own level."""

from __future__ import annotations

from babysit.model import AnomalyType
from tests.rules.test_loss_rules import run_of


def _config(losses: list[float]) -> list[str]:
    return [f"step {50 * i} - loss: {v:.4f}, lr: 0.001" for i, v in enumerate(losses, 1)]


def _open(lines: list[str]) -> set[AnomalyType]:
    return {a.type for a in run_of(lines).ledger.anomalies if not a.resolved}


def test_the_next_configuration_of_a_grid_search_is_judged_on_its_own():
    first = _config([0.81, 0.69, 0.71, 0.70, 0.69, 0.62, 0.61, 0.63, 0.61, 0.61, 0.63, 0.55,
                     0.51, 0.54, 0.51, 0.53, 0.49, 0.48, 0.48, 0.46, 0.46, 0.49, 0.48, 0.39,
                     0.39, 0.45, 0.44, 0.45, 0.46])
    second = _config([0.80, 0.69, 0.74, 0.72, 0.75, 0.72, 0.61, 0.64, 0.63, 0.73, 0.63, 0.60,
                      0.60, 0.58, 0.62])
    assert AnomalyType.DIVERGENCE not in _open(first + second)


def test_a_new_run_that_diverges_is_still_caught():
    first = _config([2.0 - 0.05 * i for i in range(30)])
    second = _config([2.0 - 0.05 * i for i in range(10)] + [1.6 * 1.3 ** i for i in range(12)])
    # A climb by 30 % a point: caught as a spike or a divergence, as in a log of its own.
    assert _open(first + second) & {AnomalyType.DIVERGENCE, AnomalyType.LOSS_SPIKE}
    assert _open(first + second) == _open(second)


def _epochs(levels: list[float]) -> list[str]:
    # An epoch bar's batch counter starting again each epoch, the loss going on.
    return [f"step {50 * i} - loss: {level * (1 - 0.002 * i):.4f}, lr: 0.001"
            for level in levels for i in range(1, 11)]


def test_an_epoch_counter_starting_again_is_not_a_new_run():
    falling = [2.0 * 0.8 ** e for e in range(6)]
    assert AnomalyType.DIVERGENCE not in _open(_epochs(falling))
    # A loss that climbs across epochs is still judged against the run's best.
    climbing = falling + [falling[-1] * 1.5 ** e for e in range(1, 5)]
    assert _open(_epochs(climbing)) & {AnomalyType.DIVERGENCE, AnomalyType.LOSS_SPIKE}


def _g2p(rows: list[tuple[float, float]]) -> list[str]:
    # The shape of sealed-12's indog2p log: `Epoch 31 | Train Loss: 0.0080 | Val Loss:
    # 0.0359 | Val PER: 0.0114 | Time: 33.4s`.
    return [f"Epoch {e:02d} | Train Loss: {t:.4f} | Val Loss: {v:.4f} | Val PER: 0.0200 | "
            f"Time: 33.4s" for e, (t, v) in enumerate(rows, 1)]


def test_a_run_appended_after_one_that_finished_is_judged_on_its_own_evaluations():
    # A first run early-stops at a validation loss near 0.03 and says it finished; a
    # second launch appended to the same log starts at 2.67 and falls. Its start is
    # not a validation loss that got worse than the first run's best.
    first = _g2p([(0.1752 * 0.95 ** i, 0.1233 * 0.9 ** i + 0.03) for i in range(39)])
    second = _g2p([(2.709 * 0.7 ** i + 0.005, 2.6661 * 0.7 ** i + 0.02) for i in range(30)])
    lines = [*first, "Early stopping triggered.", "Training selesai.", *second]
    assert AnomalyType.EVAL_DEGRADATION not in _open(lines)


def _model(name: str, losses: list[tuple[float, float, float, float]]) -> list[str]:
    # The shape of sealed-11's LightWeightCNN log: `SqueezeNet - Epoch 12/49`, `----------`,
    # `train Loss: 1.1408 Acc: 0.6611`, `test Loss: 1.1875 Acc: 0.6518`; each model ends
    # with `Training SqueezeNet complete in 95m 21s` and `Best test Acc: 0.763880`.
    lines: list[str] = []
    for epoch, (tl, ta, vl, va) in enumerate(losses):
        lines += [f"{name} - Epoch {epoch}/{len(losses) - 1}", "----------",
                  f"train Loss: {tl:.4f} Acc: {ta:.4f}", f"test Loss: {vl:.4f} Acc: {va:.4f}", ""]
    best = max(va for *_, va in losses)
    return [*lines, f"Training {name} complete in 95m 21s", f"Best test Acc: {best:.6f}",
            f"train {name} done", ""]


def test_models_trained_in_turn_are_each_judged_on_their_own() -> None:
    # Three models, one after another, each from scratch: the second's first test loss
    # (2.50) is its start, not the first model's 0.75 got worse. The dataset's sizes
    # printed first (`{'train': 40058, 'test': 12032}`) are not the objective.
    def curve(floor: float) -> list[tuple[float, float, float, float]]:
        return [(2.5 * 0.9 ** e + floor - 0.1, 0.33 + 0.01 * e,
                 2.6 * 0.9 ** e + floor + 0.02 * (e % 3), 0.28 + 0.01 * e) for e in range(50)]

    # The first model ends better (test loss near 0.4) than the next two (0.8, 0.6).
    lines = ["{'train': 40058, 'test': 12032}",
             *_model("SqueezeNetBypass", curve(0.4)), *_model("SqueezeNet", curve(0.8)),
             *_model("AlexNet", curve(0.6))]
    assert AnomalyType.EVAL_DEGRADATION not in _open(lines)
    assert AnomalyType.LOSS_SPIKE not in _open(lines)

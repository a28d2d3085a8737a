"""A grad norm that grows a hundredfold while the loss stays put (issue 24, item 2): the
updates grow and buy nothing. Shape: a Hugging Face Trainer's dicts,
`{'loss': 11.02, 'grad_norm': 3.1, 'learning_rate': 0.001, 'epoch': 0.1}`."""

from __future__ import annotations

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from babysit.rules.grad_without_learning import grew_without_learning


def not_learning(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.description for a in run.ledger.anomalies if a.type.value == "not-learning"]


def dicts(losses: list[float], grads: list[float]) -> list[str]:
    return [f"{{'loss': {loss}, 'grad_norm': {grad:.4g}, 'learning_rate': 0.001, "
            f"'epoch': {0.01 * (i + 1):.2f}}}" for i, (loss, grad) in
            enumerate(zip(losses, grads, strict=True))]


def test_a_grad_norm_growing_while_the_loss_stays_put_is_not_learning():
    losses = [11.02 + 0.01 * (i % 3) for i in range(20)]
    grads = [3.1 * 1.5 ** i for i in range(20)]
    found = not_learning(dicts(losses, grads))
    # A geometric climb (×1.5 a point) is caught at its ninth point, before it is 100×.
    assert any("the grad norm" in d and "while the loss stayed" in d for d in found)


def test_a_grad_norm_growing_while_the_loss_falls_is_learning():
    losses = [11.0 * 0.9 ** i for i in range(20)]
    grads = [3.1 * 1.5 ** i for i in range(20)]
    assert not any("grad norm grew" in d for d in not_learning(dicts(losses, grads)))


def test_growth_needs_a_hundredfold_and_ten_points():
    first = [1.0] * 5
    assert grew_without_learning([99.0] * 5, [5.0] * 5, first, [5.0] * 5, 20) is None
    assert grew_without_learning([100.0] * 5, [5.0] * 5, first, [5.0] * 5, 9) is None
    assert grew_without_learning([100.0] * 5, [5.0] * 5, first, [5.0] * 5, 10) is not None
    assert grew_without_learning([100.0] * 5, [5.5] * 5, first, [5.0] * 5, 10) is None

"""A gradient norm that multiplies at every logged point (issue 24, items 1 and 2). The
shape is sealed-8's grokfast_hf_dict_grad_norm_grows_1_5x_per_log_to_1e14_loss_stuck_11:
Hugging Face Trainer dicts `{'loss': 11.2486, 'grad_norm': 12734252974080.0,
'learning_rate': 2.5e-05, 'epoch': 0.0, 'num_input_tokens_seen': 2211840}`, the norm ×1.5
a record from 3.8e12 to 1.4e14 while the loss stays at 11.1-11.7."""

from __future__ import annotations

from pathlib import Path

from babysit.model import AnomalyType, Severity
from babysit.rules.grad_trends import steady_climb
from tests.rules.test_loss_rules import run_of, verdict_of

_LOSSES = [11.6752, 11.4293, 11.3192, 11.2486, 11.111, 11.2352, 11.3782, 11.2332, 11.3905,
           11.2784]
_NORMS = [3789384056832.0, 5675928780800.0, 8501688532992.0, 12734252974080.0,
          19073997996032.0, 28569986138112.0, 42793548382208.0, 64098310029312.0,
          96009648603136.0, 143808037650432.0]


def trainer(losses: list[float], norms: list[float]) -> list[str]:
    return [f"{{'loss': {loss}, 'grad_norm': {norm}, 'learning_rate': 2.5e-05, 'epoch': 0.0, "
            f"'num_input_tokens_seen': {2064384 + 49152 * i}}}"
            for i, (loss, norm) in enumerate(zip(losses, norms, strict=True))]


def test_a_norm_multiplying_at_every_record_beside_a_put_loss_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, trainer(_LOSSES, _NORMS))
    assert data["terminal_state"] == "RUNNING"
    assert data["decision"] == "NO-GO", data["summary"]
    found = {a["type"]: a for a in data["anomalies_detected"]}
    assert found["grad-explosion"]["severity"] == "blocker"
    assert "runs away towards overflow" in found["grad-explosion"]["description"]
    assert "resolved" not in found["grad-explosion"]["description"]
    assert "while the loss stayed where it was" in found["not-learning"]["description"]


def test_a_norm_still_above_the_ceiling_is_not_back():
    # The explosion stays open while the norm is far above the ceiling, even once the
    # window of recent norms has filled with its own climb.
    flat = [3e12, 2.9e12, 3.1e12, 3e12, 2.95e12, 3.05e12, 3e12]
    run = run_of(trainer(_LOSSES[:7], flat))
    grads = [a for a in run.ledger.anomalies if a.type is AnomalyType.GRAD_EXPLOSION]
    assert grads and not grads[0].resolved and grads[0].severity is Severity.HIGH


def test_a_climbing_norm_with_a_falling_loss_is_learning():
    falling = [11.7 * 0.9 ** i for i in range(10)]
    run = run_of(trainer(falling, _NORMS))
    assert not [a for a in run.ledger.anomalies if a.type is AnomalyType.NOT_LEARNING]


def test_steady_climb_needs_eight_rises_and_tenfold():
    assert steady_climb(_NORMS[:9]) is not None
    assert steady_climb(_NORMS[:8]) is None  # seven rises
    assert steady_climb([1.0 + 0.1 * i for i in range(12)]) is None  # 2.1× in all
    wobble = [*_NORMS[:5], _NORMS[3], *_NORMS[5:]]
    assert steady_climb(wobble) is None

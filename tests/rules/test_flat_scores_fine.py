"""An accuracy held to every printed digit on four evaluations in a row while its own
evaluation's perplexity moved at each, on a set no smaller than 500 by its digits: no
prediction changed while the model's confidence did. Shape: sealed-176's OpenNMT-py run
(`[2024-03-24 12:31:50,060 INFO] Validation perplexity: 1.27162`, then `Validation
accuracy: 93.2447`), whose vocabulary was read with the counts glued to the tokens, so
every target was `<unk>`."""

from __future__ import annotations

from pathlib import Path

from babysit.rules.flat_scores import smallest_set
from tests.rules.test_loss_rules import verdict_of


def _opennmt(accuracies: list[float], perplexities: list[float]) -> list[str]:
    lines = []
    for i, (acc, ppl) in enumerate(zip(accuracies, perplexities, strict=True)):
        for j in range(4):
            step = 200 * i + 50 * (j + 1)
            lines.append(f"[2024-03-24 12:31:{10 + j:02d},878 INFO] Step {step}/ 1000; acc: "
                         f"{80 + j:.1f}; ppl:   1.{5 - j}; xent: 0.{4 - j}; lr: 0.00100; "
                         f"sents:    3200; bsz:  605/ 281/64; 1313/609 tok/s;     23 sec;")
        lines += [f"[2024-03-24 12:31:32,439 INFO] Validation perplexity: {ppl}",
                  f"[2024-03-24 12:31:32,439 INFO] Validation accuracy: {acc}"]
    return lines


def _frozen(data: dict) -> list[dict]:
    return [a for a in data["anomalies_detected"]
            if a["type"] == "not-learning" and "validation_accuracy" in a["description"]]


def test_a_fine_accuracy_held_while_its_perplexity_moves_is_a_constant_output(
        tmp_path: Path):
    data = verdict_of(tmp_path, _opennmt([76.7237] + [93.2447] * 4,
                                         [1.63653, 1.27162, 1.17555, 1.29619, 1.19492]))
    assert _frozen(data) and data["decision"] == "NO-GO"


def test_a_small_sets_accuracy_or_a_still_perplexity_says_nothing(tmp_path: Path):
    # 71.88 % is 23 of 32: a small set's score holds while a converged model wavers
    data = verdict_of(tmp_path, _opennmt([70.0] + [71.88] * 4,
                                         [1.6, 1.27, 1.17, 1.29, 1.19]))
    assert not _frozen(data)
    data = verdict_of(tmp_path, _opennmt([76.7237] + [93.2447] * 4,
                                         [1.63653, 1.27162, 1.27162, 1.27162, 1.27162]))
    assert not _frozen(data)


def test_the_smallest_set_that_prints_a_share():
    assert smallest_set(71.88) == 32
    assert smallest_set(0.75) == 4
    assert smallest_set(93.2447) == 500  # 903 items: beyond the mark

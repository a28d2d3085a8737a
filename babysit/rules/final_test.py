"""A final test that scores below every evaluation the run made: the best evaluation the
kept checkpoint was chosen by did not hold up (issue 24).

A run whose evaluation got worse (over-fitting) and which kept its best-evaluated
checkpoint delivers that checkpoint, so the evaluation's decline is no longer its
problem. Unless the test of that very checkpoint, printed once after training, scores
below the worst evaluation the run ever had: then the best was the evaluation's noise,
picked out of many (a few-shot prompt-tuning run whose `eval_accuracy` wandered 0.53-0.59
for 700 steps while its train loss fell to 2e-06, reloading its `checkpoint-300 (score:
0.5875)`, then `test_accuracy = 0.5208`). The run delivered a model that does no better
than any of its others did, and no better than where it began.

A run whose evaluation never got worse is judged so only on a score (higher is better)
that the test leaves far behind, `FAR_DROP` of its best: the evaluations promised a model
the test does not find (a leak into the validation data, inputs prepared otherwise at
test time). A test loss a little above the evaluation's is too common to say that.

The test and the evaluation are paired by their metric's name without the split's word
(`eval_accuracy` and `test_accuracy`, `val_psnr` and `holdout_psnr`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from babysit.rules.eval_names import evaluation_direction, name_words

# The words that name the held-out set a figure was measured on.
_TEST_WORDS = frozenset({"test", "testing", "holdout", "heldout"})
_VALIDATION_WORDS = frozenset({"eval", "evaluation", "val", "valid", "validation", "dev"})
_LEAST_EVALS = 3  # evaluations the test is set against
LEAST_DROP = 0.05  # below the best by this share of it at least
FAR_DROP = 0.2  # ... where the evaluation never got worse (scores only)


def _stem(key: str, split_words: frozenset[str]) -> tuple[str, ...] | None:
    """The metric's words without the split's, when the name carries one of these."""
    words = name_words(key)
    if not split_words.intersection(words):
        return None
    return tuple(w for w in words if w not in _TEST_WORDS | _VALIDATION_WORDS)


def final_test_below_evaluations(evals: Mapping[str, Sequence[float]],
                                 least_drop: float = LEAST_DROP,
                                 scores_only: bool = False) -> str | None:
    """Why a test measured once scores below every value of its evaluation's series (at
    least `_LEAST_EVALS` of them, the best `least_drop` of it above the test); None
    otherwise. `evals`: each evaluation metric's recent values, in order; `scores_only`:
    judge higher-is-better metrics only."""
    validations = {stem: key for key in evals
                   if (stem := _stem(key, _VALIDATION_WORDS)) is not None
                   and not _TEST_WORDS.intersection(name_words(key))}
    for key, values in evals.items():
        stem = _stem(key, _TEST_WORDS)
        partner = validations.get(stem) if stem is not None and len(values) == 1 else None
        direction = evaluation_direction(key)
        if partner is None or direction == 0 or (scores_only and direction < 0):
            continue
        series = evals[partner]
        test = values[0]
        if len(series) < _LEAST_EVALS:
            continue
        worst = min(v * direction for v in series) * direction
        best = max(v * direction for v in series) * direction
        if (test - worst) * direction < 0 and abs(best - test) > least_drop * abs(best):
            return (f"the final {key} ({test:.4g}) is below every one of the last "
                    f"{len(series)} {partner} evaluations ({worst:.4g} to {best:.4g}): what "
                    f"the best evaluation promised does not hold on the test, and the model "
                    f"kept does no better than the rest")
    return None

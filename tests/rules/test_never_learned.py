"""Not learning on any objective the run prints, whatever its length (issue 24, item 2):
a training loss flat at a uniform guess's ln(K), evaluations from the run's start that
never beat the first while the training loss does not fall, and a reward by a framework's
own name stuck at 0. Line shapes are the public logs': fastText's progress line
(sealed-7 fasttext_custom_loss_progress…), Keras's epoch end (sealed-4 xml_cnn_keras…),
RLlib's result block (sealed-7 rllib_tune_dqn_shogi…); each healthy counterpart is a
run of the same shape that learns."""

from __future__ import annotations

import math
from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from babysit.rules.never_learned import loss_at_chance, never_beat_first
from tests.rules.test_loss_rules import verdict_of


def not_learning(lines: list[str]) -> list[str]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [a.key for a in run.ledger.anomalies
            if a.type.value == "not-learning" and not a.resolved]


def fasttext(losses: list[float]) -> list[str]:
    return [f"Progress: 0.1%  words/sec/thread: 1767038  lr: {0.099883 - 1e-6 * i:.6f}  "
            f"loss: {v:.6f}  eta: 0h11m h-14m" for i, v in enumerate(losses)]


def test_a_loss_flat_at_ln4_is_not_learning(tmp_path: Path):
    # fastText with a custom loss: 1.385664 … 1.385707 over fifteen updates (ln 4 = 1.3863).
    losses = [1.385664, 1.385666, 1.385669, 1.385674, 1.385677, 1.38568, 1.385685, 1.385686,
              1.385688, 1.385691, 1.385696, 1.385698, 1.385701, 1.385707, 1.385707]
    assert not_learning(fasttext(losses)) == ["chance"]
    data = verdict_of(tmp_path, fasttext(losses))
    assert data["decision"] == "CONDITIONAL", data["summary"]
    found = [a for a in data["anomalies_detected"] if a["type"] == "not-learning"]
    assert found and "ln(4)" in found[0]["description"], found


def test_a_loss_that_starts_at_chance_and_falls_is_learning():
    losses = [1.3863 * 0.97 ** i for i in range(30)]
    assert not_learning(fasttext(losses)) == []


def test_a_flat_loss_away_from_any_chance_level_is_not_taken_for_chance():
    assert loss_at_chance([1.52] * 12) is None  # between ln 4 and ln 5
    assert loss_at_chance([2.30] * 12) is None  # too coarse to tell ln 10 from near it
    assert loss_at_chance([math.log(4)] * 9) is None  # nine points: too few
    assert loss_at_chance([math.log(50257)] * 10, vocab_size=50257) is not None
    wandering = [math.log(4) * (1 + 0.004 * (-1) ** i) for i in range(12)]
    assert loss_at_chance(wandering) is None  # at ln 4 on average, but not flat


def keras(epochs: list[tuple[float, float]]) -> list[str]:
    lines = []
    for e, (loss, val_loss) in enumerate(epochs, 1):
        lines += [f"Epoch {e}/15",
                  f"2399936/2400000 [============================>.] - ETA: 0s - loss: {loss:.4f}"
                  f" - categorical_accuracy: 0.4777",
                  f"2400000/2400000 [==============================] - 17053s 7ms/sample - loss: "
                  f"{loss:.4f} - categorical_accuracy: 0.4777 - val_loss: {val_loss:.4f} - "
                  f"val_categorical_accuracy: 0.5187"]
    return lines


def test_evaluations_that_never_beat_the_first_epoch_are_not_learning():
    # xml_cnn: val_loss 0.0069 at epoch 1, 0.0070 at each epoch after; loss 0.0078 → 0.0079.
    epochs = [(0.0078, 0.0069), (0.0078, 0.0070)] + [(0.0079, 0.0070)] * 7
    assert not_learning(keras(epochs)) == ["never better"]


def test_an_over_fitting_run_whose_training_loss_falls_is_not_taken_for_this():
    epochs = [(0.50 - 0.04 * e, 0.40 + 0.01 * e) for e in range(9)]
    assert not_learning(keras(epochs)) == []


def test_five_evaluations_are_too_few_and_one_better_one_is_learning():
    evals = [(0.0069, 0.0078)] + [(0.0070, 0.0079)] * 4
    assert never_beat_first(evals, -1) is None
    assert never_beat_first([*evals, (0.0068, 0.0079)], -1) is None
    assert never_beat_first([*evals, (0.0070, 0.0079)], -1) is not None
    assert never_beat_first([*evals, (0.0070, 0.0079)], +1) is None  # 0.0070 beats a score


def rllib(rewards: list[float]) -> list[str]:
    lines = []
    for i, reward in enumerate(rewards, 1):
        lines += ["Result for DQN_shogi_96499_00000:", f"  episode_reward_max: {reward}",
                  f"  episode_reward_mean: {reward}", "  episode_reward_min: 0.0",
                  f"  training_iteration: {i}"]
    return lines


def test_an_rllib_episode_reward_mean_of_0_on_every_iteration_is_not_learning():
    assert not_learning(rllib([0.0] * 12)) == ["reward"]


def test_an_rllib_reward_that_grows_is_learning():
    assert not_learning(rllib([0.1 * i for i in range(12)])) == []


def baselines_trpo(kls: list[float]) -> list[str]:
    # OpenAI baselines' TRPO logger table, one block per update.
    lines = []
    for i, kl in enumerate(kls, 1):
        lines += ["---------------------------------", "| EpLenMean       | 200      |",
                  "| EpRewMean       | -170     |", f"| TimestepsSoFar  | {i * 1024}    |",
                  f"| meankl          | {kl:.3g} |", "---------------------------------"]
    return lines


def test_a_policy_whose_kl_per_update_is_1e_10_does_not_move():
    assert not_learning(baselines_trpo([1e-10, 3e-11, 2e-10, 1e-10, 5e-11, 1e-10])) == \
        ["no step"]


def test_a_policy_that_moves_and_a_kl_of_exactly_0_are_not_taken_for_it():
    assert not_learning(baselines_trpo([0.0098, 0.0101, 0.0087, 0.0093, 0.01, 0.0099])) == []
    # verl's on-policy `actor/ppo_kl:0.0`, by construction, on every step.
    lines = [f"step:{s} - actor/pg_loss:0.01 - actor/ppo_kl:0.0 - critic/score/mean:"
             f"{0.1 * s:.2f}" for s in range(1, 12)]
    assert not_learning(lines) == []


def test_a_perplexity_at_the_number_of_classes_is_a_loss_at_chance():
    lines = [f"step {10 * i} | ppl {4.0 + 1e-4 * (i % 3):.4f}" for i in range(1, 14)]
    assert "chance" in not_learning(lines)


def test_workers_final_evaluations_one_a_line_are_not_a_course_of_evaluations():
    # sambanova (sealed-7, healthy): eight data-parallel workers' final evaluations.
    values = [(89.86, 0.3443), (89.09, 0.3577), (88.43, 0.3752), (89.46, 0.3504),
              (89.74, 0.3601), (89.23, 0.3656), (89.14, 0.3543), (89.23, 0.3676)]
    lines = ["Args: lr=0.001, momentum=0.0, batch_size=1",
             *(f"Test Accuracy: {a}  Loss: {loss}" for a, loss in values)]
    assert "never better" not in not_learning(lines)

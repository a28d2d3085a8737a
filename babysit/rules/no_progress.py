"""Pure helpers of the not-learning rule for what its long-run test cannot see: a loss
under a name the run's key table does not know, a log too short for a noise estimate,
a loss of exactly 0 that no batch moves, and a reinforcement-learning reward that
stays at nothing."""

from __future__ import annotations

import functools
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from babysit import lazy_re
from babysit.rules import objective_names, trends

# Metrics that show learning besides the loss: a loss printed as exactly 0 (GRPO's by
# construction, a fit whose `loss` column is not the objective) says nothing while
# these move.
_LEARNING_SIGN = lazy_re.compile(
    r"loss|err|mse|mae|acc|reward|score|kl|norm|entropy|dice|iou|map|perplex|ppl|f1",
    re.IGNORECASE)
# A reward or a score the policy earns, averaged over a batch of episodes or rollouts,
# under a framework's own prefix too (RLlib's `episode_reward_mean`, `total_reward`,
# `avg_reward`). Never an evaluation's, a best-so-far or a bound (`episode_reward_max`
# is one lucky episode), nor DPO's implicit `rewards/chosen`. Stable-baselines'
# abbreviation too (`rollout/ep_rew_mean`).
_REWARD = lazy_re.compile(r"(^|/)(critic/)?((episode|ep|total|avg|mean|train)_)?"
                          r"(score|rewards?|(?<=ep_)rew)"
                          r"(/mean|_mean)?$", re.IGNORECASE)
# One reward function of several, as TRL's GRPO trainer logs each beside their sum
# (`rewards/equation_reward_func`, `rewards/accuracy_reward/mean`): the sum can move on an
# easy part (the format) while the task's own part earns nothing. Not DPO's
# `rewards/chosen`, `rewards/margins` (implicit rewards, not functions), nor a penalty
# (0 is its best).
_REWARD_PART = lazy_re.compile(r"^rewards/(?!(?:chosen|rejected|margins|accuracies)\b)"
                               r"(?![^/]*penalt)[^/]+(?:/mean)?$", re.IGNORECASE)


def fallback_loss_key(metrics: Iterable[str]) -> str | None:
    """A training loss among metric names when none of the known loss keys is there
    (see objective_names: a loss by another name, a cross-entropy, a perplexity, a
    figure named for training)."""
    return objective_names.objective_key(metrics)


def learning_signs(metrics: Iterable[str], loss_key: str | None) -> tuple[str, ...]:
    """Training metrics other than the loss whose movement shows learning."""
    return _learning_signs(tuple(metrics), loss_key)


# A log prints the same few sets of names on every line: each set is searched once.
@functools.lru_cache(maxsize=256)
def _learning_signs(names: tuple[str, ...], loss_key: str | None) -> tuple[str, ...]:
    return tuple(k for k in names if k != loss_key and _LEARNING_SIGN.search(k)
                 and not objective_names.NOT_TRAIN_LOSS.search(k))


def reward_key(metrics: Iterable[str]) -> str | None:
    return _reward_key(tuple(metrics))


@functools.lru_cache(maxsize=256)
def _reward_key(names: tuple[str, ...]) -> str | None:
    return next((k for k in names if _REWARD.search(k)), None)


# A return the policy earns, by any name (`Average100 Score`, `ep_rew_mean`, `return`):
# higher is better. Never an evaluation's or a best-so-far (those are other rules').
_RETURN = lazy_re.compile(r"score|rew|return", re.IGNORECASE)
# (a classifier's or a tagger's measure named a score is no return: `Fscore`, `f_score`,
# `auc_score`, sklearn's `accuracy_score`, `dice_score`)
_MEASURE = (r"bleu|rouge|f1|f_?score|f_?measure|auc|accuracy|(?:^|[/_ .-])acc(?:$|[/_ .-])|"
            r"dice|iou|jaccard|precision|recall|r2")
# (nor a return the run was asked for: a return-conditioned decision transformer's
# `target return: 132.76`, the same at every evaluation, is its goal, not its result)
_GOAL = r"target|goal|desired|threshold"
_NOT_SCORE = lazy_re.compile(rf"best|max|min|std|loss|lr|{_GOAL}|{_MEASURE}", re.IGNORECASE)
_NOT_RETURN = lazy_re.compile(r"(^|[/_ .-])(val|valid|validation|eval|test|dev)|best|max|min|std|"
                              rf"loss|lr|{_GOAL}|{_MEASURE}", re.IGNORECASE)


# The terms of a reinforcement-learning update (SB3's `train/policy_gradient_loss`,
# `train/value_loss`, `train/approx_kl`; RLlib's `vf_loss`, `policy_loss`; PPO's clipped
# `surrogate=-0.0085, entropy= 0.176, loss=-0.0085`; an episode's length): a loss beside
# them is the update's surrogate, not a measure of learning.
_SURROGATE_TERM = lazy_re.compile(
    r"(?:^|[/_ .-])(?:policy_gradient_loss|pg_loss|policy_loss|value_loss|vf_loss|"
    r"approx_kl|clip_fraction|ep_len_mean|episode_length|surrogate(?:_loss)?)(?:$|[/_ .-])",
    re.IGNORECASE)


# A policy-gradient update's own terms (PPO's clip fraction and approximate KL, its
# policy-gradient loss): not a value learner's (DQN's TD loss), whose blow-up is the
# Q-values diverging.
_POLICY_GRADIENT_TERM = lazy_re.compile(
    r"(?:^|[/_ .-])(?:policy_gradient_loss|pg_loss|policy_loss|approx_kl|clip_fraction)"
    r"(?:$|[/_ .-])", re.IGNORECASE)


# A value learner's own terms beside its TD loss: its TD error, its targets, the Q-values
# it takes (PyMARL's `td_error_abs`, `target_mean`, `q_taken_mean`; a DQN's `q_values`).
_TD_TERM = lazy_re.compile(r"(?:^|[/_ .-])(?:td_?error\w*|target_mean|q_taken\w*|"
                           r"(?:mean|max|avg)_q|q_values?|q_mean)(?:$|[/_ .-])", re.IGNORECASE)


def value_learner(metrics: Iterable[str]) -> bool:
    """Whether a record's names are a value learner's update (see `_TD_TERM`)."""
    return any(_TD_TERM.search(k) for k in metrics)


def policy_gradient(metrics: Iterable[str]) -> bool:
    """Whether a record's names are a policy-gradient update's (see
    `_POLICY_GRADIENT_TERM`)."""
    return any(_POLICY_GRADIENT_TERM.search(k) for k in metrics)


def surrogate_loss(metrics: Iterable[str]) -> bool:
    """Whether a record's names are a reinforcement-learning update's (see
    `_SURROGATE_TERM`): its loss, if any, is the update's surrogate."""
    return any(_SURROGATE_TERM.search(k) for k in metrics)


def reward_parts(metrics: Iterable[str]) -> tuple[str, ...]:
    """The reward functions' own averages beside the sum (see `_REWARD_PART`), when the
    record has the sum as well."""
    return _reward_parts(tuple(metrics))


@functools.lru_cache(maxsize=256)
def _reward_parts(names: tuple[str, ...]) -> tuple[str, ...]:
    if _reward_key(names) is None:
        return ()
    return tuple(k for k in names if _REWARD_PART.search(k))


def return_key(metrics: Iterable[str]) -> str | None:
    return _return_key(tuple(metrics))


@functools.lru_cache(maxsize=256)
def _return_key(names: tuple[str, ...]) -> str | None:
    # An evaluation's return where the run prints no other: a search over policies
    # (ARS, evolution strategies) scores each by evaluating it, and that score is its
    # only return (`global_step=564, epoch=1, eval_return=6378.71, sigma_r=1296.0`).
    return next((k for k in names if _RETURN.search(k) and not _NOT_RETURN.search(k)), None) \
        or next((k for k in names if _RETURN.search(k) and not _NOT_SCORE.search(k)), None)


def flat_return(start: Sequence[float], recent: Sequence[float], best: float, points: int,
                min_rise: float, width: int = 5) -> str | None:
    """A return that never rose beyond its noise from where it started: its best level
    (median of `width` in a row) within 3σ (of the recent points' noise) and `min_rise`
    of its first level (the median of its first `width`). A level of more points is
    surer: the noise is scaled by √(5 / width), five points being the narrowest level."""
    if len(start) < 5 or len(recent) < 10:
        return None
    first = statistics.median(start)
    sigma = trends.noise_scale(recent) * math.sqrt(5 / max(width, 5))
    if trends.beyond_noise(best - first, first, sigma, 3.0, min_rise):
        return None
    return (f"not learning: over {points} logged points the return has not risen beyond "
            f"its noise from where it started ({first:.4g}, best level {best:.4g}): the "
            f"policy is no better than it began (a random policy's score)")


# An agent's count of the experience it has played: environment frames or timesteps
# (`Frame: 5820202`, SB3's `time/total_timesteps`, RLlib's `timesteps_total`). Never an
# optimizer's step, an episode's length or a rate (`frames_per_sec`).
_EXPERIENCE = lazy_re.compile(r"(?:^|[/_ .-])(?:frames?|(?:total_|num_)?timesteps(?:_total)?|"
                              r"env_?steps|environment_steps|agent_steps)$", re.IGNORECASE)
# Experience after which a return still at its start says the run is broken, not slow:
# twice the million frames a DQN anneals its exploration over, and where the Atari
# agents of the DQN papers have long left a random policy's score.
LONG_EXPERIENCE = 2_000_000
# The first count at most this share of the latest: the run is watched from its start.
_FROM_START = 0.1


def experience_key(metrics: Iterable[str]) -> str | None:
    return _experience_key(tuple(metrics))


@functools.lru_cache(maxsize=256)
def _experience_key(names: tuple[str, ...]) -> str | None:
    return next((k for k in names if _EXPERIENCE.search(k)), None)


def long_experience(first: float, latest: float) -> str | None:
    """Why a return that never rose is a broken run rather than a slow one: its agent,
    watched from the run's start (its first count a tenth of the latest or less), has
    played `LONG_EXPERIENCE` frames or timesteps or more. None otherwise."""
    if latest < LONG_EXPERIENCE or first > _FROM_START * latest:
        return None
    return (f"over {latest:,.0f} frames or timesteps played from the run's start: an agent "
            f"that learns has long left a random policy's score by then, so this one will "
            f"not on its own")


def moved(values: Sequence[float]) -> bool:
    """Whether a short series took more than one value (to many digits)."""
    return bool(values) and max(values) - min(values) > 1e-9 * max(1.0, abs(values[0]))


def short_plateau(values: Sequence[float], min_fall: float) -> str | None:
    """A short log's loss that never learned: every point within `min_fall` of where
    it started, and its latter half no lower than its earlier points after the start
    beyond their noise (not still falling towards a late drop). Five points at least,
    that differ (a value printed the same with few digits is the identical rule's);
    None when it learned or may yet, and for a loss that left the band upwards (the
    divergence rule's)."""
    if len(values) < 5 or not moved(values):
        return None
    start = values[0]
    band = abs(start) * min_fall
    if start <= 0 or any(abs(v - start) > band for v in values[1:]):
        return None
    if all(b > a for a, b in pairwise(values[-4:])):
        return None  # climbing: the divergence rule's
    best = min(statistics.median(values[i:i + 3]) for i in range(1, len(values) - 2))
    half = len(values) // 2
    earlier = statistics.median(values[1:half + 1])
    latter = statistics.median(values[half:])
    if latter < earlier - trends.noise_scale(values[1:]):
        return None  # still going down: a slow start, not a plateau
    if best >= start:
        return (f"not learning: over {len(values)} logged points the loss never fell below "
                f"where it started ({start:.4g} → {values[-1]:.4g})")
    return (f"not learning: over {len(values)} logged points the loss has stayed within "
            f"{100 * (start - best) / start:.1f} % of where it started ({start:.4g} → "
            f"{values[-1]:.4g}) and is no longer falling")


def stuck_reward(points: int, zeros: int, need: int) -> str | None:
    """A reward exactly 0 on (almost) every step: the policy earns nothing."""
    if points < need or zeros < 0.9 * points:
        return None
    return (f"not learning: the reward is exactly 0 on {zeros} of {points} logged "
            f"steps: the policy earns nothing (a reward function that never matches, "
            f"responses cut at the length limit, or a task too hard to start from)")


def latest(metrics: Mapping[str, float], key: str | None) -> float | None:
    return metrics.get(key) if key is not None else None

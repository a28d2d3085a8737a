"""A loss printed as each epoch's running mean (Keras's bar, tqdm loops that show
`total / (i + 1)`) is judged an epoch at a time: its restart at every epoch is no spike
and its settling is no divergence, while a run whose epochs really get worse is still
caught."""

from __future__ import annotations

import random
from pathlib import Path

from babysit.rules.epoch_means import EpochMeans
from tests.rules.test_loss_rules import verdict_of

_BATCHES = 137


def _epoch_means(level: float, rng: random.Random, noise: float = 0.12) -> list[float]:
    total, means = 0.0, []
    for n in range(1, _BATCHES + 1):
        total += max(0.01, level + rng.gauss(0, noise))
        means.append(total / n)
    return means


def _bar(n: int) -> str:
    done = n * 30 // _BATCHES
    return "=" * 30 if n == _BATCHES else "=" * done + ">" + "." * (29 - done)


def _keras_log(levels: list[float], seed: int = 1) -> list[str]:
    """Keras 2's bar as a terminal capture keeps it: every frame of an epoch on one line,
    apart by carriage returns, then the epoch's summary."""
    rng, lines = random.Random(seed), []
    for epoch, level in enumerate(levels, 1):
        lines.append(f"Epoch {epoch}/{len(levels)}")
        means = _epoch_means(level, rng)
        frames = [f"{n:3d}/{_BATCHES} [{_bar(n)}] - ETA: 1s - loss: {m:.4f}"
                  for n, m in enumerate(means, 1)]
        lines.append("\r".join(frames) + f" - 10s 70ms/step - loss: {means[-1]:.4f} - "
                                         f"val_loss: {level * 0.8:.4f}")
    return lines


def _serious(data: dict) -> list[str]:
    return [a["type"] for a in data["anomalies_detected"]
            if a["severity"] in ("high", "blocker") and "resolved:" not in a["description"]]


def test_a_healthy_keras_run_s_running_means_raise_nothing(tmp_path: Path):
    levels = [0.7 * 0.95 ** e for e in range(30)]
    data = verdict_of(tmp_path, _keras_log(levels))
    assert not _serious(data), data["anomalies_detected"]
    assert not [a for a in data["anomalies_detected"] if a["type"] == "divergence"]


def test_a_keras_run_whose_epochs_get_worse_is_still_caught(tmp_path: Path):
    levels = [0.7 * 0.95 ** e for e in range(15)] + [0.35 * 1.25 ** e for e in range(1, 11)]
    data = verdict_of(tmp_path, _keras_log(levels))
    assert "divergence" in _serious(data)
    assert data["decision"] != "GO"


def test_a_tqdm_loop_s_validation_bar_under_the_epoch_s_description_is_no_training(
        tmp_path: Path):
    # MindSpore classifier (sealed-26): `Epoch 5: 100%|…| 137/137 [… loss=0.29]`, then
    # `Epoch 5:   0%|…| 0/34` counting the validation batches to their own total, with
    # a lower loss of their own; both running means.
    rng, lines = random.Random(3), []
    for epoch in range(40):
        level = 0.7 * 0.96 ** epoch
        frames = [f"Epoch {epoch}: {100 * n // _BATCHES:3d}%|#| {n}/{_BATCHES} "
                  f"[00:{n // 8:02d}<00:10,  8.1it/s, loss={m:.3g}]"
                  for n, m in enumerate(_epoch_means(level, rng), 1)]
        valid = [f"Epoch {epoch}: {100 * n // 34:3d}%|#| {n}/34 "
                 f"[00:{n // 8:02d}<00:01,  8.1it/s, acc=0.9, loss={m:.3g}]"
                 for n, m in enumerate(_epoch_means(level * 0.5, rng)[:34], 1)]
        lines.append("\r".join(frames + valid))
    data = verdict_of(tmp_path, lines)
    assert not _serious(data), data["anomalies_detected"]
    assert data["total_steps"] == 40 * _BATCHES  # the validation batches are no steps


def test_a_raw_noisy_loss_is_not_taken_for_a_running_mean():
    rng, means = random.Random(5), EpochMeans()
    fed = 0
    for epoch in range(6):
        for n in range(100):
            fed += len(means.feed(epoch + n / 100, 1.0 + rng.gauss(0, 0.1)))
    assert not means.running_mean and fed == 600


def test_a_running_mean_is_judged_once_an_epoch_near_its_end():
    rng, means = random.Random(7), EpochMeans()
    fed: list[float] = []
    for epoch in range(6):
        for n, value in enumerate(_epoch_means(1.0, rng), 1):
            fed += means.feed(epoch + n / _BATCHES, value)
    assert means.running_mean
    # every point of the two epochs that decided it, then one an epoch
    assert len(fed) == 2 * _BATCHES + 1 + 3


def test_whole_epochs_give_their_last_mean_and_an_epoch_left_early_none():
    rng, means = random.Random(9), EpochMeans()
    for epoch in range(3):  # whole-number epochs only, as a per-batch line says them
        last = _epoch_means(1.0, rng)
        for value in last:
            means.feed(float(epoch), value)
    assert means.running_mean
    assert means.feed(3.0, 1.3) == [last[-1]]  # epoch 2 ended: its mean is judged
    partial = [means.feed(4.0, v) for v in _epoch_means(1.0, rng)[:5]]
    assert means.feed(5.0, 1.0) == []  # the first five means of epoch 4 say nothing
    assert all(p == [] for p in partial)

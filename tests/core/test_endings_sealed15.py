"""How runs end, read from the shapes of sealed-15's finished runs: the training's curves
plotted once the loop is over (a hand-written PPO's `Plot saved as rewards.png`). A plot
saved at every epoch recurs between the records and closes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.closing import CLOSING
from tests.core.test_endings import once
from tests.parsing.test_closing import judged_after_records


def _episodes(count: int) -> list[str]:
    # `Episode 0, Reward: 15.0` once an episode, after `Training on CartPole-v1`
    return ["Training on CartPole-v1",
            *(f"Episode {e}, Reward: {10.0 + e % 17 * 1.5}" for e in range(count))]


@pytest.mark.parametrize("line", [
    "Plot saved as rewards.png",
    "Saved plot to out/loss.png",
    "Figure saved to curves.pdf",
])
def test_the_curves_plotted_after_the_last_record_close_the_run(line: str):
    event = judged_after_records(line)
    assert event is not None and event.detail == CLOSING


@pytest.mark.parametrize("line", ["Plotting rewards", "plot_every = 10",
                                  "figure size set to 8x6"])
def test_a_plot_named_but_not_saved_closes_nothing(line: str):
    assert judged_after_records(line) is None


def test_an_episode_loop_whose_plot_is_saved_after_it_finished(tmp_path: Path):
    text = "\n".join([*_episodes(120), "Plot saved as rewards.png"]) + "\n"
    assert once(tmp_path, text)["terminal_state"] == "SUCCEEDED"


def test_a_plot_saved_at_every_epoch_is_no_end(tmp_path: Path):
    lines = []
    for epoch in range(1, 6):
        lines += [f"epoch {epoch} step {s} loss {2.0 / (epoch * 20 + s):.4f}"
                  for s in range(1, 21)]
        lines.append(f"Plot saved as curves_epoch{epoch}.png")
    lines += [f"epoch 6 step {s} loss 0.0150" for s in range(1, 6)]
    assert once(tmp_path, "\n".join(lines) + "\n")["terminal_state"] == "RUNNING"

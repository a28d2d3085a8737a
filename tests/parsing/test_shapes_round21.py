"""Shapes read since the twenty-first session, each on lines written in the real shape of
a public log."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.formats import parse_key_values
from tests.rules.test_loss_rules import verdict_of


def test_a_qualifier_in_parentheses_may_hold_a_number():
    # A policy-gradient notebook's `Average Reward (last 100)`: the window is part of the
    # name, and the episode that opens the line is the loop's counter.
    parsed = parse_key_values("Episode 20, Average Reward (last 100): 21.65")
    assert parsed is not None
    assert parsed.metrics == {"average_reward_last_100": 21.65}
    assert parsed.step == 20
    # A qualifier in words reads as before.
    parsed = parse_key_values("Epoch 3, Loss (avg): 0.31, Acc (top-1): 55.2")
    assert parsed is not None and parsed.metrics == {"loss_avg": 0.31, "acc_top_1": 55.2}


def test_an_episode_counter_opening_its_line_is_the_step():
    parsed = parse_key_values("Episode 154 reward: 15.998000144958496")
    assert parsed is not None and parsed.step == 154
    # Not an episode's share or a count of a total (the latter is `episode 8/10`'s own).
    parsed = parse_key_values("Episode 8/10 reward: 3.5")
    assert parsed is not None and (parsed.step, parsed.target) == (8, 10)


_ANSI_RED, _ANSI_GREEN, _ANSI_OFF = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0m"


def _ipython8_interrupt(after: list[str]) -> list[str]:
    # IPython 8's traceback of Ctrl-C in a notebook cell, as VS Code's Jupyter output keeps
    # it: frames as `Cell In[20], line 28` and `File /path/module.py:1736, in f(self)`, the
    # path unquoted, then the frontend's own lines after the exception.
    lines = [f"Episode {e} loss: {-250.0 - e:.4f}" for e in range(40)]
    lines += [f"Episode {e} reward: {9.4 + (e % 7) * 0.5:.4f}" for e in range(40)]
    lines += [
        f"{_ANSI_RED}{'-' * 75}{_ANSI_OFF}",
        f"{_ANSI_RED}KeyboardInterrupt{_ANSI_OFF}                         "
        "Traceback (most recent call last)",
        f"Cell {_ANSI_GREEN}In[20], line 28{_ANSI_OFF}",
        "\x1b[1;32m     26\x1b[0m total_rewards = torch.zeros(1000)",
        "\x1b[0;32m---> 28\x1b[0m     loss, total_reward = run_episode()",
        "",
        f"File {_ANSI_GREEN}/opt/anaconda3/lib/python3.10/site-packages/torch/nn/modules/"
        f"module.py:1736{_ANSI_OFF}, in \x1b[0;36mModule._wrapped_call_impl\x1b[0;34m"
        "(self, *args, **kwargs)\x1b[0m",
        "\x1b[1;32m   1734\x1b[0m     return self._compiled_call_impl(*args, **kwargs)",
        "",
        f"{_ANSI_RED}KeyboardInterrupt{_ANSI_OFF}: ",
    ]
    return lines + after


def test_an_ipython8_traceback_is_read_through_its_frames(tmp_path: Path):
    vscode = ["\x1b[1;31mThe Kernel crashed while executing code in the current cell or a "
              "previous cell. ", "",
              "\x1b[1;31mPlease review the code in the cell(s) to identify a possible cause "
              "of the failure. "]
    for after in ([], vscode):
        data = verdict_of(tmp_path, _ipython8_interrupt(after))
        assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO"), \
            data["summary"]

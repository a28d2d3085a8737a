"""Shapes read since the fifty-second session, each on lines written in the real shape of a
public log babysit misread."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.shell_prompts import is_prompt
from tests.rules.test_loss_rules import verdict_of


def _epochs(count: int) -> list[str]:
    return [f"Epoch {e}: train loss {1.0 / e:.4f}, val acc {0.5 + 0.01 * e:.4f}"
            for e in range(1, count + 1)]


# -- a bare shell's prompt -------------------------------------------------------------------

@pytest.mark.parametrize("line", ["bash-4.2$ ls", "(fairmoe) bash-4.2$ exit", "sh-5.1# ",
                                  "(base) bash-4.4$", "zsh-5.8$ python train.py"])
def test_a_shell_with_no_prompt_set_shows_its_name_and_version(line: str):
    """A container's or a compute node's shell with no PS1 of its own prompts with its name
    and version (a screen capture of a fairseq run on a cluster: `(fairmoe) bash-4.2$`)."""
    assert is_prompt(line)


@pytest.mark.parametrize("line", ["fresh-1.0$ price", "flash-2.1 attention on",
                                  "Using bash-4.2 from /usr/bin"])
def test_a_word_ending_in_sh_is_no_prompt(line: str):
    assert not is_prompt(line)


def test_the_bare_prompt_after_the_last_epoch_ends_the_run(tmp_path: Path):
    """The shell took the terminal back after the last epoch: the run is over, though the
    log does not say how (no plan, no summary)."""
    artifact = verdict_of(tmp_path, [*_epochs(6), "(venv) bash-4.2$ "])
    assert artifact["terminal_state"] == "ENDED"
    assert verdict_of(tmp_path, _epochs(6))["terminal_state"] == "RUNNING"

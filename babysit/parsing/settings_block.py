"""A block of settings printed under its heading: the run's configuration, not records.

A script that prints its configuration often heads it with a word for what follows and
indents one setting a line below it (GST-Tacotron's `[2021-04-14 10:24:36.900]
Hyperparameters:`, then `  initial_learning_rate: 0.002`, `  power: 1.5`, `  max_iters:
1000`; `Arguments:`, `Config:`, `Training settings:` alike; FuxiCTR's `Params: {` and a
JSON object, one field a line, `"monitor": "{'AUC': 1, 'logloss': -1}",`). Read one line
at a time, those lines are `name: value` pairs like any record's: a learning rate or a
`power` among them was counted as a training record (a run that never trained, three
launches each stopping after its configuration, read as one with six records), and a
monitor's weight `'AUC': 1` as the run's first evaluation (which hid an AUC at 0.5 on
every real one). Inside the block a line is a setting: the plan is still read from it
(`max_iters: 1000`), no record is.

The block is the heading's indented lines (and YAML's `- item` lines); the first line that
is neither, or a blank one, ends it.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.log_prefix import message

# The heading alone on its line, a few words at most before the word for settings.
_HEADING = lazy_re.compile(
    r"^\W{0,3}(?:[A-Za-z][\w.-]*\s+){0,2}(?i:hyper-?param(?:eter)?s|h?params|parameters|"
    r"arguments|args|config(?:uration)?s?|settings|options|opts|flags)\s*[:=]\s*[{(\[]?\s*$")
# What a heading's line may hold: letters, a colon at its end (a cheap test first).
_HINTS = ("aram", "rgs", "rguments", "onfig", "ettings", "ptions", "opts", "lags",
          "ARAM", "RGS", "ONFIG", "ETTINGS", "PTIONS", "LAGS")


class SettingsBlock:
    """Whether each line is inside a block of settings under its heading."""

    def __init__(self) -> None:
        self._open = False

    def inside(self, line: str) -> bool:
        """Whether `line` (after any rank label) is one of the block's settings; a heading
        opens a block, the first line outside it closes it."""
        if self._open:
            if (line[:1] in (" ", "\t") and line.strip()) or line.startswith("- "):
                return True
            self._open = False
        if line.rstrip()[-1:] in (":", "{", "(", "[") and any(hint in line for hint in _HINTS) \
                and _HEADING.match(message(line).strip()) is not None:
            self._open = True
        return False

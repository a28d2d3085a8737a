"""A pandas Series printed whole: one record, its names down the left.

A loop that keeps its statistics in a DataFrame and prints the latest row (`print(df.iloc[
-1])`) prints a Series: a name and its value on each line, the values aligned, then the
footer pandas always writes, `Name: 290, dtype: float64` (the row's label and the values'
type). A Procgen PPO run printed 3,000 of them (`timesteps  1.907098e+07`,
`mean_episode_rewards  8.750000e+00`, `val_mean_episode_rewards  4.500000e+00`, …, sealed-
153). Read a line at a time, a lone name and number is no record (`Loaded 5` may be
anything): the footer is what says the lines before it were one row of figures.

Until the first footer, the lines are noted as they come and left to the other readers
(they make nothing of them); after it, they are this reader's (understood). The footer
returns the row as one record, at the step its environment counter names (`timesteps`,
`t_env`, `frames`), if any.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed, split_counters
from babysit.parsing.text import normalise_key, to_number

# One of the Series' lines: a name, two spaces or more, a number.
_MEMBER = lazy_re.compile(r"^([A-Za-z_][\w./()-]*)\s{2,}([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|"
                          r"\.\d+)|[-+]?(?:nan|NaN|inf|Inf))\s*$")
# The footer pandas writes under a Series (with its name, its length, or neither).
_FOOTER = lazy_re.compile(r"^(?:Name: .{0,80}, )?(?:Length: \d+, )?dtype: [a-z]+\d*\s*$")
# The counter of the environment's steps, where the row names no step by its usual names.
_ENV_STEPS = ("timesteps", "timestep", "t_env", "env_steps", "total_steps", "frames",
              "total_timesteps")
_MAX_MEMBERS = 200  # a Series longer than this is some other dump


class SeriesReprs:
    """The lines of the Series being printed, until its footer."""

    def __init__(self) -> None:
        self._values: dict[str, float] = {}
        self._footed = False  # a footer was read: the shape is the run's

    def wants(self, text: str) -> bool:
        """Whether the line may be a member or the footer (a cheap test first); any other
        line ends what was being gathered."""
        if "dtype: " in text or "  " in text:
            return True
        self._values.clear()
        return False

    def read(self, text: str) -> Parsed | bool | None:
        """The record a footer closes; for a member (noted), True once a footer was read
        (None before); None for any other line."""
        member = _MEMBER.match(text)
        if member is not None:
            if len(self._values) < _MAX_MEMBERS:
                number = to_number(member.group(2))
                if number is not None:
                    self._values.setdefault(normalise_key(member.group(1)), number)
            return True if self._footed else None
        if "dtype: " in text and _FOOTER.match(text.strip()) is not None and self._values:
            values, self._values, self._footed = self._values, {}, True
            parsed = split_counters(values, "series-repr")
            if parsed.step is None:
                counter = next((values[k] for k in _ENV_STEPS if k in values), None)
                if counter is not None and counter >= 0:
                    parsed = Parsed("series-repr", int(counter), parsed.target, parsed.epoch,
                                    parsed.total_epochs, parsed.metrics)
            return parsed if parsed.metrics or parsed.step is not None else None
        self._values.clear()
        return None

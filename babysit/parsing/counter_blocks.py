"""Multi-line status blocks headed by the loop's counter, their members `name value`.

A reinforcement-learning loop may print its status as a block every so many steps, the
counter on a line of its own and each figure on the next lines, with no `=` or `:`
between a name and its value (the DQN of Berkeley's deep-RL course, copied into many
repositories):

    Timestep 70000
    mean reward (100 episodes) -20.054054
    best mean reward -inf
    episodes 74
    exploration 0.937000
    learning_rate 0.000100

Each member line alone names nothing a format reads; together they are one record at the
head's step. A block is believed only once a head of the same word comes back with the
same member names (a line `Epoch 3` over a free-form paragraph is not this): from then on
a block is read as soon as it holds every name the first one had, so the log's last block
is read without waiting for a head after it. A figure that is a bound by its name (`best
mean reward -inf` before any episode ended) keeps that name, for the rules to read so.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed, looks_like_metrics, names_a_measure
from babysit.parsing.log_prefix import message
from babysit.parsing.text import normalise_key, to_number

# `Timestep 70000`, `Iteration 12`, `Step 400`: the counter alone on its line; or with
# its plan, centred in a banner (rsl_rl's PPO runner, the legged-robot trainers of Isaac
# Gym, Isaac Lab and Genesis: `##…##`, then `   Learning iteration 128/300   `).
# (or an epoch's, behind a logger's head: rlkit's `2021-02-14 22:24:15,166 :: INFO ::
# Epoch 352`, then its `tabulate` table of `Critic/Qf1Loss            24.9074` rows between a
# `----   ----` rule and a `====` one)
# (or the count first, as an ordinal: a retrosynthesis scorer's `  1th epoch,` over its
# `   training loss: 1.60` and `   val loss: 1.26` lines)
_HEAD = lazy_re.compile(r"^(?:Learning\s+)?(?P<word>[Tt]imesteps?|[Ii]teration|[Ii]ter|[Ss]tep|"
                        r"[Uu]pdate|[Ee]poch|TIMESTEPS?|ITERATION|STEP|UPDATE|EPOCH)\s+(?P<n>\d+)"
                        r"(?:\s*/\s*(?P<total>\d+))?\s*$|"
                        r"^(?P<nth>\d+)(?:st|nd|rd|th)\s+(?P<nth_word>[Ee]poch|[Ii]teration|"
                        r"[Ss]tep|[Uu]pdate|EPOCH)\s*[,:.]?\s*$")
# `mean reward (100 episodes) -20.054054`, `episodes 74`, `learning_rate 0.000100`: words
# (a parenthesis may qualify them), then one number; rsl_rl's right-aligned `Mean total
# reward: 5.59`, `Iteration time: 11.63s` (a colon, a unit).
_MEMBER = lazy_re.compile(r"^(?P<name>[A-Za-z][\w./-]*(?::[A-Za-z]\w*)*"
                          r"(?: (?:[A-Za-z][\w.-]*|\([^()]{1,30}\)))"
                          r"{0,5}):?\s+(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|"
                          r"[-+]?(?:nan|NaN|inf|Inf))(?:s|ms|%)?\s*$")
# A line inside a block that is none of its figures: a rule (`-----`, `#####`), or a
# figure of several parts (`Computation: 17428 steps/s (collection: 7.554s, …)`).
_RULE = lazy_re.compile(r"^[-=#*~_]{3,}(?:\s+[-=#*~_]{3,})*$")
_LEAST_MEMBERS = 2


class CounterBlocks:
    """The block being read under its counter's head, and the names of a complete one."""

    def __init__(self) -> None:
        self._word: str | None = None  # the head's word (`Timestep`)
        self._step: int | None = None
        self._values: dict[str, float] = {}
        self._names: frozenset[str] | None = None  # the members of a block seen twice
        self._first: frozenset[str] | None = None  # the members of the first block
        self._read = False
        self._wrapped = False  # a line of the open block read as a wrapped figure's tail
        # The heads name their plan (`Learning iteration 3/300`): the shape is sure from
        # the first block, and the plan is the last head's total.
        self._sure = False
        self._total: int | None = None

    @property
    def open(self) -> bool:
        """Whether a block is being read: its members may repeat a line word for word
        (`learning_rate 0.000100` in every block), and each still counts."""
        return self._word is not None

    @property
    def unfinished(self) -> bool:
        """Whether a block headed by its plan holds figures not yet read as a record: the
        log ends inside it (a paste cut before the block's closing rule)."""
        return self._sure and self._word is not None and not self._read \
            and len(self._values) >= _LEAST_MEMBERS

    def wants(self, text: str) -> bool:
        """Whether the line may be a block's (cheap: no pattern)."""
        first = text.lstrip()[:1]
        return (first.isalpha() or (self._word is not None and first in "-=#*~_")
                or (first.isdigit() and "poch" in text)) and len(text) < 160

    def read(self, text: str) -> Parsed | bool | None:
        """A block's record when this line completes one; True when the line is a
        believed block's; None otherwise."""
        stripped = text.strip()
        head = _HEAD.match(stripped)
        if head is None and stripped[:1].isdigit():
            head = _HEAD.match(message(stripped))
        if head is not None:
            word = (head.group("word") or head.group("nth_word")).lower().rstrip("s")
            closed = self._close(word)
            self._word, self._step = word, int(head.group("n") or head.group("nth"))
            self._values, self._read, self._wrapped = {}, False, False
            if head.group("total") is not None and (
                    text.startswith("  ") or stripped.startswith("Learning")):
                # A head with its plan, centred on a line of its own, is this shape
                # already: its block is read from the first (not left to other readers,
                # which would take each figure for a record of its own). Not a plain
                # `epoch 13/15` at the line's start (a Spanish loop's `Época 13/15`, in
                # English), over lines of fields any reader reads.
                self._sure, self._total = True, int(head.group("total"))
            if closed is not None:
                return closed
            return True if self._names is not None or self._sure else None
        if self._word is None:
            return None
        member = _MEMBER.match(stripped)
        if member is None:
            if self._sure and _RULE.match(stripped) and not self._read \
                    and len(self._values) >= _LEAST_MEMBERS:
                # The rule under a sure block's figures (rsl_rl's `-----` before its
                # timings): the block's record, whether or not another head follows
                # (a log cut inside the next block, a run that stopped).
                self._read = True
                self._names = self._names or frozenset(self._values)
                return self._record()
            if self._sure and (_RULE.match(stripped) or ":" in stripped):
                return True  # the banner's rule, a figure of several parts
            if self._sure and not self._wrapped and not self._read:
                # One line of a sure block that reads as nothing: the tail of a figure
                # the terminal wrapped at its width (an issue's paste of rsl_rl's block:
                # `Computation: 14963 steps/s (collection: 6.407s, learning` and then
                # `0.163s)`). A second such line ends the block: other output.
                self._wrapped = True
                return True
            if _RULE.match(stripped) and not self._read:
                # a table's rule inside the block (`tabulate`'s `----   ----` under the
                # head, its `====` after the rows): the block goes on
                return True if self._names is not None else None
            self._word = None  # the block is over
            return None
        value = to_number(member.group("value"))
        if value is None:
            return None
        self._values.setdefault(normalise_key(member.group("name")), value)
        if self._names is None:
            return True if self._sure else None
        if not self._read and self._names <= self._values.keys():
            self._read = True
            return self._record()
        return True

    def _record(self) -> Parsed:
        """The open block's record: its figures at its head's step (or epoch), with the
        plan."""
        if self._word == "epoch":
            return Parsed("counter-block", epoch=float(self._step or 0),
                          total_epochs=self._total, metrics=dict(self._values))
        return Parsed("counter-block", self._step, self._total, metrics=dict(self._values))

    def _close(self, word: str) -> Parsed | None:
        """The block before a new head of the same word: the first one's names noted, and
        the block believed once the second one shares them."""
        if self._word != word or len(self._values) < _LEAST_MEMBERS:
            self._first = None if self._word != word else self._first
            if self._word == word and self._first is None and self._values:
                self._first = frozenset(self._values)
            return None
        names = frozenset(self._values)
        if self._names is None and self._sure:
            self._names = names
            return self._record()
        if self._names is None:
            if self._first is None:
                self._first = names
                return None
            if self._first <= names and (looks_like_metrics(self._values)
                                        or names_a_measure(self._values)):
                self._names = self._first
                return self._record()
            self._first = names
            return None
        if not self._read:
            return self._record()
        return None

"""Rows that lead with the loop's counter, then values and words, with no `=` or `:`.

A hand-written loop often prints its progress as a bare row: the counter first, then
what it measured, each value after the word that names it or after none:

- build-nanogpt's `log.txt` (karpathy/build-nanogpt, `train_gpt2.py`:
  `f.write(f"{step} train {loss_accum.item():.6f}\\n")`, likewise `val` and `hella`):
  `4767 train 11.574224`, `5000 val 5.5577`;
- the PyTorch char-RNN tutorial (pytorch/tutorials,
  `intermediate_source/char_rnn_classification_tutorial.py`: `print('%d %d%% (%s) %.4f
  %s / %s %s' % (iter, iter / n_iters * 100, timeSince(start), loss, line, guess,
  correct))`): `35000 35% (1m 4s) nan Nam / Russian ✗ (Korean)`.

No format knows them and they are no table (words stand among the numbers, and a
sample's text may follow). Read from the left: the first cell is the step; a percentage
right after it that the step divides into a whole plan (`5000 5%`: 100000) is the
run's progress, not a measure; an elapsed time (`(0m 12s)`, `12.3s`) is skipped; a word
names the value after it, and a value with no word before it is named by its column
(`col4`, as bare columns are). Reading stops at the first cell that fits none of these
(`Coelho / Portuguese ✓`: the sample, not a measure). A non-finite value (`nan`,
`-inf`) is a value like any other. A row needs a measure (a fraction or a non-finite
value: whole numbers alone are indices and sizes) and at most one unnamed value
(several are a table's row, named by its header).

The shape read (`# train #`, `# #% ~ #`) is what the caller checks came back before: a
row printed once is a remark, not a loop's record.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import normalise_key, to_number

# An elapsed time in brackets, `(0m 12s)`, `(1h 2m 3s)`, `(12.3s)`, or standing alone.
_ELAPSED = lazy_re.compile(r"\((?:\s*\d+(?:\.\d+)?\s*(?:ms|us|s|m|h|min|sec)\b)+\s*\)")
_TIME = lazy_re.compile(r"^\d+(?:\.\d+)?(?:ms|us|s|m|h)$|^\d+(?::\d\d){1,2}(?:\.\d+)?$")
_VALUE = lazy_re.compile(
    r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:nan|inf(?:inity)?)$", re.IGNORECASE)
_PERCENT = lazy_re.compile(r"^(\d+(?:\.\d+)?)%$")
_WORD = lazy_re.compile(r"^[A-Za-z][A-Za-z_./-]*$")
_MAX_CELLS = 24


def read_counter_row(line: str) -> tuple[str, Parsed] | None:
    """The shape of the row's leading part and what it says (its step, a plan its
    progress percentage gives, its values); None when the line does not lead with an
    integer counter followed by at least one value."""
    text = line.strip()
    if not text[:1].isdecimal():
        return None
    if "(" in text:
        text = _ELAPSED.sub(" ~ ", text)
    cells = text.split()[:_MAX_CELLS]
    if len(cells) < 2 or not cells[0].isdecimal():
        return None
    step = int(cells[0])
    target: int | None = None
    values: dict[str, float] = {}
    shape = ["#"]
    name: str | None = None  # the word waiting for its value
    for index, cell in enumerate(cells[1:], start=1):
        if name is None and (cell == "~" or _TIME.match(cell)):
            shape.append("~")
            continue
        percent = _PERCENT.match(cell)
        if percent is not None and name is None and not values and target is None:
            share = float(percent.group(1))
            if 0 < share <= 100 and share.is_integer() and step * 100 % int(share) == 0:
                target = step * 100 // int(share)
                shape.append("#%")
                continue
            break
        if _VALUE.match(cell):
            number = to_number(cell)
            if number is None:
                break
            key = normalise_key(name) if name is not None else f"col{index + 1}"
            values.setdefault(key, number)
            shape.extend((name, "#") if name is not None else ("#",))
            name = None
            continue
        if name is None and _WORD.match(cell):
            name = cell
            continue
        break
    unnamed = sum(1 for key in values if key.startswith("col"))
    measured = any(not number.is_integer() for number in values.values())
    if not measured or unnamed > 1:
        # Whole numbers only (YOLO's model summary, ` 25  -1  1  0  models.common.MP`) are
        # indices and sizes, not measures; several unnamed values are a table's row
        # (pandas' `1  1  0.0001  0.4978  …  True  False`), its names in its header.
        return None
    return " ".join(shape), Parsed("counter-row", step, target, metrics=values)

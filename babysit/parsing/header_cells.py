"""Table headers whose column names are several words, and the rules drawn around tables.

A rendered table names its columns as a person would: `Elapsed Time` in Turi Create's
boxed progress table (`| Iteration | Loss | Elapsed Time |`), `Dep Loss  NER Loss  Tag %`
in spaCy's aligned one, `Train Loss` in a PrettyTable or tabulate table. Split on single
spaces such a header has more words than its rows have cells; split where the columns
are (pipes, or two spaces and more) it has one name per cell. `shapes` asks this module
for those names when its own one-word split fails, and keeps the header the same way.

A rule (`+------+------+`, `|------|------|`, `======  =====`) draws a table's border or
separates its header from its rows: part of the table, saying nothing on its own.
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.text import normalise_key

_COLUMN_GAP = lazy_re.compile(r"\s{2,}|\t")
# One column's name: words with single spaces between them, each starting with a letter
# or a sign a unit is written with (`Tag %`, `NER P.`, `Loss (train)`).
# A bare `#` is a column of counts (spaCy 3's `E    #       LOSS TOK2VEC  LOSS NER …`).
# (a ratio's slash set apart, nolearn's `Train / Val`)
_NAME = lazy_re.compile(r"^[A-Za-z_][\w./@()\[\]:-]*(?: [A-Za-z_%#(/][\w./@%()\[\]:-]*)*$|^#$")
# Each segment ends at a `+` or `|`, so no line can be split into segments in two ways
# (a pattern that could would take exponential time on a long `=====…x`).
_RULE = lazy_re.compile(r"^\s*[+|]?(?:[-=]{3,}[+|])*[-=]{3,}[+|]?\s*$|^\s*=+(?:\s+=+)+\s*$")
_MAX_WORDS = 4
# A header is a row of names, not a sentence: a name has a few words, and a header with
# one name per line-worth of words is prose.
_PROSE = frozenset({"the", "a", "an", "is", "are", "was", "to", "of", "for", "in", "on",
                    "with", "and", "or", "from", "by", "at", "as", "be", "not", "no"})


def is_rule(line: str) -> bool:
    """Whether the line is a table's border or the rule under its header."""
    return _RULE.match(line) is not None


def multiword_names(line: str) -> tuple[str, tuple[str, ...]] | None:
    """The separator the table's rows use and its columns' names (`elapsed_time`,
    `ner_loss`, `tag_%`), when the line is a header with at least one name of several
    words; None for any other line (a sentence, a row of values, a one-word header)."""
    text = line.strip()
    if text.startswith("|") and text.endswith("|") and text.count("|") >= 3:
        sep, cells = "|", [c.strip() for c in text.strip("|").split("|")]
    elif text.count(" | ") >= 2:
        # (columns set apart by ` | ` with no border, as `shapes` splits them: nolearn's
        # `Epoch  |  Train loss  |  Valid loss  |  Train / Val  |  Valid acc  |  Dur`)
        # (or a border on one side only: pytorch-tabnet's `| EPOCH |  train  |   valid  |
        # total time (s)`, its rows `| 1     | -44154.26172 |  -1209990.25000 |   0.0`)
        sep, cells = "|", [c.strip() for c in text.strip("|").split("|")]
    else:
        sep, cells = " ", [c for c in _COLUMN_GAP.split(text) if c]
    names = delimited_names(cells)
    return (sep, names) if names is not None else None


def delimited_names(cells: list[str]) -> tuple[str, ...] | None:
    """The columns' names of a header already split into its cells (a rendered table's,
    or a CSV's: TensorBoard's scalar export, `Wall time,Step,Value`), when one name at
    least is several words; None where a cell is no name (a value, a sentence's piece, a
    message's `what():  CUDA error: …`)."""
    if not 2 <= len(cells) <= 40 or not any(" " in c for c in cells):
        return None
    for cell in cells:
        if cell.endswith(":") or ": " in cell:
            return None  # `what():  CUDA error: unknown error`: a message, not names
        words = cell.split(" ")
        if _NAME.match(cell) is None or len(words) > _MAX_WORDS \
                or any(w.lower() in _PROSE for w in words):
            return None
    return tuple(normalise_key(re.sub(r"\.$", "", c)) for c in cells)


def has_prose(words: list[str]) -> bool:
    """Whether a row of one-word cells holds a word of a sentence (`Saving model and
    feature extractor`): no table's header names a column `and`."""
    return any(word.lower() in _PROSE for word in words)

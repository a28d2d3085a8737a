"""Kaldi nnet3's training objective (C++; `src/nnet3/nnet-training.cc`).

`nnet3-train` (and `nnet3-chain-train`) logs the average objective of every phase of ten
minibatches, and of the whole job when it ends, as a `LOG` line naming the function that
printed it:

    LOG (nnet3-train[5.5]:PrintStatsForThisPhase():nnet-training.cc:121) Average objective
        function for 'output' for minibatches 40-49 is -35.0044 over 19538 frames.
    LOG (nnet3-train[5.5]:PrintTotalStats():nnet-training.cc:194) Overall average
        objective function for 'output' is -1.8213 over 2000000 frames.

(each one line, shown wrapped here). The objective is a log-likelihood per frame (for a
cross-entropy output the log-probability of the right class; for a chain output the
LF-MMI objective, also a log-probability), so higher is better and its negative is the
per-frame loss: read as `nll_per_frame` (35.0044 above), at the minibatches done (50).
The job's overall figure is the same measure over the whole job, at no step of its own.

A paste into an issue or a terminal of fixed width wraps such a line over two or three
(`… Average ` / `objective function for 'output' … is -35.0044 over ` / `19538 frames.`):
read a line at a time, the number is lost. `KaldiWrap` joins them back: a Kaldi `LOG`
line that starts an objective sentence and has not reached its `frames` is continued by
the lines after it, up to `_MAX_PIECES`, until one brings it.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import to_number

_NUM = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|-?inf)"
_PHASE = lazy_re.compile(
    rf"Average objective function for '(?P<output>[^']+)' for minibatches \d+-(?P<last>\d+) "
    rf"is (?P<value>{_NUM}) over")
_OVERALL = lazy_re.compile(
    rf"Overall average objective function for '(?P<output>[^']+)' is (?P<value>{_NUM}) over")
# The functions of nnet3's trainers that print the objective.
_PRINTERS = ("PrintStatsForThisPhase", "PrintTotalStats")
_MAX_PIECES = 3  # lines a wrapped objective sentence may continue over
_KEY = "nll_per_frame"


def parse_kaldi_objective(text: str) -> Parsed | None:
    """The loss per frame (the objective's negative) of an nnet3 trainer's phase or job,
    at the minibatches done for a phase."""
    if "objective function for '" not in text:
        return None
    found = _PHASE.search(text)
    overall = None if found is not None else _OVERALL.search(text)
    match = found or overall
    if match is None:
        return None
    value = to_number(match.group("value"))
    if value is None:
        return None
    key = _KEY if match.group("output") == "output" else f"{match.group('output')}/{_KEY}"
    step = int(found.group("last")) + 1 if found is not None else None
    return Parsed("kaldi", step, metrics={key: -value})


def _starts_objective(line: str) -> bool:
    """Whether a line is a Kaldi trainer's objective `LOG` line cut before its end."""
    return line.startswith("LOG (") and any(name in line for name in _PRINTERS) \
        and "frames" not in line


class KaldiWrap:
    """Joins Kaldi objective lines wrapped over several lines, within the lines it is
    given (one read of the log); a line cut by the end of a read keeps its pieces apart."""

    def __init__(self) -> None:
        self._seen = False  # a Kaldi trainer's line was read: look for wrapped ones

    def join(self, lines: list[str]) -> tuple[list[str], int]:
        """The lines with each wrapped objective line made one, and how many lines were
        joined into the one above them."""
        if not self._seen and not any(line.startswith("LOG (") for line in lines[:400]):
            return lines, 0
        self._seen = True
        out: list[str] = []
        joined = 0
        index = 0
        while index < len(lines):
            line = lines[index]
            index += 1
            if not _starts_objective(line):
                out.append(line)
                continue
            pieces = [line.rstrip()]
            ahead = lines[index:index + _MAX_PIECES]
            end = next((n for n, piece in enumerate(ahead) if "frames" in piece), None)
            if end is None or any(piece.startswith(("LOG (", "WARNING (", "ERROR (", "VLOG["))
                                  for piece in ahead[:end + 1]):
                out.append(line)
                continue
            pieces.extend(piece.strip() for piece in ahead[:end + 1])
            out.append(" ".join(pieces))
            joined += end + 1
            index += end + 1
        return out, joined

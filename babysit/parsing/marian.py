"""Marian NMT's training and validation lines (C++; `src/training/scheduler.h`).

Every `--disp-freq` updates Marian logs one line of ` : `-separated fields, the epoch and
the update first, then the sentences seen, the cost (with, since 1.9, `* <labels> after
<labels so far>`), the time and speed, and, when asked, the gradient norm and the
learning rate:

    [2019-03-25 14:51:54] Ep. 1 : Up. 1000 : Sen. 1,269,755 : Cost 7.95987511 : Time
        785.53s : 17289.59 words/s : L.r. 1.2500e-05
    [2021-05-26 23:22:42] Ep. 1 : Up. 500 : Sen. 15,203 : Cost 6.01253986 * 414,436
        after 414,436 : Time 609.91s : 679.50 words/s : gNorm 0.5432

and each validation metric on a line of its own, tagged `[valid]`:

    [2019-03-25 16:37:33] [valid] Ep. 1 : Up. 5000 : ce-mean-words : 5.21277 : new best

The update is the run's step; the cost its loss; a validation line is an evaluation's
(`valid/<metric>`), at the update it was run at.
"""

from __future__ import annotations

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import to_number

_NUM = r"[-+]?(?:\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|nan|-?inf)"
_TRAIN = lazy_re.compile(
    rf"\bEp\. (?P<ep>\d+) : Up\. (?P<up>\d+) : (?:Sen\. [\d,]+ : )?Cost (?P<cost>{_NUM})"
    rf"(?: \* [\d,]+(?: @ [\d,]+)? after [\d,]+)?(?: : Time (?P<time>{_NUM})s)?"
    rf"(?: : (?P<speed>{_NUM}) words/s)?(?: : gNorm (?P<gnorm>{_NUM}))?"
    rf"(?: : L\.r\. (?P<lr>{_NUM}))?")
_VALID = lazy_re.compile(
    rf"\[valid\] Ep\. (?P<ep>\d+) : Up\. (?P<up>\d+) : (?P<name>[\w.-]+) : (?P<value>{_NUM})\b")
# (`Time` is the seconds since the last such line: the speed says the same, per word.)
_FIELDS = (("cost", "loss"), ("speed", "words/s"), ("gnorm", "grad_norm"), ("lr", "lr"))


def parse_marian(text: str) -> Parsed | None:
    """The update, epoch and figures of a Marian training or validation line."""
    if "Ep. " not in text or " : Up. " not in text:
        return None
    valid = _VALID.search(text) if "[valid]" in text else None
    if valid is not None:
        value = to_number(valid.group("value"))
        if value is None:
            return None
        return Parsed("marian", int(valid.group("up")), epoch=float(valid.group("ep")),
                      metrics={f"valid/{valid.group('name')}": value})
    found = _TRAIN.search(text)
    if found is None:
        return None
    metrics = {}
    for group, name in _FIELDS:
        raw = found.group(group)
        number = to_number(raw.replace(",", "")) if raw is not None else None
        if number is not None:
            metrics[name] = number
    return Parsed("marian", int(found.group("up")), epoch=float(found.group("ep")),
                  metrics=metrics)

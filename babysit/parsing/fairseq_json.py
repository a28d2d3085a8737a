"""fairseq's `log_format: json` under hydra: a logger's prefix, then one JSON object per
line whose numbers are strings.

    [2022-06-06 09:18:44,886][train_inner][INFO] - {"epoch": 1, "update": 0.252,
        "loss": "0.264", "accuracy": "27.394", "lr": "1.099e-06", "gnorm": "0.149",
        "num_updates": "200", ...}
    [2022-06-06 09:20:28,960][valid][INFO] - {"epoch": 1, "valid_loss": "0.267",
        "valid_accuracy": "21.537", "valid_num_updates": "794", ...}

Or behind fairseq's own pipe-separated head (`2023-04-29 00:02:05 | INFO | train |
{"epoch": 1, "train_loss": "inf", …, "train_num_updates": "71", …}`, an epoch's summary).

The generic JSON reader wants a line that is only the object; the pipe reader of
fairseq's other formats wants `|` fields. Unread, a run's whole training and validation
history was invisible (its only records were the config dict's numbers). The step is
`num_updates` (`valid_num_updates` after a validation, `train_num_updates` after an
epoch's summary); the validation's own keys already carry `valid_`.
"""

from __future__ import annotations

import json
import math

from babysit.parsing.formats import Parsed
from babysit.parsing.text import normalise_key, number_from

# Bookkeeping fairseq prints beside the metrics: the position in the epoch, wall-clock
# times, batch shapes and rates, loss-scaler counters.
_NOT_METRICS = frozenset({"epoch", "update", "wall", "train_wall", "wpb", "bsz", "wps", "ups",
                          "oom", "clip", "gb_free", "ntokens", "nsentences", "sample_size",
                          "loss_scale"})
_STEP_KEYS = ("num_updates", "valid_num_updates", "train_num_updates")


def parse_fairseq_json(segment: str) -> Parsed | None:
    """A fairseq JSON log line (see the module's docstring), or None."""
    if "num_updates\": \"" not in segment:
        return None
    start = segment.find('{"')
    if start <= 0 or not segment.rstrip().endswith("}") \
            or ("][INFO] - " not in segment[:start] and " | INFO | " not in segment[:start]):
        return None
    try:
        obj = json.loads(segment[start:])
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    values: dict[str, float] = {}
    for key, value in obj.items():
        number = number_from(value)
        if number is not None:
            values[normalise_key(str(key))] = number
    step = next((values.pop(k) for k in _STEP_KEYS if k in values), None)
    if step is None or not math.isfinite(step):
        return None
    epoch = values.get("epoch")
    metrics = {k: v for k, v in values.items()
               if k.removeprefix("valid_").removeprefix("train_") not in _NOT_METRICS
               and not k.endswith(_STEP_KEYS)}
    return Parsed("fairseq", int(step), epoch=epoch, metrics=metrics)

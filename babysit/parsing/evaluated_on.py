"""A measure said of the model on a split, in a sentence.

PyTorch's CIFAR-10 tutorial, and the loops grown from it, end on `Accuracy of the network
on the 10000 test images: 54 %`: the test split's accuracy, named by a phrase that no
`name: value` reading turns into a metric (`accuracy_of_the_network_on_the_10000_…`).
The measure, the split named after `on`, and the figure make the metric (`test_accuracy`
54), whatever the model is called (network, model, net, classifier) and whatever the
items are (images, samples, examples, sentences).
"""

from __future__ import annotations

import re

from babysit import lazy_re
from babysit.parsing.formats import Parsed
from babysit.parsing.text import normalise_key, to_number

_SAID = lazy_re.compile(
    r"^\W*(?:[A-Z]{3,8}\s*[:-]?\s+)?(?P<measure>accuracy|acc|error(?: rate)?|loss|"
    r"f1(?: score)?|precision|recall|auc|"
    r"top-?[15] accuracy)\s+of\s+(?:the|our|my)\s+(?:\w+\s+){0,2}?(?:network|model|net|"
    r"classifier|cnn|mlp)\s+on\s+(?:the\s+)?(?:[\d,]+\s+)?(?P<split>test|testing|validation|"
    r"val|dev|train|training)\b[\w ]{0,30}?:\s*(?P<value>[-+]?\d+(?:\.\d+)?)\s*(?P<pct>%)?\s*$",
    re.IGNORECASE)
_SPLITS = {"testing": "test", "validation": "val", "dev": "val", "training": "train"}


def parse_evaluated_on(segment: str) -> Parsed | None:
    if " on " not in segment or ":" not in segment or " of " not in segment:
        return None
    match = _SAID.match(segment.strip())
    if match is None:
        return None
    value = to_number(match.group("value"))
    if value is None:
        return None
    split = match.group("split").lower()
    split = _SPLITS.get(split, split)
    return Parsed("evaluated-on", metrics={f"{split}_{normalise_key(match.group('measure'))}":
                                           value})

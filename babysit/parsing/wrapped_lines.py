"""Lines a log service wrapped in JSON, unwrapped to what the run printed.

A Kaggle kernel's log is a JSON array, one element a line: `[{"stream_name":"stdout",
"time":3.50,"data":"[setup] CatBoost 1.2.10\\n"}`, then `,{"stream_name":"stderr",…}`.
Docker's json-file driver writes `{"log":"epoch 3 loss 0.41\\n","stream":"stdout",
"time":"2024-05-01T10:00:00Z"}`. Read as they stand, no line says anything: every one is
the same object of three fields. Unwrapped, each is the run's own line (its text may hold
several, or a bar's redraws after `\\r`), and the rest of babysit reads it as it would.
"""

from __future__ import annotations

import json

from babysit import lazy_re

# An element of such a log: an object whose stream is named, opening the line (after the
# array's `[` or the separating `,`).
_WRAPPED = lazy_re.compile(r'^\s*[\[,]?\s*(\{"(?:stream(?:_name)?|log|data|time)".*\})'
                           r'\s*[\],]?\s*$')
_TEXT_KEYS = ("data", "log")
_MAX_LINE = 1 << 20  # a wrapped line longer than this is left as it stands


def may_be_wrapped(line: str) -> bool:
    """A cheap test first: most lines are not JSON objects at all."""
    head = line[:3].lstrip()
    return head[:1] in "[,{" and '{"' in line[:4] and '"stream' in line


def unwrapped(line: str) -> list[str] | None:
    """The run's own lines a wrapped line holds (its bar's redraws split at `\\r`), or
    None when the line is no such wrapper."""
    if len(line) > _MAX_LINE:
        return None
    match = _WRAPPED.match(line)
    if match is None:
        return None
    try:
        element = json.loads(match.group(1))
    except ValueError:
        return None
    if not isinstance(element, dict) or not any(
            key in element for key in ("stream", "stream_name")):
        return None
    text = next((value for key in _TEXT_KEYS if isinstance(value := element.get(key), str)),
                None)
    if not isinstance(text, str):
        return None
    parts: list[str] = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


def unwrap_all(lines: list[str]) -> list[str]:
    """The lines with each wrapped one replaced by the lines it holds."""
    if not any(may_be_wrapped(line) for line in lines[:64]):
        return lines
    out: list[str] = []
    for line in lines:
        inner = unwrapped(line) if may_be_wrapped(line) else None
        if inner is None:
            out.append(line)
        else:
            out.extend(inner)
    return out

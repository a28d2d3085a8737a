"""Keep terminal control out of everything babysit prints, writes or sends.

The scrubber's sibling (babysit/redact.py keeps secrets in; this keeps the terminal
safe): text from outside — log lines, run, metric, tag, job and event names, file names,
Kubernetes messages, trace names — can carry escape sequences (OSC 52 writes the
clipboard, OSC 0 sets the title, CSI 2J clears the screen), their 8-bit C1 forms
(0x9B is CSI, 0x9D is OSC), bare control characters and bidirectional overrides
(which make a terminal show text in another order than it is). A newline inside a name
would forge a line of babysit's own output (`t.log\\nDecision: GO`).

`sanitise` removes the sequences and shows every other control character escaped
(`\\n`, `\\x07`, `\\u202e`), so nothing from outside moves the cursor, starts a line or
reorders text, and what was there stays visible. `outbound` and `outbound_value` apply
both passes, sanitiser then scrubber, in the one place each way out calls them.
"""

from __future__ import annotations

import re
from typing import TypeVar

from babysit import lazy_re
from babysit.redact import map_strings, scrub

# Escape sequences, 7-bit (ESC …) and 8-bit (C1) forms. A sequence cut short by the end
# of the text is removed too: what follows it would be swallowed by a terminal anyway.
_SEQUENCES = lazy_re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves, clear-screen
    # OSC, DCS, SOS, PM, APC: strings up to ST (ESC \ or 0x9C) or BEL.
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"  # the other escapes: ESC c (reset), ESC 7, ESC ( B
)
# Controls left once the sequences are gone: C0, DEL, C1, line and paragraph
# separators, and the bidirectional embeddings, overrides and isolates.
_CONTROLS = lazy_re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHOWN = {"\n": "\\n", "\r": "\\r", "\t": " "}


def _show(match: re.Match[str]) -> str:
    char = match.group(0)
    shown = _SHOWN.get(char)
    if shown is not None:
        return shown
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def sanitise(text: str) -> str:
    """`text` safe for a terminal: escape sequences removed, every other control
    character (newlines too) shown escaped. Text without any is returned as is."""
    if text.isprintable():  # the common case: nothing to do (controls are not printable)
        return text
    if "\x1b" in text or any("\x90" <= c <= "\x9f" for c in text):
        text = _SEQUENCES.sub("", text)
    return _CONTROLS.sub(_show, text)


def outbound(text: str) -> str:
    """Text from outside, as it may leave babysit: sanitised, then scrubbed (a secret
    split by an escape sequence is whole again when the scrubber sees it)."""
    return scrub(sanitise(text))


T = TypeVar("T")


def outbound_value(value: T) -> T:
    """`outbound` applied to every string inside `value`: strings, mappings, sequences
    and frozen dataclasses (rebuilt, never mutated). Numbers and enums pass untouched."""
    return map_strings(value, outbound)

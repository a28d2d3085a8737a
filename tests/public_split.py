"""Which public logs are sealed: kept out of development and scored once, at the end.

The rule was fixed (and committed) on 2026-12-01, before the logs collected for issue 23
existed and before any work on the reader began: a log is sealed when the SHA-256 of
this salt and its file name falls in the first third of the hash space. The logs that
were already in the corpus before that day shaped the parsers, so they are never
sealed: a score on them measures memory, not generalisation.
"""

from __future__ import annotations

import hashlib

SALT = "babysit-sealed-split-2026-12-01:"


def is_sealed(file_name: str) -> bool:
    digest = hashlib.sha256((SALT + file_name).encode()).digest()
    return int.from_bytes(digest[:8], "big") % 3 == 0

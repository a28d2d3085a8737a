"""Keep secrets out of everything babysit prints or writes.

Command lines and environments of training runs carry API keys and tokens
(`--hf-token hf_…`, `WANDB_API_KEY=…`). Anything shown to a person or stored in the
artifact goes through `redact_argv` first."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

_SECRET_NAME = re.compile(r"(?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|"
                          r"credential|auth|private[_-]?key|\bkey\b)", re.IGNORECASE)
_MASK = "REDACTED"


def is_secret_name(name: str) -> bool:
    return _SECRET_NAME.search(name) is not None


def redact_argv(argv: Sequence[str]) -> list[str]:
    """Mask values of secret-looking flags (`--token X`, `--token=X`) and assignments
    (`API_KEY=X`)."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(_MASK)
            mask_next = False
            continue
        name, sep, _ = arg.partition("=")
        if sep and is_secret_name(name):
            out.append(f"{name}={_MASK}")
        elif arg.startswith("-") and is_secret_name(arg):
            out.append(arg)
            mask_next = True
        else:
            out.append(arg)
    return out


def redacted_command(argv: Sequence[str]) -> str:
    return shlex.join(redact_argv(argv))

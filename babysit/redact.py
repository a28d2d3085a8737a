"""Keep secrets out of everything babysit prints, writes or sends.

One scrubber for every way out — the console, JSON lines, the artifact, notifications,
the reviewer's packet, error messages — and for command lines shown to people. Log lines
and command lines of training runs carry tokens (`--hf-token hf_…`, `WANDB_API_KEY=…`,
`Authorization: Bearer …`, `https://user:pw@host`); none of them may leave.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

MASK = "REDACTED"

_SECRET_NAME = re.compile(r"(?:token|secret|passw(?:or)?d|passphrase|\bpwd\b|api[_-]?key|"
                          r"access[_-]?key|credential|auth|bearer|private[_-]?key|\bkey\b)",
                          re.IGNORECASE)
# Flags that take a secret without saying so in their name.
_SECRET_FLAGS = frozenset({"-k", "-p", "--pwd", "--pass", "--bearer", "--passphrase"})

# Secrets that give themselves away by their shape, wherever they appear.
_TOKEN_SHAPES = (
    r"\bhf_[A-Za-z0-9]{12,}",  # Hugging Face
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bglpat-[A-Za-z0-9_\-]{16,}",  # GitLab
    r"\bxox[abprs]-[A-Za-z0-9\-]{8,}",  # Slack
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bAIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"\bya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access tokens
    r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWTs
)
_SHAPES = re.compile("|".join(f"(?:{shape})" for shape in _TOKEN_SHAPES))
_SCRUB = re.compile(
    # Credentials in a URL: `scheme://user:password@host`.
    r"(?P<url>\b[a-z][a-z0-9+.\-]*://)(?P<user>[^\s/:@]+):(?P<pw>[^\s/@]+)@"
    # `NAME=value`, `name: value`, `"name": "value"`: scrubbed when the name says secret.
    r"|(?P<name>[A-Za-z_][\w.\-]*)(?P<sep>[\"']?\s*[=:]\s*[\"']?)(?!//)"
    r"(?P<value>(?:Bearer\s+|Basic\s+|token\s+)?[^\s\"',;}]+)"
    # `Bearer xyz` on its own.
    r"|(?P<scheme>\b(?:Bearer|Basic))\s+(?P<bearer>[A-Za-z0-9._~+/=\-]{8,})"
    r"|(?P<shape>" + _SHAPES.pattern + ")",
)
# Words that make a name secret when they are a whole part of it (`HF_TOKEN`,
# `db.password`, `auth-key`), not when they are only inside one (`num_tokens`).
_SECRET_PARTS = frozenset({"token", "secret", "password", "passwd", "passphrase", "pwd",
                           "apikey", "credential", "credentials", "auth", "authorization",
                           "bearer", "privatekey", "accesskey", "secretkey"})
_PAIRS = ("api", "access", "private", "secret")


def _secret_name(name: str) -> bool:
    parts = [p for p in re.split(r"[_.\-]", name.lower()) if p]
    if any(p in _SECRET_PARTS for p in parts):
        return True
    return any(a in _PAIRS and b == "key" for a, b in itertools.pairwise(parts))


def _replace(match: re.Match[str]) -> str:
    if match.group("url") is not None:
        return f"{match.group('url')}{match.group('user')}:{MASK}@"
    if match.group("name") is not None:
        value = match.group("value")
        if not _secret_name(match.group("name")):
            # Not secret by name; its value may still hold a URL or a token.
            return f"{match.group('name')}{match.group('sep')}{scrub(value)}"
        if value.lower() in ("none", "null", "false", "true", "0", "''", '""') or \
                value.startswith(MASK):
            return match.group(0)
        return f"{match.group('name')}{match.group('sep')}{MASK}"
    if match.group("bearer") is not None:
        return f"{match.group('scheme')} {MASK}"
    return MASK


def scrub(text: str) -> str:
    """The text with everything that looks like a credential replaced by REDACTED."""
    if not text:
        return text
    return _SCRUB.sub(_replace, text)


T = TypeVar("T")


def scrub_value(value: T) -> T:
    """Every string inside `value` scrubbed: strings, mappings, sequences and frozen
    dataclasses (rebuilt, never mutated). Numbers and enums pass untouched."""
    return _scrub_any(value)  # type: ignore[no-any-return]


def _scrub_any(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value) if type(value) is str else value  # enums are left alone
    if isinstance(value, Mapping):
        return {_scrub_any(k): _scrub_any(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_scrub_any(v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _scrub_any(getattr(value, f.name)) for f in dataclasses.fields(value)
                   if f.init}
        return dataclasses.replace(value, **changes)
    return value


def is_secret_name(name: str) -> bool:
    return _SECRET_NAME.search(name) is not None


def redact_argv(argv: Sequence[str]) -> list[str]:
    """Mask values of secret-looking flags (`--token X`, `--token=X`, `-k X`),
    assignments (`API_KEY=X`), and arguments that are secrets by their shape."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        name, sep, _ = arg.partition("=")
        if sep and (is_secret_name(name) or name in _SECRET_FLAGS):
            out.append(f"{name}={MASK}")
        elif arg.startswith("-") and (is_secret_name(arg) or arg in _SECRET_FLAGS):
            out.append(arg)
            mask_next = True
        else:
            out.append(scrub(arg))
    return out


def redacted_command(argv: Sequence[str]) -> str:
    return shlex.join(redact_argv(argv))

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
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from babysit import lazy_re

MASK = "REDACTED"

_SECRET_NAME = lazy_re.compile(r"(?:token|secret|passw(?:or)?d|passphrase|\bpwd\b|api[_-]?key|"
                               r"access[_-]?key|credential|auth|bearer|private[_-]?key|\bkey\b)",
                               re.IGNORECASE)
# Flags that take a secret without saying so in their name.
_SECRET_FLAGS = frozenset({"-k", "-p", "--pwd", "--pass", "--bearer", "--passphrase"})

# Secrets that give themselves away by their shape, wherever they appear.
# Each starts where no letter or digit stands before it: `run_hf_…` is still a token.
_TOKEN_SHAPES = (
    r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{12,}",  # Hugging Face
    r"(?<![A-Za-z0-9])sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic
    r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub
    r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}",
    r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_\-]{16,}",  # GitLab
    r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9\-]{8,}",  # Slack
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"(?<![A-Za-z0-9])ya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access tokens
    r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWTs
)
_SHAPES = lazy_re.compile("|".join(f"(?:{shape})" for shape in _TOKEN_SHAPES))
# The value after a name; a backslash is part of it unless it escapes a quote (JSON
# escaped inside a line: `{\\"password\\": \\"x\\"}`).
_BARE_VALUE = r"(?:[^\s\"',;}\\]|\\(?![\"']))+"
_SCRUB = lazy_re.compile(
    # A PEM private key block, on one line or several (within one text), or cut short.
    r"(?P<pem>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z))"
    # Credentials in a URL: `scheme://user:password@host` (Redis's `redis://:pw@host`
    # has no user); the password may hold `@` or `/`, so it runs to the last `@` of the URL.
    r"|(?P<url>(?<![A-Za-z0-9+.\-])[a-z][a-z0-9+.\-]*://)(?P<user>[^\s/:@]*(?:@[^\s/:@]+)?):"
    r"(?P<pw>[^\s@]*(?:@[^\s@]*)*?)@(?=[^\s@]*(?:[\s\"'<>]|\Z))"
    # `NAME=value`, `name: value`, `"name": "value"`, `\\"name\\": \\"value\\"`: scrubbed
    # when the name says secret. A quoted value runs to its closing quote (the other
    # quote is part of it: `password: "abc'def"`).
    # Names and schemes start where a run of name characters starts: tried at every
    # position inside one, each try ran to the run's end (quadratic on `x.y-z_` * 8000).
    r"|(?P<name>(?<![\w.\-])-*[A-Za-z_][\w.\-]*)(?P<sep>\\?[\"']?\s*[=:]\s*)(?!//)"
    r"(?:(?P<quote>\\?[\"'])(?P<quoted>(?:(?!(?P=quote))[^\n]){0,2000}?)(?P=quote)"
    r"|(?P<value>\\?[\"']?(?:(?i:bearer|basic|token)\s+)?" + _BARE_VALUE + r"))"
    # `Bearer xyz` on its own, in any letter case.
    r"|(?P<scheme>\b(?i:bearer|basic))\s+(?P<bearer>(?=[A-Za-z0-9._~+/=\-]*[\d._~+/=\-])"
    r"[A-Za-z0-9._~+/=\-]{8,})"
    r"|(?P<shape>" + _SHAPES.pattern + ")"
    # A long run of base64 (a PEM body line, an account key) in mixed case with digits.
    r"|(?P<blob>(?<![\w+/=])[A-Za-z0-9+/]{40,}={0,2}(?![\w+/=]))",
)
# A secret name, then spaces, then the secret: `aws_secret_access_key wJalr…`,
# `--wandb_key 3f…`, `Authorization: Token abc…`. Only a value that looks made (digits
# and letters, 8 or more) is taken, so `password incorrect` keeps its words.
_SPACED = lazy_re.compile(
    r"(?P<name>(?<![\w.\-])[A-Za-z_\-][\w.\-]*)(?P<sep>[ \t]+)"
    r"(?P<value>(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9+/=_.~\-]{8,})")
# Words that make a name secret when they are a whole part of it (`HF_TOKEN`,
# `db.password`, `auth-key`, `AccountKey`), not when they are only inside one
# (`num_tokens`).
_SECRET_PARTS = frozenset({"token", "secret", "password", "passwd", "passphrase", "pwd",
                           "apikey", "credential", "credentials", "auth", "authorization",
                           "bearer", "privatekey", "accesskey", "secretkey", "sig",
                           "signature", "accountkey", "sas"})
_PAIRS = ("api", "access", "private", "secret", "account", "shared", "sas")
_CAMEL = lazy_re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _secret_name(name: str, value: str = "") -> bool:
    """Whether `name` names a secret (its `value`, when known, decides the weak names)."""
    parts = [p for p in re.split(r"[_.\-]", _CAMEL.sub("_", name).lower()) if p]
    if any(p in _SECRET_PARTS or p.endswith(_GLUED) for p in parts):
        return True
    # `wandb_key`, `openai-key`: a name ending in `key` names one; `key_metrics` does not.
    if len(parts) > 1 and parts[-1] == "key" and parts[-2] not in _NOT_SECRET_KEYS:
        return True
    if any(a in _PAIRS and b == "key" for a, b in itertools.pairwise(parts)):
        return True
    return (bool(parts) and (parts[-1] in _WEAK or parts[-1].endswith("key"))
            and (len(parts) < 2 or parts[-2] not in _NOT_SECRET_KEYS) and _made(value))


# A secret word glued to what it is for, in one word (`PGPASSWORD`, `HFTOKEN`,
# `GITHUBTOKEN`, `ACCESSTOKEN`): a part ending in it (`num_tokens` ends in `tokens`).
_GLUED = ("password", "passwd", "passphrase", "token", "secret", "apikey", "accesskey",
          "secretkey")
# Names that hold a secret only when their value looks made (letters and digits, 8 or
# more): `key` alone (`wandb.login(key='3f…')`, yet `key=val_loss` names a metric), a
# word ending in it (`WANDBKEY`), `pass` (`DB_PASS=…`, yet PaddlePaddle's `Pass=49`
# counts passes) and `login` (`wandb login 3f…`, yet `login=alice`).
_WEAK = frozenset({"key", "pass", "login"})
_MADE = lazy_re.compile(r"(?=[^\d]*\d)(?=[^A-Za-z]*[A-Za-z])[A-Za-z0-9+/=_.~\-]{8,}")


def _made(value: str) -> bool:
    return _MADE.fullmatch(value.strip("\\\"'")) is not None


# `sort_key`, `primary_key`, `metric_key`: keys that hold no secret.
_NOT_SECRET_KEYS = frozenset({"sort", "primary", "foreign", "metric", "monitor", "group",
                              "partition", "cache", "dict", "hash", "public", "lookup"})


def _replace(match: re.Match[str]) -> str:
    if match.group("pem") is not None:
        return MASK  # not the BEGIN line again: a second pass would mask what follows
    if match.group("url") is not None:
        return f"{match.group('url')}{match.group('user')}:{MASK}@"
    if match.group("quoted") is not None:
        quote, name = match.group("quote"), _SHAPES.sub(MASK, match.group("name"))
        if not _secret_name(match.group("name"), match.group("quoted")):
            return f"{name}{match.group('sep')}{quote}" \
                   f"{_scrub_inner(match.group('quoted'))}{quote}"
        if _not_a_secret(match.group("quoted")):
            return f"{name}{match.group('sep')}{quote}{match.group('quoted')}{quote}"
        return f"{name}{match.group('sep')}{quote}{MASK}{quote}"
    if match.group("blob") is not None:
        return MASK if _looks_made(match.group("blob")) else match.group(0)
    if match.group("name") is not None:
        value = match.group("value")
        name = _SHAPES.sub(MASK, match.group("name"))  # a token may stand where a name does
        if not _secret_name(match.group("name"), value):
            # Not secret by name; its value may still hold a URL or a token.
            return f"{name}{match.group('sep')}{_scrub_inner(value)}"
        if _not_a_secret(value.lstrip("\\\"'")):
            return f"{name}{match.group('sep')}{value}"
        return f"{name}{match.group('sep')}{MASK}"
    if match.group("bearer") is not None:
        return f"{match.group('scheme')} {MASK}"
    return MASK


def _not_a_secret(value: str) -> bool:
    return value.lower() in ("", "none", "null", "false", "true", "0", "''", '""') or \
        value.startswith(MASK)


def _looks_made(blob: str) -> bool:
    """Base64 of a key (upper, lower and digits), not a path (slashes every few
    letters) nor a hex digest (one letter case)."""
    return (any(c.isupper() for c in blob) and any(c.islower() for c in blob)
            and any(c.isdecimal() for c in blob) and blob.count("/") * 16 <= len(blob))


def _replace_spaced(match: re.Match[str]) -> str:
    if not _secret_name(match.group("name").lstrip("-"), match.group("value")):
        return match.group(0)
    return f"{match.group('name')}{match.group('sep')}{MASK}"


def scrub(text: str) -> str:
    """The text with everything that looks like a credential replaced by REDACTED."""
    if not text:
        return text
    text = _SCRUB.sub(_replace, text)
    return _SPACED.sub(_replace_spaced, text)


# A value is scrubbed again inside (`a=b=token=x`); so deep a nesting is no text a
# person wrote, and it is masked whole rather than recursed into without end.
_MAX_NESTING = 8
_nesting = 0


def _scrub_inner(value: str) -> str:
    global _nesting
    if _nesting >= _MAX_NESTING:
        return MASK
    _nesting += 1
    try:
        return _SCRUB.sub(_replace, value)
    finally:
        _nesting -= 1


def clip(text: str, limit: int) -> str:
    """`text` scrubbed, then cut to `limit` characters: scrubbing a cut would leave a
    fragment of a secret that no pattern matches any more."""
    return scrub(text)[:limit]


T = TypeVar("T")


def scrub_value(value: T) -> T:
    """Every string inside `value` scrubbed: strings, mappings, sequences and frozen
    dataclasses (rebuilt, never mutated). Numbers and enums pass untouched."""
    return map_strings(value, scrub)


def map_strings(value: T, change: Callable[[str], str]) -> T:
    """`change` applied to every string inside `value` (the walk `scrub_value` and
    `sanitise.outbound_value` share)."""
    return _map_any(value, change)  # type: ignore[no-any-return]


def _map_any(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value) if type(value) is str else value  # enums are left alone
    if isinstance(value, Mapping):
        changed: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = _map_any(key, change)
            if new_key in changed:  # two metrics named by tokens: both kept, numbered
                new_key = next(f"{new_key} ({n})" for n in itertools.count(2)
                               if f"{new_key} ({n})" not in changed)
            changed[new_key] = _map_any(item, change)
        return changed
    if isinstance(value, (list, tuple)):
        items = [_map_any(v, change) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _map_any(getattr(value, f.name), change)
                   for f in dataclasses.fields(value) if f.init}
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
        name, sep, value = arg.partition("=")
        if sep and (is_secret_name(name) or _secret_name(name.lstrip("-"), value)
                    or name in _SECRET_FLAGS):
            out.append(f"{name}={MASK}")
        elif arg.startswith("-") and (is_secret_name(arg) or _secret_name(arg.lstrip("-"))
                                      or arg in _SECRET_FLAGS):
            out.append(arg)
            mask_next = True
        else:
            out.append(scrub(arg))
    return out


def redacted_command(argv: Sequence[str]) -> str:
    """A command line for people: each argument redacted, then the line scrubbed whole (a
    secret may be split over arguments: `-H 'Authorization:' Bearer xyz`)."""
    return scrub(shlex.join(redact_argv(argv)))

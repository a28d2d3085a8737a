"""The dashboard's token: the one a user gives (`--token-file`) or, by default, one made
for this user in the runtime directory. A token is required on loopback too: on a shared
machine every local user can connect to 127.0.0.1, and the page holds the run's data."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from babysit.safe_files import UnsafeFile, read_regular

MAX_TOKEN_FILE_BYTES = 4096
MIN_TOKEN_CHARS = 16


def read_token_file(path: Path) -> str:
    """The token in `path`. Raises UnsafeFile when the file is not a small regular file
    of ours that only we can read (refused, as ssh refuses an open private key: a token
    others can read protects nothing), is not UTF-8, or the token is too short or holds
    spaces or control characters."""
    data = read_regular(path, MAX_TOKEN_FILE_BYTES, follow=True, private=True)
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError as error:
        raise UnsafeFile(f"{path} is not UTF-8 text") from error
    if len(token) < MIN_TOKEN_CHARS:
        raise UnsafeFile(f"the token in {path} must be at least {MIN_TOKEN_CHARS} characters")
    if not all("!" <= c <= "~" for c in token):
        raise UnsafeFile(f"the token in {path} must be printable ASCII without spaces")
    return token


def own_token(directory: Path) -> str:
    """This user's dashboard token, `directory/token`, made (0600, 256 random bits) the
    first time. Raises UnsafeFile when the file there is not one we can trust."""
    path = directory / "token"
    if os.path.lexists(path):
        return read_token_file(path)
    token = secrets.token_urlsafe(32)
    try:
        # Written whole under another name, then linked: a second session starting at
        # the same moment reads the first one's token, never half of it.
        fd, temp = tempfile.mkstemp(prefix=".token.", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(token + "\n")
            os.link(temp, path)
        finally:
            os.unlink(temp)
    except FileExistsError:
        return read_token_file(path)
    except OSError as error:
        raise UnsafeFile(f"cannot create {path}: {error.strerror or error}") from error
    return token

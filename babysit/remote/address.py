"""Parsing `user@host:/path`, `host:path` and `ssh://user@host:port/path`."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from babysit import lazy_re


@dataclass(frozen=True)
class RemoteAddress:
    host: str  # as written: an ssh-config alias or a real name
    path: str  # on the remote host; relative paths start at the login directory
    user: str | None = None
    port: int | None = None

    def display(self) -> str:
        """`user@host` or `host`, the prefix of every line babysit prints."""
        return f"{self.user}@{self.host}" if self.user else self.host


class AddressError(ValueError):
    pass


_SCP_LIKE = lazy_re.compile(r"^(?:(?P<user>[^@/:\s]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[\w.\-]+):"
                            r"(?P<path>.*)$")


def check_ssh_name(text: str, what: str = "host") -> str:
    """A host or user name as it will be handed to ssh: never something ssh would take
    for an option (`-oProxyCommand=…`, `-v`), nor one with spaces or control
    characters. Raises AddressError."""
    if not text or text.startswith("-") or any(c.isspace() or not c.isprintable()
                                               for c in text):
        raise AddressError(f"{text!r} is not a {what} name (a {what} may not begin with "
                           f"'-', nor hold spaces or control characters)")
    return text


def parse_remote(text: str) -> RemoteAddress:
    """Raises AddressError with a message naming the expected forms."""
    if text.startswith("ssh://"):
        parts = urlsplit(text)
        if not parts.hostname or not parts.path or parts.path == "/":
            raise AddressError(f"{text!r}: expected ssh://[user@]host[:port]/path/to/log")
        try:
            port = parts.port
        except ValueError as error:
            raise AddressError(f"{text!r}: bad port") from error
        path = unquote(parts.path)
        if path.startswith("/~/"):
            path = path[3:]
        user = unquote(parts.username or "") or None
        check_ssh_name(parts.hostname)
        if user is not None:
            check_ssh_name(user, "user")
        return RemoteAddress(parts.hostname, path, user, port)
    match = _SCP_LIKE.match(text)
    if match is None or not match.group("path"):
        raise AddressError(f"{text!r}: expected user@host:/path/to/log, host:path or "
                           f"ssh://user@host:port/path")
    host = check_ssh_name(match.group("host").strip("[]"))
    if match.group("user") is not None:
        check_ssh_name(match.group("user"), "user")
    return RemoteAddress(host, match.group("path"), match.group("user"), None)


def sftp_path(path: str) -> str:
    """SFTP does not expand `~`: `~/runs/x.log` is `runs/x.log` from the login dir."""
    if path == "~":
        return "."
    if path.startswith("~/"):
        return path[2:]
    return path

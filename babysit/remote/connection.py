"""One persistent SSH connection (paramiko) per babysitting session.

It honours ~/.ssh/config (HostName, User, Port, IdentityFile, ProxyJump,
UserKnownHostsFile), keys and the agent; verifies host keys against known_hosts and
refuses unknown ones unless asked to trust on first use (`accept_new`, like OpenSSH's
StrictHostKeyChecking=accept-new); a changed key is always refused. Failures are
sorted into what no retry can fix (`SshFatal`: authentication, host keys) and what
may pass (`SshUnavailable`: refused, timed out, dropped, unresolvable). Remote
commands are argv lists, quoted for the remote shell with `shlex.join`.
"""

from __future__ import annotations

import contextlib
import getpass
import logging
import os
import select
import shlex
import socket
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import paramiko

from babysit.remote.address import RemoteAddress, parse_remote

# paramiko's transport thread logs its own tracebacks (a missing banner, a reset link);
# babysit reports every such failure itself, in words, so they stay out of the terminal.
_PARAMIKO_LOG = logging.getLogger("paramiko")
_PARAMIKO_LOG.addHandler(logging.NullHandler())
_PARAMIKO_LOG.propagate = False


class SshError(Exception):
    pass


class SshFatal(SshError):
    """No retry will help: wrong credentials, an unknown or changed host key."""


class SshUnavailable(SshError):
    """The host cannot be reached right now: worth trying again later."""


@dataclass(frozen=True)
class SshSettings:
    accept_new: bool = False
    config_path: str = "~/.ssh/config"
    known_hosts: str = "~/.ssh/known_hosts"
    connect_timeout: float = 10.0
    keepalive_seconds: int = 15


class _AcceptNew(paramiko.MissingHostKeyPolicy):
    """Trust an unknown host on first use and remember it, as OpenSSH's
    StrictHostKeyChecking=accept-new does. A *changed* key never gets here: paramiko
    raises BadHostKeyException for it."""

    def __init__(self, known_hosts: Path) -> None:
        self.known_hosts = known_hosts
        self.added: list[str] = []

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str,
                         key: paramiko.PKey) -> None:
        client.get_host_keys().add(hostname, key.get_name(), key)
        self.known_hosts.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        line = paramiko.hostkeys.HostKeyEntry([hostname], key).to_line()
        if line:
            with self.known_hosts.open("a", encoding="utf-8") as handle:
                handle.write(line)
        self.added.append(f"{hostname} {key.get_name()} {key.fingerprint}")


class SshConnection:
    def __init__(self, address: RemoteAddress, settings: SshSettings | None = None) -> None:
        self.address = address
        self.settings = settings or SshSettings()
        config = _lookup(self.settings.config_path, address.host)
        self.hostname = str(config.get("hostname", address.host))
        self.user = address.user or str(config.get("user") or getpass.getuser())
        self.port = address.port or int(config.get("port", 22))
        self._identity_files = [os.path.expanduser(p) for p in config.get("identityfile", [])]
        self._proxy_jump = config.get("proxyjump")
        known = config.get("userknownhostsfile")
        self._known_hosts = [Path(os.path.expanduser(p)) for p in
                             (str(known).split() if known else [self.settings.known_hosts])]
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._jump: SshConnection | None = None
        self.connects = 0  # connections opened in this session (1 unless the link dropped)
        self.trusted_new: list[str] = []
        self._skew = 0.0

    @property
    def where(self) -> str:
        port = f":{self.port}" if self.port != 22 else ""
        return f"{self.user}@{self.hostname}{port}"

    # --- connecting ---------------------------------------------------------------

    def ensure(self) -> paramiko.Transport:
        """The live transport, connecting first if there is none."""
        if self._client is not None:
            transport = self._client.get_transport()
            if transport is not None and transport.is_active():
                return transport
            self.drop()
        self._connect()
        assert self._client is not None
        transport = self._client.get_transport()
        assert transport is not None
        return transport

    def _connect(self) -> None:
        client = paramiko.SSHClient()
        for path in self._known_hosts:
            if path.is_file():
                client.load_host_keys(str(path))
        policy: paramiko.MissingHostKeyPolicy = paramiko.RejectPolicy()
        if self.settings.accept_new:
            policy = _AcceptNew(self._known_hosts[0])
        client.set_missing_host_key_policy(policy)
        sock = self._proxy_socket() if self._proxy_jump else None
        keys = [p for p in self._identity_files if os.path.isfile(p)]
        try:
            client.connect(
                self.hostname, port=self.port, username=self.user,
                # paramiko takes a list here too; its type stubs say str only.
                key_filename=cast(Any, keys or None), allow_agent=True, look_for_keys=True,
                timeout=self.settings.connect_timeout,
                banner_timeout=self.settings.connect_timeout,
                auth_timeout=self.settings.connect_timeout,
                channel_timeout=self.settings.connect_timeout, sock=sock,
            )
        except Exception as error:
            client.close()
            raise self._explain(error) from error
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(self.settings.keepalive_seconds)
            # Small request/response messages: without this, Nagle's algorithm and the
            # peer's delayed ACK add ~40 ms to every round trip.
            raw = transport.sock
            if isinstance(raw, socket.socket):  # not when tunnelled through a jump host
                with contextlib.suppress(OSError):
                    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._client = client
        self.connects += 1
        if isinstance(policy, _AcceptNew):
            self.trusted_new.extend(policy.added)
        self._skew = self._measure_skew()

    def _proxy_socket(self) -> paramiko.Channel:
        """A channel through the ProxyJump host to the target's SSH port."""
        self._jump = SshConnection(jump_address(str(self._proxy_jump)), self.settings)
        transport = self._jump.ensure()
        try:
            return transport.open_channel("direct-tcpip", (self.hostname, self.port),
                                          ("127.0.0.1", 0),
                                          timeout=self.settings.connect_timeout)
        except Exception as error:
            raise SshUnavailable(f"the jump host {self._jump.where} could not open a "
                                 f"connection to {self.hostname}:{self.port}: {error}") from error

    def _explain(self, error: Exception) -> SshError:
        where = self.where
        known = ", ".join(str(p) for p in self._known_hosts)
        if isinstance(error, paramiko.BadHostKeyException):
            return SshFatal(
                f"the host key of {self.hostname} has CHANGED since it was recorded in "
                f"{known}: this can be a man-in-the-middle attack. babysit refuses to "
                f"connect (not even --ssh-accept-new overrides this). If the host was "
                f"really reinstalled, remove its old key (ssh-keygen -R {self.hostname}) "
                f"and verify the new one.")
        if isinstance(error, paramiko.SSHException) and "not found in known_hosts" in str(error):
            port = f"-p {self.port} " if self.port != 22 else ""
            return SshFatal(
                f"{self.hostname} is not a known host (no key for it in {known}). Verify its "
                f"key and add it — `ssh-keyscan {port}{self.hostname} >> {known.split(',')[0]}` "
                f"after checking the fingerprint, or connect once with `ssh "
                f"{self.address.display()}` — or pass --ssh-accept-new to trust it on first "
                f"use.")
        if isinstance(error, paramiko.PasswordRequiredException):
            return SshFatal(f"authentication to {where} needs the passphrase of an encrypted "
                            f"key: load it into ssh-agent (ssh-add) so babysit can use it")
        if isinstance(error, paramiko.AuthenticationException):
            files = ", ".join(self._identity_files) or "~/.ssh/id_*"
            return SshFatal(
                f"authentication to {where} failed: check that your public key ({files}, or "
                f"one in ssh-agent) is in the remote ~/.ssh/authorized_keys and that `ssh "
                f"{self.address.display()}` works without a password (babysit never asks "
                f"for passwords)")
        if isinstance(error, socket.gaierror):
            return SshUnavailable(f"cannot resolve the host name {self.hostname!r} (DNS): "
                                  f"{error.strerror or error}")
        if isinstance(error, paramiko.ssh_exception.NoValidConnectionsError):
            causes = list(error.errors.values())
            if causes and all(isinstance(c, ConnectionRefusedError) for c in causes):
                error = ConnectionRefusedError()
        if isinstance(error, ConnectionRefusedError):
            return SshUnavailable(f"connection to {self.hostname}:{self.port} refused (is sshd "
                                  f"running there, on that port?)")
        if isinstance(error, paramiko.SSHException) and (
                "protocol banner" in str(error) or "No existing session" in str(error)):
            return SshUnavailable(f"no SSH banner from {self.hostname}:{self.port} within "
                                  f"{self.settings.connect_timeout:g}s (something answers on "
                                  f"that port, but not an SSH server that is ready)")
        if isinstance(error, (socket.timeout, TimeoutError)):
            return SshUnavailable(f"connection to {self.hostname}:{self.port} timed out")
        if isinstance(error, SshError):
            return error
        return SshUnavailable(f"connection to {self.hostname}:{self.port} failed: "
                              f"{type(error).__name__}: {error}")

    def drop(self) -> None:
        """Forget a dead connection (the next `ensure` opens a new one)."""
        if self._sftp is not None:
            with contextlib.suppress(Exception):
                self._sftp.close()
            self._sftp = None
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
            self._client = None
        if self._jump is not None:
            self._jump.drop()
            self._jump = None

    close = drop

    # --- using it -------------------------------------------------------------------

    def sftp(self) -> paramiko.SFTPClient:
        self.ensure()
        if self._sftp is None:
            assert self._client is not None
            try:
                self._sftp = self._client.open_sftp()
            except Exception as error:
                raise SshUnavailable(f"SFTP is not available on {self.where}: {error}") from error
        return self._sftp

    def run(self, argv: Sequence[str], timeout: float = 20.0) -> tuple[int, bytes, bytes]:
        """Run a command on the remote host: each argument quoted for its shell.
        Returns (exit status, stdout, stderr); raises SshUnavailable on link failure."""
        channel = self._channel(argv, timeout)
        try:
            return _collect(channel, timeout)
        except (OSError, EOFError, paramiko.SSHException) as error:
            raise self._dropped(error) from error
        finally:
            channel.close()

    def stream(self, argv: Sequence[str], timeout: float = 600.0) -> Iterator[bytes]:
        """Lines of a remote command's stdout as they come; closing the iterator
        closes the channel (which stops the command)."""
        channel = self._channel(argv, timeout)
        handle = channel.makefile("rb")
        try:
            yield from handle
        except (OSError, EOFError, paramiko.SSHException) as error:
            raise self._dropped(error) from error
        finally:
            handle.close()
            channel.close()

    def _channel(self, argv: Sequence[str], timeout: float) -> paramiko.Channel:
        transport = self.ensure()
        try:
            channel = transport.open_session(timeout=self.settings.connect_timeout)
            channel.settimeout(timeout)
            channel.exec_command(shlex.join(argv))
        except (OSError, EOFError, paramiko.SSHException) as error:
            self.drop()
            raise self._dropped(error) from error
        return channel

    def _dropped(self, error: BaseException) -> SshUnavailable:
        return SshUnavailable(f"the connection to {self.where} dropped: {_text(error)}")

    def now(self) -> float:
        """Wall time on the remote host (local time corrected by the measured skew)."""
        return time.time() + self._skew

    def _measure_skew(self) -> float:
        with contextlib.suppress(SshError, ValueError):
            before = time.time()
            status, out, _ = self.run(["date", "+%s"], timeout=5)
            if status == 0:
                return float(out.strip()) - (before + time.time()) / 2
        return 0.0


def _text(error: BaseException) -> str:
    """An exception as words, even when it carries none (EOFError())."""
    return str(error) or type(error).__name__


class SshCommandTimeout(SshError):
    """A remote command ran past its timeout (it was abandoned, the link is fine)."""


def _collect(channel: paramiko.Channel, timeout: float) -> tuple[int, bytes, bytes]:
    """Read stdout and stderr together (reading one to its end first can deadlock when
    the other fills its window), then the exit status."""
    out: list[bytes] = []
    err: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        while channel.recv_ready():
            out.append(channel.recv(65536))
        while channel.recv_stderr_ready():
            err.append(channel.recv_stderr(65536))
        if channel.exit_status_ready() or channel.closed:
            break
        if time.monotonic() > deadline:
            raise SshCommandTimeout(f"a remote command did not finish in {timeout:g}s")
        # Set when the exit status arrives; data in between is drained each round.
        channel.status_event.wait(0.002)
    status = channel.recv_exit_status()
    while not channel.eof_received and time.monotonic() < deadline:
        if channel.recv_ready() or channel.recv_stderr_ready():
            break
        select.select([channel], [], [], 0.002)
    for receive, sink in ((channel.recv, out), (channel.recv_stderr, err)):
        while True:
            chunk = receive(65536) if (channel.recv_ready() if sink is out
                                       else channel.recv_stderr_ready()) else b""
            if not chunk:
                break
            sink.append(chunk)
    return status, b"".join(out), b"".join(err)


def jump_address(proxy_jump: str) -> RemoteAddress:
    """The first hop of a ProxyJump value: `host`, `user@host`, `user@host:port` or
    `ssh://user@host:port`. (Further hops of a chain are that host's own business.)"""
    hop = proxy_jump.split(",")[0].strip()
    if hop.startswith("ssh://"):
        return parse_remote(hop.rstrip("/") + "/.")
    user, _, rest = hop.rpartition("@")
    host, _, port = rest.partition(":")
    try:
        return RemoteAddress(host, ".", user or None, int(port) if port else None)
    except ValueError as error:
        raise SshFatal(f"cannot read the ProxyJump value {proxy_jump!r}") from error


def _lookup(config_path: str, host: str) -> dict[str, Any]:
    path = os.path.expanduser(config_path)
    if not os.path.isfile(path):
        return {}
    try:
        config = paramiko.SSHConfig.from_path(path)
    except Exception as error:  # a malformed config is the user's to fix; say where
        raise SshFatal(f"cannot read the SSH config {path}: {error}") from error
    found: dict[str, Any] = dict(config.lookup(host))
    return found

"""A real OpenSSH server on loopback for the remote tests: its own host key, a test
user key, and a HOME with its own ~/.ssh, so no test touches the user's."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

FAKES = Path(__file__).parents[1] / "fakes"
SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Sshd:
    root: Path
    home: Path
    port: int
    user: str
    config: Path
    host_key: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def alias(self) -> str:
        return "babysit-test"

    def start(self) -> None:
        self.proc = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(self.config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            assert time.monotonic() < deadline, "sshd did not start"
            time.sleep(0.05)

    def kill(self) -> None:
        """Stop the server and every session it forked: the link really drops."""
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.proc = None
        subprocess.run(["pkill", "-KILL", "-f", f"sshd.*{self.config}"], check=False)
        # Forked session processes re-exec as "sshd: user@..." and are found by port owner.
        subprocess.run(["fuser", "-k", "-n", "tcp", str(self.port)], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def known_hosts_line(self) -> str:
        key = (self.host_key.with_suffix(".pub")).read_text().split()
        return f"[127.0.0.1]:{self.port} {key[0]} {key[1]}\n"


def make_server(root: Path, env: Mapping[str, str] | None = None) -> Sshd:
    """An sshd on a free loopback port with its own host key, a user key for the
    current user, and a HOME whose ~/.ssh/config names it `babysit-test`. `env` adds
    variables to every session (sshd honours only its first SetEnv line, so they join
    it)."""
    assert SSHD is not None
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    host_key = root / "host_ed25519"
    user_key = home / ".ssh" / "id_test"
    for key in (host_key, user_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                       check=True)
    authorized = root / "authorized_keys"
    authorized.write_text(user_key.with_suffix(".pub").read_text())
    authorized.chmod(0o600)
    port = _free_port()
    extra = "".join(f" {name}={value}" for name, value in (env or {}).items())
    config = root / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {authorized}\nPidFile {root / 'sshd.pid'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nStrictModes no\n"
        "UsePAM no\nSubsystem sftp internal-sftp\nAllowTcpForwarding yes\n"
        "LogLevel ERROR\nMaxStartups 100\nMaxSessions 100\n"
        # Remote sessions find the fake nvidia-smi first, reading these two files.
        f"SetEnv PATH={FAKES}:/usr/local/bin:/usr/bin:/bin "
        f"FAKE_NVIDIA_SMI_GPUS={root / 'gpus.csv'} FAKE_NVIDIA_SMI_APPS={root / 'apps.csv'}"
        f"{extra}\n")
    (root / "gpus.csv").write_text("")
    (root / "apps.csv").write_text("")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)
    server = Sshd(root, home, port, getpass.getuser(), config, host_key)
    (home / ".ssh" / "config").write_text(
        f"Host {server.alias}\n  HostName 127.0.0.1\n  Port {port}\n  User {server.user}\n"
        f"  IdentityFile {user_key}\n")
    (home / ".ssh" / "known_hosts").write_text(server.known_hosts_line())
    return server


@pytest.fixture(scope="session")
def sshd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    if SSHD is None:
        pytest.skip("OpenSSH server (sshd) is not installed; .ci/run installs openssh-server")
    server = make_server(tmp_path_factory.mktemp("sshd"))
    server.start()
    yield server
    server.kill()


@pytest.fixture
def ssh_home(sshd_server: Sshd, monkeypatch: pytest.MonkeyPatch) -> Sshd:
    """HOME (and so ~/.ssh) pointing at the test's own; no agent."""
    monkeypatch.setenv("HOME", str(sshd_server.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    if sshd_server.proc is None:
        sshd_server.start()
    known = sshd_server.home / ".ssh" / "known_hosts"
    known.write_text(sshd_server.known_hosts_line())
    return sshd_server

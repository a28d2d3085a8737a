"""RemoteLogTarget against a real OpenSSH server on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from babysit.remote.address import parse_remote
from babysit.targets.base import TargetError, TargetUnavailable
from tests.conftest import append
from tests.remote.conftest import Sshd

if TYPE_CHECKING:
    from babysit.targets.common.ssh_log import RemoteLogTarget


def target(server: Sshd, path: Path | str, **settings) -> RemoteLogTarget:
    # paramiko is imported here, not when every worker collects this module (~0.4 CPU s).
    from babysit.remote.connection import SshSettings
    from babysit.targets.common.ssh_log import RemoteLogTarget

    text = f"{server.alias}:{path}"
    return RemoteLogTarget(text, parse_remote(text), settings=SshSettings(**settings))


def steps(snapshot) -> list[int]:
    return [r.step for r in snapshot.log.records if r.step is not None]


def test_appended_lines_arrive_on_the_next_poll_over_one_connection(ssh_home: Sshd,
                                                                    tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\nstep=2 loss=1.9\n")
    remote = target(ssh_home, log)
    first = remote.poll()
    assert steps(first) == [1, 2]
    assert any("SSH connection 1 of this session" in n for n in first.notices)
    for step in range(3, 8):
        append(log, f"step={step} loss=1.8\n")
        assert steps(remote.poll()) == [step]
    assert remote.connection.connects == 1
    remote.close()


def test_rotation_and_truncation_on_the_remote_host(ssh_home: Sshd, tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\n")
    remote = target(ssh_home, log)
    remote.poll()
    append(log, "step=2 loss=1.9\n")
    log.rename(tmp_path / "train.log.1")
    log.write_text("step=3 loss=1.8\n")
    rotated = remote.poll()
    assert steps(rotated) == [2, 3] and any("rotated" in n for n in rotated.notices)
    log.write_text("step=4 loss=1\n")  # same file, truncated and rewritten (shorter)
    truncated = remote.poll()
    assert steps(truncated) == [4] and any("truncated" in n for n in truncated.notices)
    remote.close()


def test_server_killed_mid_run_is_connectivity_then_resumes_without_loss_or_duplicates(
        ssh_home: Sshd, tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\n")
    remote = target(ssh_home, log)
    assert steps(remote.poll()) == [1]
    append(log, "step=2 loss=1.9\nstep=3 lo")  # a half-written line, pending
    assert steps(remote.poll()) == [2]
    ssh_home.kill()
    append(log, "ss=1.8\nstep=4 loss=1.7\n")
    with pytest.raises(TargetUnavailable, match="unreachable"):
        remote.poll()
    with pytest.raises(TargetUnavailable, match="refused"):
        remote.poll()
    ssh_home.start()
    append(log, "step=5 loss=1.6\n")
    resumed = remote.poll()
    assert steps(resumed) == [3, 4, 5]
    assert any("reconnected" in n and "SSH connection 2" in n for n in resumed.notices)
    remote.close()


def test_unknown_host_key_is_refused_with_what_to_do(ssh_home: Sshd, tmp_path: Path):
    (ssh_home.home / ".ssh" / "known_hosts").write_text("")
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2\n")
    with pytest.raises(TargetError) as refused:
        target(ssh_home, log)
    message = str(refused.value)
    assert "not a known host" in message and "--ssh-accept-new" in message
    assert "ssh-keyscan" in message


def test_accept_new_trusts_on_first_use_and_records_the_key(ssh_home: Sshd, tmp_path: Path):
    known = ssh_home.home / ".ssh" / "known_hosts"
    known.write_text("")
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2\n")
    remote = target(ssh_home, log, accept_new=True)
    assert any("trusted a new host key" in n for n in remote.poll().notices)
    remote.close()
    assert f"[127.0.0.1]:{ssh_home.port}" in known.read_text()
    target(ssh_home, log).close()  # now known: no flag needed


def test_changed_host_key_is_refused_even_with_accept_new(ssh_home: Sshd, tmp_path: Path):
    other = tmp_path / "other_key"
    import subprocess

    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kind, blob = other.with_suffix(".pub").read_text().split()[:2]
    (ssh_home.home / ".ssh" / "known_hosts").write_text(
        f"[127.0.0.1]:{ssh_home.port} {kind} {blob}\n")
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2\n")
    with pytest.raises(TargetError, match="CHANGED"):
        target(ssh_home, log, accept_new=True)


def test_auth_failure_names_what_to_check(ssh_home: Sshd, tmp_path: Path):
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2\n")
    stranger = tmp_path / "stranger"
    import subprocess

    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)],
                   check=True)
    text = f"{ssh_home.user}@127.0.0.1:{log}"
    config = ssh_home.home / ".ssh" / "config"
    original = config.read_text()
    config.write_text(f"Host 127.0.0.1\n  Port {ssh_home.port}\n  IdentityFile {stranger}\n"
                      f"  IdentitiesOnly yes\n")
    from babysit.remote.connection import SshSettings
    from babysit.targets.common.ssh_log import RemoteLogTarget

    try:
        with pytest.raises(TargetError, match=r"authentication to .* failed.*authorized_keys"):
            RemoteLogTarget(text, parse_remote(text), settings=SshSettings())
    finally:
        config.write_text(original)


def test_missing_remote_log_is_a_target_error(ssh_home: Sshd, tmp_path: Path):
    with pytest.raises(TargetError, match="remote log not found"):
        target(ssh_home, tmp_path / "nope.log")


@pytest.mark.parametrize("name", ["'; touch PWNED; echo '", "with space.log", 'q"uote.log',
                                  "$(touch PWNED).log", "`touch PWNED`.log", "-rf.log"])
def test_hostile_path_names_are_read_safely_never_executed(ssh_home: Sshd, tmp_path: Path,
                                                           name: str):
    folder = tmp_path / "runs"
    folder.mkdir()
    log = folder / name
    log.write_text("step=1 loss=2.0\n")
    remote = target(ssh_home, log)
    assert steps(remote.poll()) == [1]
    log.rename(folder / "old")  # forces the identity (stat) command to run on the name
    log.write_text("step=2 loss=1.9 lr=1\n")
    assert steps(remote.poll()) == [2]
    remote.close()
    assert not list(tmp_path.rglob("PWNED")) and not list(ssh_home.home.rglob("PWNED"))


def _ssh_cmd(server: Sshd) -> str:
    config = server.home / ".ssh" / "config"
    known = server.home / ".ssh" / "known_hosts"
    return f"ssh -F {config} -o UserKnownHostsFile={known}"


@pytest.mark.parametrize("name", ["train.log", "with space (2).log", "'; touch PWNED #.log"])
def test_tail_remote_script_prints_the_last_lines(ssh_home: Sshd, tmp_path: Path, name: str):
    import os
    import subprocess

    log = tmp_path / name
    log.write_text("".join(f"step={s} loss=1\n" for s in range(1, 201)))
    script = Path(__file__).parents[2] / "scripts" / "tail-remote.sh"
    done = subprocess.run(["bash", str(script), ssh_home.alias, str(log), "3"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "BABYSIT_SSH": _ssh_cmd(ssh_home)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["step=198 loss=1", "step=199 loss=1", "step=200 loss=1"]
    assert not list(tmp_path.rglob("PWNED")) and not list(ssh_home.home.rglob("PWNED"))


def test_tail_remote_script_says_error_for_a_missing_file(ssh_home: Sshd, tmp_path: Path):
    import os
    import subprocess

    script = Path(__file__).parents[2] / "scripts" / "tail-remote.sh"
    done = subprocess.run(["bash", str(script), ssh_home.alias, str(tmp_path / "nope.log")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "BABYSIT_SSH": _ssh_cmd(ssh_home)})
    assert done.returncode == 4
    assert done.stdout.startswith("[ERROR] no such file")


def test_proxyjump_from_ssh_config_is_honoured(ssh_home: Sshd, tmp_path: Path):
    """Jump through the test server to itself, as ~/.ssh/config's ProxyJump says."""
    config = ssh_home.home / ".ssh" / "config"
    original = config.read_text()
    config.write_text(original + f"Host jumped\n  HostName 127.0.0.1\n  Port {ssh_home.port}\n"
                       f"  User {ssh_home.user}\n  IdentityFile {ssh_home.home}/.ssh/id_test\n"
                       f"  ProxyJump {ssh_home.alias}\n")
    log = tmp_path / "train.log"
    log.write_text("step=1 loss=2.0\n")
    from babysit.targets.common.ssh_log import RemoteLogTarget

    try:
        text = f"jumped:{log}"
        remote = RemoteLogTarget(text, parse_remote(text))
        assert steps(remote.poll()) == [1]
        assert remote.connection._jump is not None
        remote.close()
    finally:
        config.write_text(original)


@pytest.mark.parametrize("value, expected", [
    ("bastion", ("bastion", None, None)),
    ("me@bastion:2200", ("bastion", "me", 2200)),
    ("ssh://me@bastion:2200", ("bastion", "me", 2200)),
    ("me@bastion,other", ("bastion", "me", None)),
])
def test_proxyjump_values(value: str, expected):
    from babysit.remote.connection import jump_address

    address = jump_address(value)
    assert (address.host, address.user, address.port) == expected

"""Target strings for remote logs."""

from __future__ import annotations

import pytest

from babysit.remote.address import AddressError, RemoteAddress, parse_remote, sftp_path


@pytest.mark.parametrize("text, expected", [
    ("user@gpu-box:/home/me/runs/gpt2/train.log",
     RemoteAddress("gpu-box", "/home/me/runs/gpt2/train.log", "user")),
    ("gpu-box:runs/train.log", RemoteAddress("gpu-box", "runs/train.log")),
    ("me@gpu-box:~/runs/train.log", RemoteAddress("gpu-box", "~/runs/train.log", "me")),
    ("ssh://me@10.0.0.5:2222/data/train.log", RemoteAddress("10.0.0.5", "/data/train.log",
                                                            "me", 2222)),
    ("ssh://gpu-box/data/x%20y.log", RemoteAddress("gpu-box", "/data/x y.log")),
    ("me@[::1]:/data/train.log", RemoteAddress("::1", "/data/train.log", "me")),
])
def test_remote_target_forms(text: str, expected: RemoteAddress):
    assert parse_remote(text) == expected


@pytest.mark.parametrize("text", ["gpu-box:", "ssh://gpu-box", "ssh://gpu-box:99999/x", "/x"])
def test_malformed_remote_targets_are_refused_with_the_expected_forms(text: str):
    with pytest.raises(AddressError, match=r"expected|port"):
        parse_remote(text)


def test_prefix_shows_user_at_host():
    assert parse_remote("me@gpu-box:/x").display() == "me@gpu-box"
    assert parse_remote("gpu-box:x").display() == "gpu-box"


def test_tilde_becomes_relative_to_the_login_directory_for_sftp():
    assert sftp_path("~/runs/x.log") == "runs/x.log"
    assert sftp_path("/abs/x.log") == "/abs/x.log"

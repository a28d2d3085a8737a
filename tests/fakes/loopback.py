"""Keep a test's own process on loopback: any connection elsewhere fails at once and is
recorded, so a test that would reach a real cloud service fails instead."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest


def only_loopback(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Patch socket.connect for the test; returns the list of refused addresses."""
    leaks: list[Any] = []
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0]
            try:
                loopback = ipaddress.ip_address(host).is_loopback
            except ValueError:
                loopback = host == "localhost"
            if not loopback:
                leaks.append(address)
                raise OSError(f"test tried to reach {address} (only loopback is allowed)")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return leaks

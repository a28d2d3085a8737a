"""Reading a container's log a little at a time against the kubelet's own rules (the
fake's `kubelet_log`), with the node's clock and babysit's apart."""

from __future__ import annotations

import pytest

from babysit.targets.k8s.logs import ContainerLog
from tests.fakes.k8s_api import kubelet_log

_S = 1_000_000_000
_T = 1_800_000_000 * _S  # some moment, in the node's clock


def _read(reader: ContainerLog, written: list[tuple[int, str]], node_now: int,
          babysit_now: int) -> list[str]:
    query = reader.query(babysit_now)
    asked = {"timestamps": "True", **{
        {"tail_lines": "tailLines", "since_seconds": "sinceSeconds"}[k]: str(v)
        for k, v in query.items()}}
    text = kubelet_log([w for w in written if w[0] <= node_now], asked, node_now).decode()
    lines, _ = reader.take(text, capped=False, now_ns=babysit_now)
    return [line for _, line in lines]


@pytest.mark.parametrize("node_ahead_s", [0, 3, 8, -20])
def test_a_node_clock_apart_from_babysits_loses_and_repeats_no_line(node_ahead_s: int):
    """A line a second, read every 30 s (babysit's clock); the node stamps and counts
    `sinceSeconds` by its own clock, some seconds ahead or behind."""
    written = [(_T + n * _S, f"Step {n}") for n in range(200)]
    reader = ContainerLog()
    taken: list[str] = []
    for poll in range(6):
        node_now = _T + (10 + 30 * poll) * _S
        taken += _read(reader, written, node_now, node_now - node_ahead_s * _S)
    assert taken == [f"Step {n}" for n in range(161)]

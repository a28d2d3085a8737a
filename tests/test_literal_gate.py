"""The literal gate in front of babysit's patterns (babysit/literal_gate.py): what it
requires of a line is a necessary condition of a match, never a guess, on every pattern
babysit defines."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import babysit
from babysit import lazy_re
from babysit.literal_gate import gate, required_literals


@pytest.mark.parametrize(("pattern", "flags", "needed"), [
    (r"CUDA out of memory|torch\.(?:cuda\.)?OutOfMemoryError", 0,
     {"CUDA out of memory", "torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"}),
    (r"[Ee]arly stopping (?:triggered|activated)", 0,
     {f"{e}arly stopping {w}" for e in "Ee" for w in ("triggered", "activated")}),
    (r"colou?r", 0, {"color", "colour"}),
    (r"\bstep (\d+) of (\d+)\b", 0, {"step ", " of "}),  # either run will do
    # A lookahead looks at the line's text: what it needs, the line has.
    (r"^(?=.*\bconverged\b)(?=.*\bstop)", 0, {"converged"}),
    (r"^(?!.*error).*saved", 0, {"saved"}),  # what a negative lookahead refuses, nothing
])
def test_a_pattern_needs_its_literal_text(pattern: str, flags: int, needed: set[str]):
    found = required_literals(pattern, flags)
    assert found is not None
    if pattern.startswith(r"\bstep"):
        assert found in ({"step "}, {" of "})
    else:
        assert found == needed


@pytest.mark.parametrize(("pattern", "flags"), [
    (r"early stopping", re.IGNORECASE),  # case folding is the engine's, not str's
    (r"(?i)early stopping", 0),
    (r"(?i:early) stopping", 0),  # the part that is sure (` stopping`) would do, but
    (r"\d+\s\d+", 0),  # digits and a space: nothing literal
    (r"(\w)\1", 0),
    (r"x?y?", 0),  # matches the empty string
])
def test_nothing_is_required_where_the_text_is_not_known(pattern: str, flags: int):
    found = required_literals(pattern, flags)
    if pattern == r"(?i:early) stopping":
        assert found == {" stopping"}
    else:
        assert found is None


def test_a_line_without_the_text_is_answered_before_the_pattern_runs():
    passes = gate(r"NCCL (?:error|timeout)|ProcessGroupNCCL")
    assert passes is not None
    assert passes("Watchdog: ProcessGroupNCCL timed out")
    assert not passes("epoch 3 loss 0.51 acc 0.88")
    pattern = lazy_re.compile(r"NCCL (?:error|timeout)|ProcessGroupNCCL")
    assert pattern.search("epoch 3 loss 0.51") is None
    match = pattern.search("[rank0] NCCL error: unhandled system error")
    assert match is not None and match.group(0) == "NCCL error"
    assert pattern.match("NCCL timeout", 0) is not None
    assert pattern.fullmatch("NCCL timeout!") is None


def _every_pattern() -> list[lazy_re.LazyPattern[str]]:
    for module in pkgutil.walk_packages(babysit.__path__, "babysit."):
        if not module.name.endswith("__main__"):
            try:
                importlib.import_module(module.name)
            except ImportError:  # a service's client this install lacks
                continue
    return sorted((p for p in lazy_re.MADE if isinstance(p._source, str)),
                  key=lambda p: (p._source, p._flags))


_PATTERNS = _every_pattern()


def test_most_of_babysits_patterns_have_a_gate():
    gated = [p for p in _PATTERNS if gate(p._source, p._flags) is not None]
    assert len(_PATTERNS) > 300
    assert len(gated) > len(_PATTERNS) / 3


@pytest.mark.parametrize("pattern", [p for p in _PATTERNS if gate(p._source, p._flags)],
                         ids=lambda p: p._source[:60])
@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_line_a_pattern_matches_passes_its_gate(
        pattern: lazy_re.LazyPattern[str], data: st.DataObject):
    compiled = re.compile(pattern._source, pattern._flags)
    try:
        strategy = st.from_regex(compiled)
        line = data.draw(strategy)
    except InvalidArgument:  # a construct hypothesis cannot generate from
        return
    passes = gate(pattern._source, pattern._flags)
    assert passes is not None
    assert compiled.search(line) is None or passes(line), line

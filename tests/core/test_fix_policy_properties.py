"""Property test: whatever sequence of situations the run goes through, the pure fix
policy never oversteps its bounds."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from babysit.core.fix_policy import (
    NEEDS_APPROVAL,
    Cause,
    FixHistory,
    FixVerdict,
    Situation,
    decide_fixes,
)
from babysit.model import AnomalyType, FixKind

situations = st.builds(
    Situation,
    crashed=st.booleans(),
    cause=st.sampled_from(list(Cause)),
    cause_text=st.just("x"),
    hung=st.booleans(),
    process_alive=st.booleans(),
    leftover_gpu_mib=st.sampled_from([0.0, 512.0]),
    restart_known=st.booleans(),
    step=st.one_of(st.none(), st.integers(0, 50)),
    checkpoint=st.sampled_from([None, "ckpt-10"]),
    open_problems=st.frozensets(st.sampled_from([AnomalyType.NAN_INF, AnomalyType.DIVERGENCE,
                                                 AnomalyType.OOM, AnomalyType.LOSS_SPIKE])),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(situations, min_size=1, max_size=40), st.booleans())
def test_policy_never_exceeds_its_bounds(sequence: list[Situation], fix_enabled: bool):
    applied: Counter[FixKind] = Counter()
    restarted, last_restart_step = False, None
    proposed: set[FixKind] = set()
    for situation in sequence:
        history = FixHistory(dict(applied), last_restart_step, restarted, frozenset(proposed))
        for decision in decide_fixes(situation, history, fix_enabled=fix_enabled):
            if decision.verdict is FixVerdict.ASK:
                assert decision.kind in NEEDS_APPROVAL
                assert decision.kind not in proposed  # each proposed once
                assert situation.process_alive
                proposed.add(decision.kind)
                continue
            if decision.verdict is not FixVerdict.APPLY:
                assert decision.reason
                continue
            kind = decision.kind
            assert fix_enabled, "nothing is ever applied with --no-fix"
            assert kind not in NEEDS_APPROVAL, "approval-gated fixes are never applied"
            assert applied[kind] < 3, "at most three of each kind"
            if kind in (FixKind.RESTART, FixKind.RESTART_HUNG):
                assert situation.restart_known
                if kind is FixKind.RESTART:
                    assert situation.cause is Cause.TRANSIENT and situation.crashed
                else:
                    assert situation.hung and situation.process_alive
                if restarted:
                    assert situation.step is not None and last_restart_step is not None
                    assert situation.step > last_restart_step, "no crash loops"
                restarted, last_restart_step = True, situation.step
            if kind is FixKind.FREE_GPU:
                assert situation.crashed and situation.leftover_gpu_mib > 0
            applied[kind] += 1
    assert all(count <= 3 for count in applied.values())

"""The nan-inf rule judges a non-finite value by what the metric is: the objective is a
blocker, a statistic over a possibly empty set or a bound is reported without blocking,
and a gradient norm beside a finite loss is a blocker only when it persists."""

from __future__ import annotations

import math

import pytest

from babysit.config import RuleSettings
from babysit.model import AnomalyType, Severity
from babysit.rules.nonfinite_roles import Role, role_of, severity_of
from babysit.rules.nonfinite_rule import NonFiniteRule
from babysit.rules.signals import Observation, Raise, Reassess, Resolve

NAN = math.nan
INF = math.inf


def observe(rule: NonFiniteRule, step: int | None, **metrics: float) -> list[object]:
    return list(rule.observe(Observation(step=step, metrics=metrics)))


def raised(signals: list[object]) -> list[tuple[Severity | None, str]]:
    return [(s.severity, s.key) for s in signals if isinstance(s, Raise)]


@pytest.mark.parametrize(("name", "value", "role"), [
    ("loss", NAN, Role.OBJECTIVE),
    ("d3.loss_bbox", NAN, Role.OBJECTIVE),
    ("smoothed_loss", -NAN, Role.OBJECTIVE),
    ("eval/val_loss", INF, Role.OBJECTIVE),
    ("ppl", INF, Role.OBJECTIVE),
    ("loss_scale", NAN, Role.OTHER),
    ("grad_norm", NAN, Role.GRADIENT),
    ("gnorm", INF, Role.GRADIENT),
    ("ep_rew_mean", NAN, Role.STATISTIC),
    ("rollout/ep_len_mean", NAN, Role.STATISTIC),
    ("val_accuracy", NAN, Role.STATISTIC),
    ("avg_iou", NAN, Role.STATISTIC),
    ("speed_(samples/sec)", NAN, Role.TIMING),
    ("eta", INF, Role.TIMING),
    ("delta_clips_max", INF, Role.BOUND),
    ("best_val_loss", INF, Role.BOUND),
    ("best_val_loss", NAN, Role.OBJECTIVE),  # a NaN is never a starting bound
    ("col2", NAN, Role.OTHER),
    ("lr", NAN, Role.OPTIMIZER),
    ("train/learning_rate", INF, Role.OPTIMIZER),
    ("lr-AdamW", NAN, Role.OPTIMIZER),
])
def test_each_metric_has_a_role_by_its_name(name: str, value: float, role: Role) -> None:
    assert role_of(name, value) is role


def test_a_nan_objective_is_a_blocker_whatever_else_is_finite() -> None:
    assert severity_of("loss_cls", NAN, {"loss_cls": NAN, "loss_bbox": 0.3})[0] \
        is Severity.BLOCKER


def test_a_nan_learning_rate_is_a_blocker_beside_a_finite_loss() -> None:
    assert severity_of("lr", NAN, {"lr": NAN, "loss": 2.1})[0] is Severity.BLOCKER


def test_a_value_nothing_vouches_for_is_a_blocker() -> None:
    # Bare columns, a YOLO table's unnamed loss columns: never missed.
    assert severity_of("col2", NAN, {"step": 76980, "col2": NAN})[0] is Severity.BLOCKER
    assert severity_of("obj", NAN, {"box": NAN, "obj": NAN, "targets": 12})[0] \
        is Severity.BLOCKER


def test_means_over_an_empty_set_are_reported_not_blocking() -> None:
    region = {"class": NAN, "obj": NAN, "no_obj": 0.43, "count": 0}
    assert severity_of("class", NAN, region)[0] is Severity.MEDIUM
    assert severity_of("ep_rewmean", NAN, {"ep_rewmean": NAN, "policy_loss": -0.01})[0] \
        is Severity.MEDIUM


def test_an_unplaced_figure_beside_a_finite_loss_is_a_statistic() -> None:
    assert severity_of("acb_mean", NAN, {"acb_mean": NAN, "loss": 0.8})[0] is Severity.MEDIUM


def test_bounds_are_low_and_timings_not_reported() -> None:
    assert severity_of("grad_clip_max", INF, {"grad_clip_max": INF})[0] is Severity.LOW
    assert raised(observe(NonFiniteRule(RuleSettings()), 0, samples_per_second=NAN,
                          step_avg_ms=NAN, loss=2.3)) == []


def test_the_rule_raises_the_objective_under_the_blocker_key() -> None:
    signals = observe(NonFiniteRule(RuleSettings()), 5, loss=NAN, acc=0.5)
    assert raised(signals) == [(None, "")]  # None: the catalogue's blocker


def test_a_statistic_and_a_bound_do_not_hide_a_later_nan_loss() -> None:
    rule = NonFiniteRule(RuleSettings())
    first = observe(rule, 1, ep_rew_mean=NAN, value_loss=0.4, clip_max=INF)
    assert sorted(raised(first), key=str) == sorted(
        [(Severity.MEDIUM, "statistic"), (Severity.LOW, "setting")], key=str)
    assert raised(observe(rule, 2, value_loss=NAN)) == [(None, "")]


def test_one_nan_gradient_norm_beside_a_finite_loss_is_medium_and_resolves() -> None:
    rule = NonFiniteRule(RuleSettings())
    assert raised(observe(rule, 100, loss=1.9, grad_norm=NAN)) == [(Severity.MEDIUM, "")]
    back = observe(rule, 200, loss=0.9, grad_norm=3.97)
    assert [type(s) for s in back] == [Resolve] and back[0].key == ""


def test_a_gradient_norm_nan_twice_in_a_row_is_a_blocker() -> None:
    rule = NonFiniteRule(RuleSettings())
    observe(rule, 240, loss=2.51, grad_norm=NAN)
    second = observe(rule, 250, loss=2.45, grad_norm=INF)
    assert (None, "") in raised(second)  # the catalogue's blocker, if none is open
    assert any(isinstance(s, Reassess) and s.severity is Severity.BLOCKER for s in second)


def test_a_nan_objective_after_a_gradient_escalates_it_and_is_never_resolved() -> None:
    rule = NonFiniteRule(RuleSettings())
    observe(rule, 20, loss=3.5, grad_norm=NAN)
    then = observe(rule, 20, eval_loss=NAN)
    assert any(isinstance(s, Reassess) and s.severity is Severity.BLOCKER for s in then)
    assert not [s for s in observe(rule, 30, loss=1.2, grad_norm=2.0)
                if isinstance(s, Resolve)]


def test_a_nan_gradient_norm_with_a_zero_or_missing_loss_is_a_blocker_at_once() -> None:
    # A Hugging Face Trainer prints a filtered NaN loss as 0; Megatron may print no loss.
    assert raised(observe(NonFiniteRule(RuleSettings()), 1, loss=0.0, grad_norm=NAN)) == \
        [(None, "")]
    assert raised(observe(NonFiniteRule(RuleSettings()), 1, grad_norm=NAN, lr=3e-4)) == \
        [(None, "")]


def test_megatron_nan_iterations_are_still_counted() -> None:
    signals = observe(NonFiniteRule(RuleSettings()), 9, lm_loss=2.0,
                      number_of_nan_iterations=2)
    assert [s.type for s in signals if isinstance(s, Raise)] == [AnomalyType.NAN_INF]


@pytest.mark.parametrize("metrics", [
    {"input_tensor": NAN},
    {"input_tensor": INF, "episodes": 0.0},
    {"input_tensor": NAN, "lr": 1e-3},
])
def test_a_summary_writers_unnamed_nan_once_is_reported_not_blocking(
        metrics: dict[str, float]) -> None:
    # tensorboardX's `NaN or Inf found in input tensor.`: some scalar handed to
    # add_scalar (a mean reward over no episode yet), not the model's input.
    assert role_of("input_tensor", NAN) is Role.SUMMARY
    assert raised(observe(NonFiniteRule(RuleSettings()), 10, **metrics)) == \
        [(Severity.MEDIUM, "statistic")]


def test_a_summary_writers_nan_on_every_record_is_a_blocker() -> None:
    rule = NonFiniteRule(RuleSettings())
    for step in (86, 87):
        assert raised(observe(rule, step, input_tensor=NAN, lr=0.0071)) == \
            [(Severity.MEDIUM, "statistic")]
    assert (None, "") in raised(observe(rule, 88, input_tensor=NAN, lr=0.0071))


def test_a_summary_writers_nan_said_thrice_before_any_step_is_no_steps_loss() -> None:
    # VideoMAE's AMP start-up: `NaN or Inf found in input tensor.` three times before
    # the first step's record (the scaler's first overflows), then finite losses.
    rule = NonFiniteRule(RuleSettings())
    for _ in range(3):
        assert raised(observe(rule, None, input_tensor=NAN)) == \
            [(Severity.MEDIUM, "statistic")]


def test_a_summary_writers_nan_now_and_then_stays_reported_only() -> None:
    rule = NonFiniteRule(RuleSettings())
    for step in range(1, 10):
        if step % 3 == 0:
            assert raised(observe(rule, step, input_tensor=NAN)) == \
                [(Severity.MEDIUM, "statistic")]
        else:
            assert observe(rule, step, loss=1.0 / step) == []


@pytest.mark.parametrize("name", ["mape", "mspe", "smape", "val/wape", "rel_err"])
def test_an_error_divided_by_the_target_is_relative(name: str) -> None:
    assert role_of(name, INF) is Role.RELATIVE


def test_a_relative_error_at_inf_beside_finite_errors_is_no_blocker() -> None:
    # A forecaster's test block: `denormed mse:4.1, mae:1.5, rmse:2.0, mape:inf, mspe:inf`
    # — one target of 0 makes the percentage errors inf; the squared error is finite.
    out = observe(NonFiniteRule(RuleSettings()), 900,
                  mse=4.1, mae=1.5, rmse=2.0, mape=INF, mspe=INF, corr=0.8)
    assert raised(out) and all(sev is not Severity.BLOCKER for sev, _ in raised(out))

"""What the rules missed on sealed-9 (issue 24, items 1 and 2), each with the lines of
the log that showed it (tests/fixtures/logs/public/sealed-9/, quoted) and a made-up
healthy counterpart that must stay quiet:

- a TF2 Object Detection loss doubling over a 9-point excerpt
  (`INFO:tensorflow:Step 900 per-step time 0.813s loss=2.374`): divergence;
- a domain-adaptation run's `target_val_acc` sliding 55 → 43 % over epochs 39-47
  (`2024-04-18 09:18:25 | Epoch:  47/100, … target_val_acc:  42.71%`): eval-degradation;
- r2c's VCR model at accuracy 0.249 and loss 1.386 (ln 4) for epochs 1-3, and a
  steganalysis net whose `Best accuracy: 0.503` at epoch 52: a not-learning blocker;
- MONAI Label's `Key metric: val_mean_dice best value: 0.1098 at epoch: 3` at epoch 39:
  not-learning;
- NiftyNet's `Training iter 3151, loss=0.3117 (3.145937s)` between iterations of 35-108 s:
  slow-throughput.
"""

from __future__ import annotations

import random
from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.run import Run
from babysit.parsing.parser import LogParser
from babysit.rules.chance_streak import chance_class_count
from babysit.rules.eval_decline import slid_from_start
from babysit.rules.stale_best import stale
from babysit.rules.throughput_trends import stalled_steps
from tests.rules.test_loss_rules import verdict_of

_SEALED9 = Path(__file__).resolve().parents[1] / "fixtures/logs/public/sealed-9"


def anomalies(lines: list[str]) -> list[tuple[str, str, str]]:
    run = Run(RuleSettings(), None, 0.0)
    run.absorb(LogParser().feed_lines(lines))
    return [(a.type.value, a.severity.value, a.description) for a in run.ledger.anomalies]


def kinds(lines: list[str]) -> set[str]:
    return {kind for kind, _, _ in anomalies(lines)}


def sealed9(name: str) -> list[str]:
    return (_SEALED9 / name).read_text().splitlines()


# --- divergence on a short excerpt --------------------------------------------------------

def tf2_od(losses: list[float]) -> list[str]:
    return [f"INFO:tensorflow:Step {100 * (i + 1)} per-step time 0.8s loss={v:.3f}"
            for i, v in enumerate(losses)]


def test_a_short_excerpts_loss_doubling_at_each_of_its_last_points_is_divergence():
    lines = tf2_od([1.396, 1.192, 1.346, 1.360, 1.444, 1.204, 1.774, 2.155, 2.374])
    found = [(k, s) for k, s, _ in anomalies(lines) if k == "divergence"]
    assert found == [("divergence", "high")]  # high while it runs: CONDITIONAL, not NO-GO


def test_a_short_excerpt_rising_within_its_own_noise_is_not_divergence():
    # The same wander, and a last climb no larger than the swings before it.
    lines = tf2_od([1.396, 1.192, 1.346, 1.360, 1.444, 1.204, 1.25, 1.31, 1.38])
    assert "divergence" not in kinds(lines)


def test_the_tf2_object_detection_excerpt_is_conditional_with_divergence(tmp_path: Path):
    name = "tf2_od_api_model_lib_v2_step_per_step_time_loss_doubles_1_19_to_2_37_running.log"
    data = verdict_of(tmp_path, sealed9(name))
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert data["terminal_state"] == "RUNNING"
    assert "divergence" in {a["type"] for a in data["anomalies_detected"]}


# --- an evaluation sliding from the window's start ----------------------------------------

def dann(target_val: list[float], losses: list[float]) -> list[str]:
    return [f"2024-04-18 09:18:{19 + i:02d} | Epoch: {39 + i:3d}/100, loss_cls: 0.05, "
            f"loss: {loss:.4f}, source_train_acc: 100.00%, target_train_acc:  50.00%, "
            f"target_val_acc: {acc:6.2f}%" for i, (acc, loss) in enumerate(
                zip(target_val, losses, strict=True))]


_DANN_LOSSES = [0.2717, 0.3123, 0.0899, 0.2863, 0.3456, 0.2396, 0.1693, 0.1452, 0.0627]


def test_an_evaluation_sliding_from_the_excerpts_first_epoch_is_eval_degradation():
    lines = dann([55.16, 51.77, 52.34, 45.78, 44.37, 45.69, 47.54, 46.31, 42.71], _DANN_LOSSES)
    found = [d for k, _, d in anomalies(lines) if k == "eval-degradation"]
    assert found and "slid over all 6 evaluations seen, its best the first" in found[0]


def test_an_evaluation_wandering_about_a_level_is_not_a_slide():
    lines = dann([55.16, 51.77, 54.34, 52.78, 55.37, 53.69, 52.54, 54.31, 53.71], _DANN_LOSSES)
    assert "eval-degradation" not in kinds(lines)


def test_slid_from_start_needs_the_best_early_and_a_change_beyond_noise():
    worse = [-v for v in (55.16, 51.77, 52.34, 45.78, 44.37, 45.69, 47.54, 46.31, 42.71)]
    assert slid_from_start(worse) is not None
    assert slid_from_start(worse[:5]) is None  # too few
    assert slid_from_start(list(reversed(worse))) is None  # improving


# --- a run at chance for whole epochs -----------------------------------------------------

def test_r2c_at_ln4_and_a_quarter_for_whole_epochs_is_a_no_go(tmp_path: Path):
    name = "r2c_pandas_epoch_report_blocks_acc_chance_0_249_val_loss_ln4_flat.log"
    data = verdict_of(tmp_path, sealed9(name))
    assert data["decision"] == "NO-GO", data["summary"]
    assert data["terminal_state"] == "RUNNING"
    assert "stuck at chance" in data["summary"]


def test_a_steganalysis_run_whose_own_best_is_a_coin_toss_at_epoch_52_is_a_no_go(
        tmp_path: Path):
    name = "siastegnet_steganalysis_percent_f_timestamps_epoch_52_53_accuracy_50pct_chance.log"
    data = verdict_of(tmp_path, sealed9(name))
    assert data["decision"] == "NO-GO", data["summary"]
    assert "best accuracy 0.503 is 1/2 at epoch 52" in data["summary"]


def chance_epochs(accuracies: list[float], loss: float) -> list[str]:
    return [f"Epoch {e}: loss {loss + 0.0001 * (e % 3):.6f} accuracy {acc:.4f} "
            f"val_loss {loss:.4f} val_acc {acc:.4f}" for e, acc in enumerate(accuracies)]


def test_a_run_at_chance_for_its_first_two_epochs_only_is_no_blocker():
    # A healthy binary classifier starts at a coin toss; two epochs there say nothing yet.
    found = anomalies(chance_epochs([0.5, 0.501], 0.6931))
    assert not [a for a in found if a[1] == "blocker"]


def test_a_run_that_leaves_chance_is_no_blocker():
    found = anomalies(chance_epochs([0.5, 0.501, 0.62, 0.71, 0.78], 0.6931))
    assert not [a for a in found if a[1] == "blocker"]


def test_chance_at_the_loss_but_not_the_accuracy_is_no_chance_streak():
    # ln 2 loss with an accuracy of 0.9: not the pair chance_streak reads. (A loss held at
    # exactly ln 2 for five epochs from the start is a uniform output all the same, its
    # accuracy how the ties fall — a 90 % majority's share: rules/uniform_output.)
    found = anomalies(chance_epochs([0.9, 0.9, 0.9, 0.9, 0.9], 0.6931))
    assert not [a for a in found if "stuck at chance" in a[2] or "1/2" in a[2]]
    assert [a for a in found if "uniform" in a[2]]


def test_chance_class_count_reads_both_scales():
    assert chance_class_count(0.249) == 4
    assert chance_class_count(50.22) == 2
    assert chance_class_count(0.7) is None


# --- a best the run dates far back --------------------------------------------------------

def test_monai_labels_best_dice_at_epoch_3_of_39_is_not_learning():
    name = ("monailabel_ignite_lung_seg_val_dice_zero_best_epoch_3_train_loss_nan_"
            "epoch_40_46_of_50.log")
    found = [d for k, _, d in anomalies(sealed9(name)) if k == "not-learning"]
    assert found and "dates from epoch 3" in found[0]


def test_a_best_a_few_epochs_back_is_not_stale():
    assert stale(3, 39)
    assert not stale(30, 39)  # recent
    assert not stale(3, 12)  # too few epochs since


# --- steps that stall ---------------------------------------------------------------------

def test_niftynet_iterations_of_3s_between_ones_of_35_to_108s_are_slow_throughput(
        tmp_path: Path):
    name = "niftynet_tf_training_iter_loss_seconds_per_iter_erratic_3s_to_108s.log"
    data = verdict_of(tmp_path, sealed9(name))
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert "slow-throughput" in {a["type"] for a in data["anomalies_detected"]}


def test_steps_alike_or_with_a_slow_one_now_and_then_do_not_stall():
    rng = random.Random(3)
    alike = [1 / (3.0 + rng.uniform(-0.3, 0.3)) for _ in range(20)]
    assert stalled_steps(alike, RuleSettings()) is None
    saves = [1 / 60.0 if i % 5 == 4 else v for i, v in enumerate(alike)]
    assert stalled_steps(saves, RuleSettings()) is None
    stalls = [1 / 3.1 if i % 3 == 0 else 1 / 40.0 for i in range(14)]
    assert stalled_steps(stalls, RuleSettings()) is not None


def test_a_run_at_chance_from_its_first_epoch_needs_five_epochs_for_a_blocker():
    def blockers(count: int) -> list[tuple[str, str, str]]:
        return [a for a in anomalies(chance_epochs([0.5] * count, 0.6931)) if a[1] == "blocker"]
    assert blockers(4) == []
    assert [k for k, _, _ in blockers(5)] == ["not-learning"]


def test_an_evaluations_rate_in_records_of_their_own_is_no_fast_step():
    # torchtitan's `validate step: 10 … tps: 350,762` between training steps at ~50,000
    # (tests/fixtures/logs/torchtitan_format.log): each shape of record is judged apart.
    from babysit.rules.throughput_trends import StallWatch
    watch, rules = StallWatch(), RuleSettings()
    train = {"loss": 4.1, "grad_norm": 0.4, "tps": 0.0}
    validate = {"loss": 4.2, "tps": 0.0}
    found = []
    for i in range(12):
        found.append(watch.stalled(train, 50_000.0 + 1000 * (i % 3), rules))
        found.append(watch.stalled(validate, 300_000.0, rules))
    assert found == [None] * 24

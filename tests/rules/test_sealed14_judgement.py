"""Judging whether a run learns, diverges or is broken, on the shapes of sealed-14's logs
(values made up, lines in the real shape): a detector at a coin's balanced error, Q-values
beyond any return, Kaldi's objective beyond any guess, a resume that comes back far
worse, and a W&B history that holds several trainings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babysit.core.run import Run
from babysit.model import AnomalyType, Severity
from babysit.parsing.parser import LogParser
from babysit.rules.history_shape import restarted_counter
from tests.rules.test_loss_rules import run_of, verdict_of


def _open(data: dict[str, Any]) -> dict[str, str]:
    """Open findings' types and their severities."""
    return {a["type"]: a["severity"] for a in data["anomalies_detected"]
            if "resolved:" not in a["description"]}


def _open_in(run: Run) -> dict[AnomalyType, Severity]:
    return {a.type: a.severity for a in run.ledger.anomalies if not a.resolved}


def _bars(heights: str) -> str:
    return "".join("▁▂▃▄▅▆▇█"[int(h)] for h in heights)


# --- a W&B history of several trainings (pytorch_eeg_seizure_cv_folds_…) ---------------

_FOLDS_LOSS = _bars("1114433757234666446676767666664432106666")


def _folds_run(counter_row: str, counter_first: bool) -> list[str]:
    lines = [f"Epoch {e}/3 | Loss: 0.{52 - e} | Train Acc: 0.8{e} | Val Acc: 0.9{e}"
             for e in range(1, 4)]
    rows = [f"wandb:      epoch {counter_row}", f"wandb: train_loss {_FOLDS_LOSS}"]
    return [*lines, "wandb: Run history:", *(rows if counter_first else rows[::-1]),
            "wandb: ", "wandb: Run summary:", "wandb:      epoch 3",
            "wandb: train_loss 0.49", "Subject: Job 1: <cv> in cluster <dcc> Done",
            "Successfully completed."]


def test_a_counter_row_that_falls_back_holds_several_trainings() -> None:
    assert restarted_counter("epoch", "3041041342") is not None
    assert restarted_counter("trainer/global_step", "0011223344556677") is None
    assert restarted_counter("train_loss", "3041041342") is None  # no counter


def test_a_loss_history_over_several_folds_is_no_evidence_of_not_learning(
        tmp_path: Path) -> None:
    falling = _bars("3041041342235123451425")
    for counter_first in (True, False):  # W&B orders the rows by name
        data = verdict_of(tmp_path, _folds_run(falling, counter_first))
        assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED")
        assert "not-learning" not in _open(data)


def test_one_trainings_wandering_loss_history_is_still_not_learning(tmp_path: Path) -> None:
    climbing = _bars("0001112223334445556667")
    data = verdict_of(tmp_path, _folds_run(climbing, True))
    assert _open(data)["not-learning"] == "high"


# --- a binary detector at a coin's balanced error (cdcn_depth_antispoof_…) -----------------

def _detector(epoch: int, acer: float) -> list[str]:
    return [f"epoch:{epoch}, Val:  val_threshold= 0.0005, val_ACC= 0.55, val_ACER= {acer} ",
            f"epoch:{epoch}, Test:  ACC= 0.47, APCER= 0.52, BPCER= 0.50, ACER= {acer} ",
            *(f"epoch:{e}, Train: Absolute_Depth_loss= 0.005{e % 3}, "
              f"Contrastive_Depth_loss= 0.0033 " for e in range(epoch + 1, epoch + 6))]


def test_a_detector_at_a_coins_balanced_error_epochs_in_is_no_go(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _detector(300, 0.47))
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "RUNNING")
    assert _open(data)["not-learning"] == "blocker"


def test_a_detector_that_tells_the_classes_apart_is_not_at_chance() -> None:
    assert AnomalyType.NOT_LEARNING not in _open_in(run_of(_detector(300, 0.04)))


def test_a_detectors_first_epochs_at_chance_are_a_start() -> None:
    assert AnomalyType.NOT_LEARNING not in _open_in(run_of(_detector(2, 0.48)))


# --- Q-values beyond any return (rllib_tune_dqn_shogi_q_values_diverging_cut) ----------------

def _rllib(q_values: list[float], reward: float) -> list[str]:
    lines: list[str] = []
    for iteration, q in enumerate(q_values, start=1):
        lines += ["Result for DQN_game_1a2b3_00000:", f"  episode_reward_max: {reward}",
                  f"  episode_reward_mean: {reward / 2}", "  info:", "    learner:",
                  "      player_0:", "        learner_stats:",
                  f"          grad_gnorm: {q / 100 + 0.2}", f"          max_q: {q * 2}",
                  f"          mean_q: {q}", f"          min_q: {q / 3}",
                  f"  training_iteration: {iteration}"]
    return lines


def test_rllib_learner_stats_are_read() -> None:
    records = LogParser().feed_lines(_rllib([1.5], 1.0))
    metrics = {k: v for r in records for k, v in r.metrics.items()}
    assert metrics["mean_q"] == 1.5 and metrics["max_q"] == 3.0
    assert LogParser().feed_lines(["  max_queue: 5"]) == []  # a queue's size, no Q-value


def test_q_values_that_blow_up_are_a_blocking_divergence(tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _rllib([0.1, 20.0, 3e3, 4e5, 2e6, 9e6, 3e7, 8e7, 2e8], 0.0))
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "RUNNING")
    assert _open(data)["divergence"] == "blocker"
    assert _open(data)["grad-explosion"] in ("high", "blocker")  # RLlib's `grad_gnorm`


def test_large_q_values_of_large_rewards_are_no_divergence() -> None:
    # Returns of thousands (a locomotion task): Q-values of tens of thousands are estimates.
    run = run_of(_rllib([10.0 * i for i in range(1, 30)] + [4e4] * 5, 3000.0))
    assert AnomalyType.DIVERGENCE not in _open_in(run)


# --- Kaldi nnet3's objective (kaldi_nnet3_train_objf_minibatch_stats_running) -------------

_KALDI_HEAD = "LOG (nnet3-train[5.5]:PrintStatsForThisPhase():nnet-training.cc:121) "


def _kaldi(objectives: list[float], wrapped: bool) -> list[str]:
    lines: list[str] = []
    for phase, value in enumerate(objectives, start=2):
        first, last = phase * 10, phase * 10 + 9
        if wrapped:  # as a paste of fixed width cuts it
            lines += [f"{_KALDI_HEAD}Average ",
                      f"objective function for 'output' for minibatches {first}-{last} is "
                      f"{value} over ", "12345 frames."]
        else:
            lines.append(f"{_KALDI_HEAD}Average objective function for 'output' for "
                         f"minibatches {first}-{last} is {value} over 12345 frames.")
    return lines


def test_kaldis_objective_is_read_whole_or_wrapped() -> None:
    for wrapped in (False, True):
        records = [r for r in LogParser().feed_lines(_kaldi([-2.5, -2.25], wrapped))
                   if r.metrics]
        assert [(r.step, r.metrics) for r in records] == [
            (30, {"nll_per_frame": 2.5}), (40, {"nll_per_frame": 2.25})]


def test_kaldis_overall_objective_is_read_at_no_step() -> None:
    line = ("LOG (nnet3-train[5.5]:PrintTotalStats():nnet-training.cc:194) Overall average "
            "objective function for 'output' is -1.75 over 200000 frames.")
    records = LogParser().feed_lines([line])
    assert [r.metrics for r in records if r.metrics] == [{"nll_per_frame": 1.75}]


def test_an_objective_beyond_any_uniform_guess_is_a_blocking_divergence(
        tmp_path: Path) -> None:
    data = verdict_of(tmp_path, _kaldi([-31.5, -36.25, -41.0, -33.75, -38.5, -43.0], True))
    assert (data["decision"], data["terminal_state"]) == ("NO-GO", "RUNNING")
    assert _open(data)["divergence"] == "blocker"


def test_a_kaldi_objective_at_a_learners_level_is_no_divergence() -> None:
    run = run_of(_kaldi([-3.5, -3.25, -3.0, -2.75, -2.5, -2.4, -2.3], False))
    assert AnomalyType.DIVERGENCE not in _open_in(run)


# --- a resumed training far worse than it left off (pytorch_autoencoder_appended_runs_…) ---

def _autoencoder(first: int, epochs: int, start: float) -> list[str]:
    return [f"[Train] Epoch: {e}, Loss:{start / (1 + e - first):.6f} "
            for e in range(first, first + epochs)]


def _classifier() -> list[str]:
    return [f"[Train Classifier] Epoch: {e}, Accuracy:{60 + 2 * e:.6f} " for e in range(10)]


def _resumed(level: float) -> list[str]:
    # A jump at the second epoch resumed, then a plateau that never comes back.
    losses = [level / 8, level * 1.25, level * 1.2, level * 1.2,
              *(level * (1 - (i % 3) / 400) for i in range(16))]
    return [f"[Train] Epoch: {e}, Loss:{loss:.6f} " for e, loss in enumerate(losses, start=30)]


def test_a_resume_far_above_where_its_training_left_off_is_no_go(tmp_path: Path) -> None:
    # (ended: a divergence still open when the run ends is a blocker)
    lines = [*_autoencoder(0, 30, 3e-4), *_classifier(), *_resumed(7e-3), "Training complete."]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO"
    assert {"loss-spike", "divergence"} <= set(_open(data))


def test_a_resume_at_the_level_its_training_left_off_is_no_jump() -> None:
    run = run_of([*_autoencoder(0, 30, 3e-4), *_classifier(), *_resumed(1e-5)])
    assert not {AnomalyType.LOSS_SPIKE, AnomalyType.DIVERGENCE} & set(_open_in(run))


def test_a_new_training_from_epoch_0_is_judged_against_its_own_start() -> None:
    run = run_of([*_autoencoder(0, 30, 3e-4), *_classifier(), *_autoencoder(0, 30, 3e-4)])
    assert not {AnomalyType.LOSS_SPIKE, AnomalyType.DIVERGENCE} & set(_open_in(run))

"""Shapes read since the forty-ninth session, each on lines written in the real shape of
a public log that babysit could not read at all (its parser found no progress)."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of

# -- a CSV row that ends on its separator, a moment in one of its cells --------------------

def _adversarial_rows(epochs: int) -> list[str]:
    """ADAAD's results file: `epoch, train_loss, …, time`, each row ending `Aug16-15:41:04,`."""
    lines = ["epoch, train_loss, test_loss, train_acc, test_clean_acc, test_PGD10_acc, time"]
    for n in range(epochs):
        lines.append(f"{n}, {26 - n:.5f}, {158 - 3 * n:.5f}, {38 + 2 * n:.5f}, "
                     f"{45 + 1.5 * n:.5f}, {26 + n:.5f}, Aug{16 + n // 24}-{n % 24:02d}:41:04,")
    return lines


def test_a_row_ending_on_its_separator_is_read_under_its_header(tmp_path: Path):
    artifact = verdict_of(tmp_path, _adversarial_rows(19))
    assert set(artifact["final_metrics"]) >= {"train_loss", "test_loss", "test_pgd10_acc"}
    assert "at epoch 18" in artifact["summary"]
    assert artifact["terminal_state"] == "RUNNING"


# -- a metrics file in long form: one measure a row ----------------------------------------

def _long_form(epochs: int, tc: float) -> list[str]:
    """A β-TCVAE's `train_losses.log`: `Epoch,Loss,Value`, then `0,recon_loss,114.49`."""
    lines = ["Epoch,Loss,Value"]
    for n in range(epochs):
        lines += [f"{n},recon_loss,{114 - 2 * n:.6f}", f"{n},loss,{-50 - n:.6f}",
                  f"{n},mi_loss,{42.2 + n / 100:.6f}", f"{n},tc_loss,{tc + n / 100:.6f}",
                  f"{n},kl_loss,{17.6 - n / 10:.6f}"]
    return lines


def test_a_long_form_metrics_file_gives_each_row_its_measure(tmp_path: Path):
    artifact = verdict_of(tmp_path, _long_form(30, 2.5))
    assert set(artifact["final_metrics"]) >= {"recon_loss", "mi_loss", "tc_loss", "kl_loss"}
    assert artifact["final_metrics"]["recon_loss"] == 56.0
    assert "at epoch 29" in artifact["summary"]


def test_a_divergence_term_of_the_loss_below_zero_is_a_blocker(tmp_path: Path):
    """A total correlation (a KL divergence) of -32.9 every epoch: its estimator is wrong,
    and the run minimises it."""
    artifact = verdict_of(tmp_path, _long_form(30, -32.9))
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "impossible-metric"]
    assert found and found[0]["severity"] == "blocker" and "tc_loss" in found[0]["description"]
    assert artifact["decision"] == "NO-GO"


def test_a_signed_kl_estimate_that_is_no_loss_raises_nothing(tmp_path: Path):
    """A policy-gradient run's `approx_kl` may dip below 0: an estimate, not a loss term."""
    lines = [f"step={n} loss={1 / n:.4f} approx_kl={(-1) ** n * 0.02:.4f}" for n in range(1, 40)]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "impossible-metric"]


# -- names and values in turn, apart by commas ---------------------------------------------

def test_names_and_values_in_turn_are_read_as_pairs(tmp_path: Path):
    """The Lottery Ticket code's `iteration,100,test_loss,2.06,test_accuracy,0.516`."""
    lines = [f"iteration,{n * 100},test_loss,{2 / n:.6f},test_accuracy,{1 - 0.5 / n:.6f}"
             for n in range(1, 60)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["total_steps"] == 5900
    assert set(artifact["final_metrics"]) == {"test_loss", "test_accuracy"}


def test_a_printed_tuple_of_names_and_values_is_read(tmp_path: Path):
    """A Python 2 print of a tuple (a captcha CNN's `('epoch:', 0, 'step:', 0, 'loss:',
    0.71)`, printed at each epoch's first batch): the step never moves, so the run's
    progress is its epochs."""
    lines = ["init net", *(f"('epoch:', {n}, 'step:', 0, 'loss:', {0.7 / (n + 1):.16f})"
                           for n in range(22))]
    artifact = verdict_of(tmp_path, lines)
    assert set(artifact["final_metrics"]) == {"loss"}
    assert "at epoch 21" in artifact["summary"]
    assert "after 0 steps" not in artifact["summary"]


def test_a_tuple_with_phrases_for_names(tmp_path: Path):
    lines = [f"('Episode #', {n * 100}, '\\tfinished with reward', {-250 + n:.6f}, "
             f"'\\tAverage Noisy Weights', 0.02)" for n in range(1, 14)]
    artifact = verdict_of(tmp_path, lines)
    assert "finished_with_reward" in artifact["final_metrics"]


def test_a_line_of_prose_with_commas_is_no_pairs(tmp_path: Path):
    lines = [f"loaded,{n},files,skipped" for n in range(5)] + \
        [f"step {n} loss {1 / n:.3f}" for n in range(1, 30)]
    artifact = verdict_of(tmp_path, lines)
    assert "files" not in artifact["final_metrics"]


# -- columns grouped in parentheses ---------------------------------------------------------

def _grouped(evals: list[float]) -> list[str]:
    """SASRec's `epoch (val_ndcg, val_hr) (test_ndcg, test_hr)`, one row every 20 epochs."""
    return ["epoch (val_ndcg, val_hr) (test_ndcg, test_hr)",
            *(f"{20 * (n + 1)} ({v:.16f}, {v + 0.25:.16f}) ({v - 0.02:.16f}, {v + 0.23:.16f})"
              for n, v in enumerate(evals))]


def test_columns_grouped_in_parentheses_are_read(tmp_path: Path):
    artifact = verdict_of(tmp_path, _grouped([0.50, 0.54, 0.55, 0.56, 0.561]))
    assert set(artifact["final_metrics"]) == {"val_ndcg", "val_hr", "test_ndcg", "test_hr"}
    assert "at epoch 100" in artifact["summary"]


def test_a_held_out_score_sliding_for_many_evaluations_is_flagged_without_a_training_loss(
        tmp_path: Path):
    """Best at epoch 80, then down for 21 evaluations; the log prints no training loss."""
    rises = [0.509, 0.550, 0.5599, 0.5612]
    falls = [0.5612 - 0.0026 * n + (0.0012 if n % 3 == 0 else 0.0) for n in range(1, 22)]
    artifact = verdict_of(tmp_path, _grouped(rises + falls))
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"]
    assert found and "no training loss" in found[0]["description"]


def test_a_few_evaluations_below_the_best_without_a_training_loss_stay_quiet(tmp_path: Path):
    rises = [0.509, 0.550, 0.5599, 0.5612]
    artifact = verdict_of(tmp_path, _grouped([*rises, 0.556, 0.553, 0.550, 0.548, 0.546]))
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"]

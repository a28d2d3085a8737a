"""Shapes read since the forty-eighth session, each on lines written in the real shape of
a public log (sealed-164, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.closing import closes
from tests.parsing.test_shapes_round44 import _open
from tests.rules.test_loss_rules import verdict_of


# -- a line of fields with a bare duration among them --------------------------------------

def _timed_epochs(last: int, of: int) -> list[str]:
    """An offline Q-learning job's epochs: `Epoch    1/50 | train 0.17699 | val 0.03603 |
    3s`, the last field how long the epoch took."""
    return [f"Epoch {n:4d}/{of} | train {0.18 / n:.5f} | val {0.04 / n + 0.002:.5f} | "
            f"{n * 2 + 1}s" for n in range(1, last + 1)]


def test_a_duration_field_does_not_hide_a_line_of_fields(tmp_path: Path):
    artifact = verdict_of(tmp_path, _timed_epochs(50, 50))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert set(artifact["final_metrics"]) >= {"train", "val"}
    assert "at epoch 50 of 50" in artifact["summary"]


def test_the_same_log_short_of_its_plan_is_still_running(tmp_path: Path):
    artifact = verdict_of(tmp_path, _timed_epochs(12, 50))
    assert (artifact["terminal_state"], artifact["decision"]) == ("RUNNING", "CONDITIONAL")
    assert "at epoch 12 of 50" in artifact["summary"]


def test_a_duration_in_minutes_and_seconds_is_no_field_either(tmp_path: Path):
    lines = [f"Epoch {n}/20 | train {1 / n:.4f} | val {1 / n + 0.1:.4f} | {n}m {n * 3 % 60}s"
             for n in range(1, 21)]
    assert "val" in verdict_of(tmp_path, lines)["final_metrics"]


# -- pairs after an epoch's head, an aside in parentheses closing the line ----------------

def _seed_epochs(seed_shift: float) -> list[str]:
    return [f"epoch {n:02d}: actor {1.2 - n / 100 + seed_shift:.4f} critic "
            f"{0.007 - n / 2000:.4f} Q {-0.03 * n:.4f} val Sharpe {(-1) ** n * 0.4:+.3f} "
            f"(mean|a| {0.2 + n / 50:.3f})" for n in range(1, 11)]


def test_an_aside_in_parentheses_does_not_hide_the_pairs_before_it(tmp_path: Path):
    """A trading agent's offline actor-critic suite, five seeds one after another, ends on
    its own banner: the pairs are read (the aside's too) and the banner closes the run."""
    lines: list[str] = []
    for seed in range(3):
        lines += [f"$ python -m src.models.tacr.train --tag macro16 --seed {seed}",
                  *_seed_epochs(seed / 10),
                  f"[seed {seed}] best val Sharpe 1.0962 @ epoch 7 -> checkpoints/s{seed}/best.pt"]
    lines.append("=== suite complete: macro16 ===")
    artifact = verdict_of(tmp_path, lines)
    assert set(artifact["final_metrics"]) >= {"actor", "critic", "q", "val_sharpe", "mean_a"}
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_all_done_closes_but_not_as_a_clause_of_more_work():
    assert not closes("all done, now testing model")
    assert closes("=== ALL DONE Fr 29. Mai 20:13 ===")


# -- a return by its name under each epoch's head; the return asked for is no result -------

def _dt_blocks(last: int) -> list[str]:
    """A return-conditioned decision transformer: each epoch's head alone on its line, then
    the return it was asked for and the one it earned."""
    lines = ["Namespace(algo='rcsl-dt', batch=256, epochs=60, seed=0)",
             "Begin output policy training"]
    for n in range(last + 1):
        lines += ["------------", f"Epoch {n}" + (" (Initial model)" if n == 0 else ""),
                  f"target return: 132.76379035532239, eval return: "
                  f"{20 + 60 * n / (n + 8) + (n % 3):.12f}"]
    return lines


def test_an_evaluated_return_is_read_and_the_target_return_is_no_frozen_result(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _dt_blocks(60))
    assert "eval_return" in artifact["final_metrics"]
    assert "not-learning" not in {kind for kind, _ in _open(artifact)}
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_return_code_is_no_return():
    from babysit.parsing.formats import names_a_measure
    assert names_a_measure({"eval_return": 1.0})
    assert names_a_measure({"ep_ret": 1.0})
    assert not names_a_measure({"return_code": 1.0})


# -- an epoch's head as an ordinal, its figures on the lines under it ---------------------

def _ordinal_blocks(last: int, plan: int) -> list[str]:
    """A retrosynthesis scorer's log: its configuration, then `  1th epoch,` over its
    indented figures, one block an epoch, and its closing block."""
    lines = ["  ----- Train Config Information -----", f"  num_epoch: {plan}", "  lr: 0.0004",
             "", "  ----- Training Log -----"]
    for n in range(1, last + 1):
        lines += [f"  {n}th epoch,", f"   training loss: {0.38 + 1.2 / n:.6f}",
                  f"   val loss: {0.58 + 0.7 / n:.6f}", f"   epoch time: {24 + n % 7:.2f}"]
    return lines


def test_an_ordinal_epoch_head_counts_the_epochs_against_the_plan(tmp_path: Path):
    artifact = verdict_of(tmp_path, _ordinal_blocks(40, 40))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    running = verdict_of(_folder(tmp_path / "short"), _ordinal_blocks(12, 40))
    assert running["terminal_state"] == "RUNNING"


# -- the best results' heading after the last epoch closes the run ------------------------

def _r2gen_summary(epoch: int, bleu: float) -> list[str]:
    return [f"\tepoch          : {epoch}", f"\ttrain_loss     : {1.7 - epoch / 20:.6f}",
            f"\tval_BLEU_4     : {bleu:.6f}", f"\ttest_BLEU_4    : {bleu - 0.01:.6f}",
            "Saving checkpoint: ./results/current_checkpoint.pth ..."]


def test_the_best_results_heading_after_the_last_epoch_closes_the_run(tmp_path: Path):
    lines: list[str] = []
    for epoch in range(1, 16):
        lines += _r2gen_summary(epoch, 0.04 + epoch / 200)
    closing = ["Best results (w.r.t BLEU_4) in validation set:", "\tval_BLEU_4     : 0.150383",
               "\tepoch          : 8", "Best results (w.r.t BLEU_4) in test set:",
               "\ttest_BLEU_4    : 0.140000", "\tepoch          : 8"]
    finished = verdict_of(tmp_path, lines + closing)
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")
    assert verdict_of(_folder(tmp_path / "cut"), lines)["terminal_state"] == "RUNNING"


def _folder(path: Path) -> Path:
    path.mkdir()
    return path

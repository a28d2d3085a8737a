"""How a run ended, said by what ran it or by its library as the fit returns (issue 23,
item 4: endings only on evidence): a shell's job control, make, W&B's closing line, LSF's
and PBS's job reports, an IDE's exit 0; gradient boosting's early stop and its best round
restated under it. Each line is the shape the tool prints (quoted in the modules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.test_endings import once

_STEPS = "".join(f"step {s}/1000 | loss {2.0 - s * 0.001:.4f} | lr 3e-4\n"
                 for s in range(100, 1100, 100))
_SHORT = "".join(f"step {s}/3000 | loss {2.0 - s * 0.0003:.4f} | lr 3e-4\n"
                 for s in range(100, 1100, 100))


@pytest.mark.parametrize(("last", "state", "decision"), [
    ("[1]+  Exit 1                  nohup python train.py > train.log 2>&1", "FAILED", "NO-GO"),
    ("[1]  + 48213 exit 1     python train.py", "FAILED", "NO-GO"),
    ("make: *** [Makefile:12: train] Error 1", "FAILED", "NO-GO"),
    ("wandb: Waiting for W&B process to finish... (failed 1). Press Control-C to abort syncing.",
     "FAILED", "NO-GO"),
    ("Exited with exit code 1.", "FAILED", "NO-GO"),
    ("=>> PBS: job killed: walltime 3630 exceeded limit 3600", "TIMEOUT", "NO-GO"),
    ("[1]+  Done                    nohup python train.py > train.log 2>&1", "SUCCEEDED", "GO"),
    ("wandb: Waiting for W&B process to finish... (success).", "SUCCEEDED", "GO"),
    ("Process finished with exit code 0", "SUCCEEDED", "GO"),
])
def test_an_exit_status_said_under_the_log_ends_the_run(tmp_path: Path, last: str, state: str,
                                                        decision: str):
    data = once(tmp_path, _STEPS + last + "\n")
    assert (data["terminal_state"], data["decision"]) == (state, decision), data["summary"]


def test_an_exit_0_well_short_of_the_plan_is_an_end_not_a_success(tmp_path: Path):
    # The script returned at step 1000 of 3000: over, but nothing says it finished its plan.
    data = once(tmp_path, _SHORT + "Process finished with exit code 0\n")
    assert (data["terminal_state"], data["decision"]) == ("ENDED", "CONDITIONAL")


def test_lsf_exit_code_after_its_run_limit_keeps_the_timeout(tmp_path: Path):
    data = once(tmp_path, _SHORT + "TERM_RUNLIMIT: job killed after reaching LSF run time "
                "limit.\nExited with exit code 140.\n")
    assert data["terminal_state"] == "TIMEOUT"


def test_a_ctrl_c_then_wandbs_failed_line_stays_cancelled(tmp_path: Path):
    data = once(tmp_path, _STEPS[:200] + "Traceback (most recent call last):\n"
                '  File "train.py", line 10, in <module>\nKeyboardInterrupt\n'
                "wandb: Waiting for W&B process to finish... (failed 1). Press Control-C to "
                "abort syncing.\n")
    assert data["terminal_state"] == "CANCELLED"


def _rounds(first: int, last: int) -> str:
    return "".join(f"[{i}]\tvalid_0's l2: {0.9 - i * 0.01:.5f}\n" for i in range(first, last + 1))


@pytest.mark.parametrize("closing", [
    "Early stopping, best iteration is:\n[20]\tvalid_0's l2: 0.7\n",  # LightGBM
    "Did not meet early stopping. Best iteration is:\n[30]\tvalid_0's l2: 0.6\n",
    "Stopping. Best iteration:\n[20]\tvalidation_0-rmse:0.70000\n",  # XGBoost < 1.3
])
def test_a_boosting_fit_that_stops_or_runs_out_is_finished(tmp_path: Path, closing: str):
    data = once(tmp_path, "Training until validation scores don't improve for 10 rounds\n"
                + _rounds(1, 30) + closing)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    assert data["total_steps"] == 30  # the best round restated is no round trained


def test_catboosts_overfitting_detector_ends_the_fit(tmp_path: Path):
    rows = "".join(f"{i}:\tlearn: {0.9 - i * 0.01:.7f}\ttest: {0.95 - i * 0.01:.7f}\t"
                   f"best: {0.95 - i * 0.01:.7f} ({i})\ttotal: {i * 12}ms\tremaining: 1.2s\n"
                   for i in range(40))
    data = once(tmp_path, rows + "Stopped by overfitting detector  (20 iterations wait)\n\n"
                "bestTest = 0.5600000\nbestIteration = 39\n\n"
                "Shrink model to first 40 iterations.\n")
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]

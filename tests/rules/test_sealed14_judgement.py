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

"""A run that writes its best model without naming the file at each improvement, then
reloads it by path for its final test: the evaluation findings are weighed against that
best, one by one. Lines quoted from othmaneechc/SpeedTransformer's fine-tuning log
(tests/fixtures/logs/public/sealed-8/
speedtransformer_logging_epoch_of_60_early_stop_49_test_report_confusion_saved.log)."""

from __future__ import annotations

from pathlib import Path

from babysit.core.checkpoints import Checkpoints
from babysit.model import EventKind
from babysit.parsing.events import find_events
from tests.core.test_endings import once

_LOG = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-8"
        / "speedtransformer_logging_epoch_of_60_early_stop_49_test_report_confusion_saved.log")
_RELOAD = "Loading best fine-tuned model from"


def _best(line: str) -> list[str]:
    return [e.detail for e in find_events(line) if e.kind is EventKind.BEST_CHECKPOINT]


def test_the_best_written_without_a_path_and_reloaded_by_path_are_read():
    assert _best("2025-10-07 07:16:14,539 - INFO -   -> Best fine-tuned model saved.") == [""]
    assert _best("Loading best fine-tuned model from /data/A-SpeedTransformer/models/"
                 "best_model.pth for final evaluation...") == [
        "/data/A-SpeedTransformer/models/best_model.pth"]
    # (the shapes read before stay as they were)
    assert _best("Loading best model from out/checkpoint-500 (score: 0.31).") == [
        "out/checkpoint-500"]
    assert _best("2025-10-07 07:13:07,872 - INFO -   -> No improvement (1/7)") == []


def test_a_path_named_after_unnamed_best_saves_is_the_last_saves_file():
    """The reload at epoch 49 names the file written at epoch 42, the last improvement."""
    checkpoints = Checkpoints()
    checkpoints.named_best("", blocked=False, step=40)
    checkpoints.named_best("", blocked=False, step=42)
    checkpoints.named_best("/data/best_model.pth", blocked=False, step=49)
    assert checkpoints.written_at("/data/best_model.pth") == 42


def test_findings_after_the_kept_best_do_not_hold_back_a_finished_run(tmp_path: Path):
    """The validation loss rose after the best written at epoch 42 (raised at 44) and
    the gap noted at epoch 34 grew only as the evaluation left its best: the run
    reloaded that best for its test, so it delivers the best weights. GO."""
    data = once(tmp_path, _LOG.read_text())
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    open_findings = [a for a in data["anomalies_detected"]
                     if "resolved:" not in a["description"] and a["severity"] != "low"]
    assert open_findings == []
    assert data["best_checkpoint"].endswith("best_model.pth")


def test_without_the_reload_the_findings_stand(tmp_path: Path):
    """Saves of the best that never name a file give no checkpoint to deliver: the
    evaluation that got worse is still open when the run ends."""
    text = "".join(line for line in _LOG.read_text().splitlines(keepends=True)
                   if _RELOAD not in line)
    data = once(tmp_path, text)
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert "eval-degradation" in data["summary"]

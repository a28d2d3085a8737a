"""Finished runs babysit reported as "could not read training progress" although the
log showed training: a pipeline that prints only its numbered stages, and a trainer
that prints only the trained model's closing figures. Lines quoted from the public logs
named in each test; the verdicts are what a user reads in babysit-training.json."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_endings import once

# AD-Styles/gpt2-korean-finetuning, python logging over CRLF, three launches appended
# (tests/fixtures/logs/public/sealed-3/
# gpt2_korean_nsmc_crlf_steps_only_three_launches_completed_successfully.log), HTTP
# request lines left out.
_STAGES = (
    "2026-04-13 09:07:27,442 - INFO - Process initialization...\r\n"
    "2026-04-13 09:07:31,391 - INFO - Step 1: Loading NSMC dataset from source URLs...\r\n"
    "2026-04-13 09:07:32,294 - INFO - Step 3: Tokenizing dataset (This may take a moment)...\r\n"
    "2026-04-13 09:07:44,779 - INFO - Step 4: Initializing model: gpt2\r\n"
    "2026-04-13 09:08:10,136 - INFO - Step 5: Starting fine-tuning process...\r\n"
    "2026-04-13 09:37:38,232 - INFO - Process initialization (Optimized Mode)...\r\n"
    "2026-04-13 09:37:41,546 - INFO - Step 1: Loading NSMC dataset from source URLs...\r\n"
    "2026-04-13 09:37:42,948 - INFO - Step 3: Tokenizing dataset...\r\n"
    "2026-04-13 09:37:44,978 - INFO - Step 4: Initializing model: gpt2\r\n"
    "2026-04-13 09:37:46,684 - INFO - Step 5: Starting fine-tuning process...\r\n"
    "2026-04-13 09:44:25,893 - INFO - Step 6: Saving fine-tuned model to "
    "'./gpt2-korean-finetuned'\r\n"
    "2026-04-13 09:44:26,607 - INFO - Step 7: Running inference tests...\r\n"
    "2026-04-13 09:44:30,873 - INFO - Process completed successfully.\r\n")
_DONE = "2026-04-13 09:44:30,873 - INFO - Process completed successfully.\r\n"


def test_a_pipeline_that_went_on_past_its_training_stage_and_finished_is_go(tmp_path: Path):
    """`Step 5: Starting fine-tuning process...` then `Step 6: Saving fine-tuned model`:
    the training stage returned, and the run says it completed."""
    data = once(tmp_path, _STAGES)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    assert "could not read" not in data["summary"]


def test_a_launch_that_stops_at_its_training_stage_is_no_evidence(tmp_path: Path):
    """The first launch only: its training stage began and nothing followed it. A
    completion line after that (here the third launch's, without its stages) is still
    unread: the stage after training of *this* launch was never printed."""
    first = "".join(line + "\r\n" for line in _STAGES.split("\r\n")[:5])
    data = once(tmp_path, first + _DONE)
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert "could not read training progress" in data["summary"]


def test_stages_after_a_relaunch_must_pass_training_again(tmp_path: Path):
    """`Step 1` again begins a new launch: the first launch's training stage does not
    count for the second, which stops at its own `Step 5` (lines 1-5, then 6-10)."""
    lines = _STAGES.split("\r\n")
    text = "".join(line + "\r\n" for line in lines[:10])
    data = once(tmp_path, text + _DONE)
    assert "could not read training progress" in data["summary"]


def test_stages_that_only_load_training_data_are_not_training(tmp_path: Path):
    """`Step 2: Loading training data` names the training's data, not the training."""
    text = ("2026-04-13 09:07:31,391 - INFO - Step 1: Loading config\n"
            "2026-04-13 09:07:31,391 - INFO - Step 2: Loading training data\n"
            "2026-04-13 09:07:31,391 - INFO - Step 3: Writing report\n" + _DONE)
    data = once(tmp_path, text)
    assert "could not read training progress" in data["summary"]


# sdatkinson/neural-amp-modeler's A2 closing summary, the whole log
# (tests/fixtures/logs/public/sealed-8/
# nam_a2_two_model_esr_summary_might_sound_ok_model_training_complete.log).
_NAM = ("Error-signal ratio (channels_3) = 0.02888\n"
        "Error-signal ratio (channels_8) = 0.007281\n"
        "Aggregate error-signal ratio = 0.03616\n"
        "...This *might* sound ok!\n"
        "Model training complete!\n")


def test_a_trainers_closing_figures_and_its_completion_line_are_go(tmp_path: Path):
    """The trained model's error-signal ratios are its evaluation: with the completion
    line, a finished run babysit read, its figures in the verdict's final metrics."""
    data = once(tmp_path, _NAM)
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    assert data["final_metrics"]["eval/error_signal_ratio_channels_8"] == 0.007281
    assert data["final_metrics"]["eval/aggregate_error_signal_ratio"] == 0.03616


def test_figures_that_name_no_measure_are_not_an_evaluation(tmp_path: Path):
    """`Sample rate = 48000`, `Latency = 0.5`: numbers, but not what a model scores."""
    text = "Sample rate = 48000\nLatency = 0.5\nModel training complete!\n"
    data = once(tmp_path, text)
    assert data["decision"] == "CONDITIONAL", data["summary"]
    assert "could not read training progress" in data["summary"]


def test_closing_figures_are_not_judged_as_a_curve(tmp_path: Path):
    """Two report blocks of one figure (MLatom's `MSE = …` for its training and its test
    set, sealed-8's mlatom_fortran_kreg_krr_report_blocks_…_saved.log): isolated
    figures, not evaluations getting worse."""
    text = ("   MSE =          -0.0000000010136\n"
            "   MSE =           0.0000000985515\n"
            "Model training complete!\n")
    data = once(tmp_path, text)
    assert not [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"]
    assert data["decision"] == "GO", data["summary"]


def test_settings_that_name_a_measure_are_not_an_evaluation(tmp_path: Path):
    """A configuration printed before training (`Mixed precision: 16`, `max error =
    0.01`) names a measure but is no score: a log of only these and a completion line
    is still unread."""
    text = "Mixed precision: 16\nmax error = 0.01\nModel training complete!\n"
    data = once(tmp_path, text)
    assert "could not read training progress" in data["summary"], data["summary"]

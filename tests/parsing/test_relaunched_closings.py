"""A closing line that ended each launch or configuration in one log is the last one's end
too, not a stage's. Shapes quoted from sealed-4's
dyt_transformer_notebook_six_config_sweep_train_eval_top_k_finished.log (six
configurations in one notebook cell) and sealed's
raifhack_lightgbm_appended_reruns_crash_then_end.log (train.py run again and again into
one log)."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.launch_ends import LaunchEnds
from tests.core.test_endings import once
from tests.parsing.test_closing import judged_after_records


def _config(name: str, loss: float, seconds: float, epochs: int = 5) -> list[str]:
    lines = [f"training with: {name}", f"Starting training for {epochs} epochs, using cuda."]
    for epoch in range(epochs):
        lines += [f"starting epoch: {epoch}", "",
                  f"Train -   loss: {loss - 0.2 * epoch:.2f}     top-1: 0.21    top-5: 0.33",
                  f"Eval -    loss: {loss - 0.15 * epoch:.2f}     top-1: 0.21    top-5: 0.33",
                  "Tom doesn't often read books.", "."]
    return [*lines, "", f"training time:  {seconds}", "-------------------------"]


def test_a_sweep_whose_every_configuration_ends_alike_finished(tmp_path: Path):
    lines = _config("DyTBoth", 5.37, 872.6430130004883) \
        + _config("DyTBothAlpha=0.05", 4.3, 865.0703842639923) \
        + _config("DyTBothHardtanh", 3.3, 932.1456220149994)
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


def test_the_next_configuration_started_is_no_end(tmp_path: Path):
    lines = _config("DyTBoth", 5.37, 872.6) + _config("DyTBothAlpha=0.05", 5.85, 865.0)
    lines += _config("DyTBothHardtanh", 5.71, 932.1)[:9]  # its second epoch under way
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED" and data["decision"] != "GO", data["summary"]


@pytest.mark.parametrize(("plan", "after"), [
    (True, "epoch time:  {time}.5"), (True, "Test accuracy: {acc:.2f}"),
    (False, "Test accuracy: {acc:.2f}")])
def test_a_line_after_each_epoch_under_the_epoch_header_is_no_end(
        tmp_path: Path, plan: bool, after: str):
    """`starting epoch: N` is a start-up line (printed once before the first record) and
    the run's header at every epoch: the epoch's `epoch time` or per-epoch `Test accuracy`
    followed by it is no launch's end, however the log stops after one."""
    lines = ["Starting training for 50 epochs, using cuda."] if plan else []
    for epoch in range(12):
        lines += [f"starting epoch: {epoch}",
                  f"Train -   loss: {5.0 - 0.1 * epoch:.2f}     top-1: 0.21",
                  after.format(time=80 + epoch % 3, acc=0.5 + 0.01 * epoch)]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED" and data["decision"] != "GO", data["summary"]


def test_a_start_up_line_printed_between_most_records_is_a_header():
    ends = LaunchEnds()
    for _ in range(6):  # `Test accuracy`, then `starting epoch: N`, at every epoch
        ends.start_up_again("starting epoch: #", after_close=True)
        ends.trained(["Test accuracy: #"])
    assert ends.recurs("Test accuracy: #")
    sweep = LaunchEnds()
    for config in range(3):  # five records a configuration, then its end and the next start
        for _ in range(4):
            sweep.trained([])
        if config:
            sweep.start_up_again("Starting training for # epochs", after_close=True)
        sweep.trained(["training time: #"] if config else [])
    assert not sweep.recurs("training time: #")


def _launch(stamp: str, mape: float, end: bool) -> list[str]:
    lines = [f"2021-09-26 {stamp},696 __main__     INFO     START train.py",
             f"2021-09-26 {stamp},697 __main__     INFO     Load train df",
             f"2021-09-26 {stamp},593 __main__     INFO     Input shape: (251812, 79)",
             f"2021-09-26 {stamp},735 __main__     INFO     Fit model"]
    # (each part's own figures: four parts scoring one RMSE to the digit would be a
    # model whose predictions never change, which flat_scores flags)
    parts = ("offers prices", "manual prices", "offers prices (cv)", "manual prices (cv)")
    for i, part in enumerate(parts):
        lines.append(f"2021-09-26 {stamp},240 __main__     INFO     Metrics stat for training "
                     f"data with {part}: {{'mape': {mape}, 'mdape': 0.38, "
                     f"'rmse': {157244.6 + 5210.3 * i:.1f}, 'r2': 0.22}}")
    lines.append(f"2021-09-26 {stamp},322 __main__     INFO     Save models (cv)")
    if end:
        lines.append(f"2021-09-26 {stamp},231 __main__     INFO     END train.py")
    return lines


def test_a_script_run_again_into_its_log_ends_with_its_last_launch(tmp_path: Path):
    lines = _launch("03:32:07", 0.48, True) + _launch("04:00:46", 0.47, True) \
        + _launch("05:19:39", 0.47, True)
    lines += ["2021-09-26 05:20:19,552 __main__     INFO     START predict.py",
              "2021-09-26 05:20:31,903 __main__     INFO     Save results (cv)",
              "2021-09-26 05:20:31,919 __main__     INFO     END predict.py"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


def test_the_last_launch_that_has_not_said_it_ended_is_no_end(tmp_path: Path):
    lines = _launch("03:32:07", 0.48, True) + _launch("04:00:46", 0.47, True) \
        + _launch("05:19:39", 0.47, False)
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] != "SUCCEEDED" and data["decision"] != "GO", data["summary"]


def test_the_time_a_whole_run_took_closes_it():
    """Ray Tune's last words as `fit()` returns (GokuMohandas/Made-With-ML, sealed-5's
    made_with_ml_ray_train_notebook_10_checkpoints_total_run_time.log), after a few
    training records; the same words after the first record only are no end yet."""
    from babysit.parsing.closing import CLOSING, ClosingBlock
    line = ("2023-09-18 21:59:12,318\tINFO tune.py:1143 -- Total run time: 73.40 seconds "
            "(73.36 seconds for the tuning loop).")
    event = judged_after_records(line)
    assert event is not None and event.detail == CLOSING
    early = ClosingBlock()
    early.trained()
    early.add(line)
    assert early.judge() is None


def _session(start: float, last: int) -> list[str]:
    # A C++ framework's loop (sealed-13's mytorch log): `step: N | loss: … | time: 5072ms`
    # from step 0 each session, then the model written out whole.
    lines = [f"step: {s} | loss: {start - s / 20000:.6f} | grad_norm: 0.2 | lr: 1e-05 | "
             f"time: 5070ms" for s in range(0, last + 1, 50)]
    return [*lines, "Saved model to data/big.mytorch"]


def test_a_model_written_out_whole_after_each_session_ends_the_last_too(tmp_path: Path):
    """Said after each of three sessions (the steps start again at 0 after it), the same
    save line is each session's end, the last one's too — though the very same line said
    before is otherwise passed over as a repeat."""
    load = "Loading model from data/big.mytorch"
    lines = [*_session(0.7, 2000), load, *_session(0.6, 3950), load, *_session(0.55, 3950)]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]


@pytest.mark.parametrize("save", [
    "Saving model to ckpt/model_epoch3.pt",  # a checkpoint named by its count
    "saved model to checkpoint-500/",
])
def test_a_checkpoint_named_by_its_count_is_no_end(tmp_path: Path, save: str):
    lines = [f"step: {s} | loss: {1 - s / 5000:.4f}" for s in range(0, 2001, 50)]
    data = once(tmp_path, "\n".join([*lines, save]) + "\n")
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_save_said_between_the_records_of_one_run_is_no_end(tmp_path: Path):
    lines: list[str] = []
    for s in range(0, 2001, 50):
        lines.append(f"step: {s} | loss: {1 - s / 5000:.4f}")
        if s % 500 == 0:
            lines.append("Saved model to out/model.pt")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "RUNNING", data["summary"]

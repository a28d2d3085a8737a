"""How a run's end is read, round four: the shapes of finished, ended and live runs from
the held-out sets that babysit read wrong (issue 23, endings round four).

Each log is rebuilt small, with made-up values, from the shape of the public log named at
its test (tests/fixtures/logs/public/<split>/), and each finished or ended shape is set
beside the same shape cut off mid-run, which stays RUNNING."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.parser import LogParser
from tests.core.test_endings import once


def _verdict(tmp_path: Path, lines: list[str]) -> tuple[str, str]:
    data = once(tmp_path, "\n".join(lines) + "\n")
    return data["terminal_state"], data["decision"]


# --- an excerpt that begins on an epoch's evaluation -------------------------------------


def _msg3d(epochs: range) -> list[str]:
    # sealed-10/msg3d_kinetics_skeleton_processor_epochs_46_to_49_top1_34pct.log: the
    # excerpt opens on the evaluation of the epoch before it, which the run prints after
    # every epoch; the log is a live run's, cut after an evaluation.
    stamp = "[ Mon Oct 21 18:13:02 2019 ]"
    lines = [f"{stamp} \tMean test loss of 155 batches: 3.2{epochs[0]}.",
             f"{stamp} \tTop1: 33.4%", f"{stamp} \tTop5: 56.4%"]
    for epoch in epochs:
        lines += [f"{stamp} Training epoch: {epoch}, LR: 0.0100",
                  f"{stamp} \tMean training loss: 1.{30 - epoch}9 (BS 32: 2.59).",
                  f"{stamp} \tTime consumption: [Data]00%, [Network]99%",
                  f"{stamp} Eval epoch: {epoch}",
                  f"{stamp} \tMean test loss of 155 batches: 3.1{epoch}.",
                  f"{stamp} \tTop1: 34.{epoch}%", f"{stamp} \tTop5: 57.{epoch}%"]
    return lines


def test_an_evaluation_the_excerpt_began_on_is_no_launch_ending_the_run(tmp_path: Path):
    """The periodic evaluation at the top is read as the run's start-up; printed again
    after each epoch it is not a launch's end (a line cannot end a launch by beginning
    the next), so the last one is the run's per-epoch evaluation: still running."""
    assert _verdict(tmp_path, _msg3d(range(7, 10))) == ("RUNNING", "CONDITIONAL")


# --- a field after the epoch is no total --------------------------------------------------


def _demucs(epoch: int) -> list[str]:
    # sealed-9/demucs_hydra_solver_valid_epoch_10_new_best_valid_loss_last_lines.log: the
    # tail of a live run, its epoch's cross-validation with `|` between the fields.
    head = "[04-24 12:58:25][demucs.solver][INFO] -"
    lines = [f"{head} Cross validation..."]
    lines += [f"{head} Valid | Epoch {epoch} | {i}/5 | 0.9 it/sec | Loss 0.4{i} | Reco 0.4{i}"
              for i in range(1, 5)]
    lines += [f"{head} Valid Summary | Epoch {epoch} | Loss=0.41 | Reco=0.41 | Best=0.41",
              f"{head} New best valid loss 0.41"]
    return lines


def test_an_epoch_past_the_number_after_it_is_no_epoch_of_a_plan(tmp_path: Path):
    """`Epoch 8 | 4/5`: the 4 is the batch counter's, not a plan of 4 epochs that epoch 8
    went past."""
    assert _verdict(tmp_path, _demucs(8)) == ("RUNNING", "CONDITIONAL")


# --- rows read before a bare shape is believed --------------------------------------------


def _optim_logger(rows: int) -> list[str]:
    # sealed-10/torch7_lua_optim_logger_single_column_mnist_train_acc_plateau_39pct_250_
    # epochs.log: Torch7's optim.Logger file, its header and one accuracy a line.
    return ["% mean class accuracy (train set)\t",
            *(f" {14.5 + 25 * i / rows:.4e}\t" for i in range(rows))]


def test_every_row_of_a_one_column_file_is_a_record():
    parser = LogParser()
    records = parser.feed_lines(_optim_logger(12))
    assert [r.step for r in records if r.metrics][-1] == 12


@pytest.mark.parametrize(("rows", "state"), [(100, "ENDED"), (97, "RUNNING")])
def test_a_one_column_file_stopping_at_a_round_count_of_epochs_ended(
        tmp_path: Path, rows: int, state: str):
    assert _verdict(tmp_path, _optim_logger(rows))[0] == state


# --- the epoch a header announced, against the configuration's plan -----------------------


def _style_transfer(epochs: int, dev_at_end: bool = True) -> list[str]:
    # sealed-10/tf1_style_transfer_ipython_title_escape_20_epochs_dev_loss_best_epoch12_
    # then_worse.log: a config dict, a banner per epoch, its steps, then its `dev loss`.
    lines = ["{   'batch_size': 64,", "    'max_epochs': 3,", "    'learning_rate': 0.0005}"]
    step = 0
    for epoch in range(1, epochs + 1):
        lines.append(f"{'-' * 20}epoch {epoch}{'-' * 20}")
        for _ in range(4):
            step += 1000
            lines.append(f"step {step}, time {step // 3}s, loss 4{epoch}.5, rec 33.1, "
                         f"adv 1{epoch}.4, d0 0.32, d1 0.27")
        if dev_at_end or epoch < epochs:
            lines.append(f"dev loss 2{epoch}.01, rec 19.32, adv {epoch}.69, d0 1.23, d1 4.73")
    return lines


def test_the_last_planned_epoch_evaluated_is_the_end(tmp_path: Path):
    assert _verdict(tmp_path, _style_transfer(3)) == ("SUCCEEDED", "GO")


@pytest.mark.parametrize("lines", [_style_transfer(2), _style_transfer(3, dev_at_end=False)],
                         ids=["an-earlier-epoch", "the-last-epoch-not-evaluated-yet"])
def test_short_of_the_last_planned_epoch_s_evaluation_it_runs(tmp_path: Path, lines: list[str]):
    assert _verdict(tmp_path, lines)[0] == "RUNNING"


def test_a_split_named_once_at_the_head_names_every_field_after_it():
    parser = LogParser()
    parser.feed_lines(["step 1000, time 300s, loss 45.5, rec 33.1, adv 12.4"] * 3)
    record = parser.feed_lines(["dev loss 24.01, rec 19.32, adv 4.69"])[-1]
    assert record.metrics == {"dev_loss": 24.01, "eval/rec": 19.32, "eval/adv": 4.69}


# --- the run's best epoch, named once the loop is over ------------------------------------


def _nice_eeg(last: int) -> list[str]:
    # sealed-15/nice_eeg_epochs_190_to_199_best_epoch_54_test_top1_then_array_dump.log
    return [f"Epoch {e}: Cos eeg: 4.2{e % 10}, Cos img: 4.2{e % 7}, loss val: 5.5{e % 9}"
            for e in range(last - 9, last + 1)]


def test_the_best_epoch_named_after_the_last_is_the_end(tmp_path: Path):
    lines = [*_nice_eeg(49), "The best epoch is: 12",
             "The test Top1-0.215000, Top3-0.380000, Top5-0.490000"]
    assert _verdict(tmp_path, lines) == ("SUCCEEDED", "GO")


def _e2dtc(epochs: int, best_each: bool = False) -> list[str]:
    # sealed/slurm_e2dtc_trajectory_clustering_acc_declines_best_epoch_first.log: step
    # lines, an evaluation at each epoch, and the best epoch's figures once it is over.
    lines: list[str] = []
    for epoch in range(epochs):
        lines += [f"Iteration: {epoch * 300 + i * 100}\tLoss: -1.{epoch}{i}\tRc Loss: -1.3"
                  f"\tKL Loss: 0.2{i}" for i in range(1, 4)]
        lines.append(f"Epoch {epoch}\tAcc: 0.9{epoch}\tnmi: 0.8{epoch}\tari: 0.7{epoch}")
        if best_each:
            lines.append("Best Epoch 0\tAcc: 0.90\tnmi: 0.80\tari: 0.70")
    return lines


def test_the_best_epoch_s_figures_after_a_separator_close_the_run(tmp_path: Path):
    lines = [*_e2dtc(6), "=================", "Best Epoch 0\tAcc: 0.90\tnmi: 0.80\tari: 0.70"]
    assert _verdict(tmp_path, lines)[0] == "SUCCEEDED"


@pytest.mark.parametrize("lines", [
    _e2dtc(6, best_each=True),  # the best so far, printed at every epoch: not the end
    [*_nice_eeg(49), "New best epoch 49: loss val 5.41"],  # one epoch's news
], ids=["best-so-far-each-epoch", "new-best"])
def test_a_best_epoch_said_along_the_way_is_no_end(tmp_path: Path, lines: list[str]):
    assert _verdict(tmp_path, lines)[0] == "RUNNING"


# --- an excerpt stopping one epoch short of its total --------------------------------------


def _unet(first: int, last: int) -> list[str]:
    # sealed-13/polyp_unet_epoch_bars_train_iou_0_86_val_iou_erratic_0_to_0_45_epoch_299_
    # of_300.log: `Epoch [N/300]`, then the epoch's metrics (its bars left out).
    lines: list[str] = []
    for epoch in range(first, last + 1):
        lines += [f"Epoch [{epoch}/50]",
                  f"loss 0.1{epoch % 10} - iou 0.8{epoch % 10} - val_loss 0.2{epoch % 7} - "
                  f"val_iou 0.3{epoch % 5}"]
    return lines


def test_an_excerpt_stopping_one_short_of_its_total_ended(tmp_path: Path):
    """Begun at epoch 40, the log does not show whether the run counts from 0 (then 49
    is its last epoch) or from 1: the run ended, its outcome not confirmed."""
    assert _verdict(tmp_path, _unet(40, 49)) == ("ENDED", "CONDITIONAL")


def test_an_excerpt_stopping_two_short_of_its_total_runs(tmp_path: Path):
    assert _verdict(tmp_path, _unet(40, 48))[0] == "RUNNING"


def test_a_run_counting_from_one_one_short_of_its_total_runs(tmp_path: Path):
    assert _verdict(tmp_path, _unet(1, 49))[0] == "RUNNING"


# --- a loop's last iteration printed off its grid, then its results -----------------------


def _spinn(last: int, dump: bool = True) -> list[str]:
    # sealed-14/jax_equinox_spinn_total_loss_rising_5000_steps.log: `Step: i` printed when
    # `i % 1000 == 0` and at the loop's last iteration, then the learned weights printed.
    lines = ["initialize the neural network"]
    steps = [*range(0, last, 1000), last]
    lines += [f"Step: {s}, All Loss: {38 + s / 100:.4f}, Smooth Loss: {17 - s / 1000:.4f}"
              for s in steps]
    if dump:
        lines += ["[ 0.          0.         -3.4338622  -0.25814262  0.", "  0.2046  0.        ]"]
    return lines


def test_a_last_step_one_short_of_the_grid_then_the_results_is_the_planned_end(
        tmp_path: Path):
    assert _verdict(tmp_path, _spinn(4999)) == ("SUCCEEDED", "GO")


def test_a_last_step_one_short_of_the_grid_and_nothing_after_is_the_planned_end(
        tmp_path: Path):
    # The loop's own print of its last iteration is the evidence, whatever follows
    # (sealed-106's Equinox score-diffusion log ends at `Step=999999` after `Step=990000`,
    # and its collector read it as finished): the last planned step ran.
    assert _verdict(tmp_path, _spinn(4999, dump=False)) == ("SUCCEEDED", "GO")


@pytest.mark.parametrize("lines", [_spinn(4000), _spinn(4998)], ids=["on-the-grid", "two-short"])
def test_a_step_on_the_grid_or_off_it_by_more_is_no_end(tmp_path: Path, lines: list[str]):
    assert _verdict(tmp_path, lines)[0] == "RUNNING"


# --- a FATAL line of ProcessGroupNCCL ------------------------------------------------------

_NCCL_STUCK = [
    # sealed-12/vlm_r1_grpo_rank6_nccl_watchdog_stuck_480s_fatal_terminate_hard_wrapped_116_
    # cols.log: one rank's error output, hard-wrapped by the terminal it was copied from.
    "[rank3]:[E512 10:01:02.123456789 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_p",
    "g) Rank 3] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progres",
    "[rank3]:[E512 10:01:02.123556789 ProcessGroupNCCL.cpp:1533] [PG ID 0 PG GUID 0(default_p",
    "g) Rank 3] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1",
]


def test_a_fatal_line_of_the_nccl_process_group_fails_the_run(tmp_path: Path):
    lines = [*_NCCL_STUCK,
             "[rank3]:[F512 10:09:02.124456789 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID 0"]
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")
    assert "nccl" in {a["type"] for a in data["anomalies_detected"]}


def test_the_watchdog_preparing_its_dump_is_not_yet_the_end(tmp_path: Path):
    assert _verdict(tmp_path, _NCCL_STUCK)[0] == "RUNNING"

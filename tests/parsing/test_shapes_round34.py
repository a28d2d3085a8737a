"""Shapes read and judged since the thirty-fourth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

import math
from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.events import find_events
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- Job control's report of a suspended job ------------------------------------------------


def test_a_job_suspended_by_ctrl_z_is_a_run_its_owner_stopped(tmp_path: Path):
    # LightGCN-PyTorch under bash: the first epoch, then Ctrl-Z and bash's job report.
    artifact = verdict_of(tmp_path, [
        "[TEST]",
        "{'precision': array([0.00018755]), 'recall': array([0.00053749]), "
        "'ndcg': array([0.00040836])}",
        "EPOCH[1/1000] loss0.545-|Sample:10.23|",
        "^Z",
        "[1]+  Stopped                 python main.py --decay=1e-4 --lr=0.001 --layer=3"])
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "CANCELLED")


def test_each_shells_word_for_a_suspended_job_is_read():
    for line in ("[2]-  Stopped (tty output)   python train.py",
                 "zsh: suspended  python train.py --epochs 10",
                 "fish: Job 1, 'python train.py' has stopped"):
        assert any(e.kind is EventKind.STOPPED_BY_SIGNAL for e in find_events(line)), line


def test_the_word_stopped_in_a_sentence_is_no_suspension():
    assert not any(e.kind is EventKind.STOPPED_BY_SIGNAL
                   for e in find_events("Stopped training the decoder, fine-tuning the head"))


# -- Early stopping said with an auxiliary --------------------------------------------------


def test_early_stopping_is_trigger_ends_the_run_by_its_plan(tmp_path: Path):
    # NeuRec (SGL): one loss line and one ranking line an epoch, then its stop.
    lines = []
    for e in range(1, 27):
        lines.append(f"2022-04-13 03:51:53.283: [iter {e} : loss : {7.03 - 0.02 * e:.4f} = "
                     f"{0.69 / e:.4f} + 6.3429 + 0.0607, time: 358.625938]")
        lines.append(f"2022-04-13 03:52:04.757: epoch {e}:\t{0.002 + 0.0007 * min(e, 16):.8f}"
                     f"  \t0.04699227  \t0.03658790  ")
    lines += ["2022-04-13 03:58:15.441: Early stopping is trigger at epoch: 26",
              "2022-04-13 03:58:15.441: best_result@epoch 16:"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


# -- A dict of counts is no record; the time training took, said after it -------------------


def test_a_dict_of_whole_numbers_under_names_that_measure_nothing_is_no_record():
    assert not _records(["0: {'create_model': 1, 'train_validate_test': 1}"])
    assert _records(["{'loss': 2, 'epoch': 1}"])  # a metric's name: a record


def _hydragnn(epochs: int, tail: list[str]) -> list[str]:
    lines = []
    for e in range(epochs):
        rmse = 0.16 + 0.45 * math.exp(-e / 20)
        lines.append(f"0: Epoch: {e:02d}, Train RMSE: {rmse:.8f}, Val RMSE: {rmse + 0.025:.8f}, "
                     f"Test RMSE: {rmse + 0.04:.8f}")
        lines.append(f"0: Tasks RMSE: [{rmse:.8f}]")
    return lines + tail


def test_a_round_count_of_epochs_then_the_time_training_took_is_the_plans_end(tmp_path: Path):
    artifact = verdict_of(tmp_path, _hydragnn(200, [
        "0: Process 0 - Local timer:  train_validate_test  :  10939.83",
        "0: Process 0 - Local timer:  create_model  :  0.01",
        "0: Number of calls to timers: ",
        "0: {'create_model': 1, 'train_validate_test': 1}"]))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_the_same_epochs_with_nothing_after_them_are_over_not_confirmed(tmp_path: Path):
    assert verdict_of(tmp_path, _hydragnn(200, []))["terminal_state"] == "ENDED"


def test_a_time_the_run_printed_at_every_epoch_is_no_end(tmp_path: Path):
    lines = []
    for e in range(137):
        lines.append(f"Epoch: {e}, Train RMSE: {0.3 - 0.001 * e:.6f}")
        lines.append(f"train time: {35 + e % 3}.2s")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- An evaluation that ran away and ends there --------------------------------------------


def test_an_evaluation_that_ran_away_and_holds_its_new_level_to_the_end_is_a_blocker(
        tmp_path: Path):
    # DeepAR: test RMSE 4.9 at its best, then thousands, held flat to the planned end.
    rmse = [6.1, 4.924, 5.3, 7133.0, 11170.0, 14830.0, 21060.0, 21180.0, 21150.0, 21170.0,
            21160.0, 21175.0, 21168.0, 21171.0, 21169.0, 21170.0, 21166.0, 21172.0, 21170.0,
            21169.0]
    lines = []
    for e, value in enumerate(rmse, start=1):
        lines.append(f"Epoch {e}/20 train_loss: {1.9 - 0.002 * e:.4f}")
        lines.append(f"Epoch {e}/20 test_loss: {7.2 + 0.05 * min(e, 18):.4f} "
                     f"eval/rmse: {value}")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO", artifact["summary"]
    assert any(a["type"] == "eval-degradation" and a["severity"] == "blocker"
               for a in artifact["anomalies_detected"])


# -- A held-out score perfect before training -----------------------------------------------


def test_a_validation_auc_perfect_from_iteration_0_is_an_evaluation_that_measures_nothing(
        tmp_path: Path):
    lines = [f"Iteration: {i}, validation AUC: 1.0" for i in range(51)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "impossible-metric" and "perfect" in a["description"]
               for a in artifact["anomalies_detected"])


def test_a_validation_score_that_reaches_perfect_by_training_is_no_alarm(tmp_path: Path):
    lines = [f"Iteration: {i}, validation AUC: {min(1.0, 0.7 + 0.05 * i):.4f}"
             for i in range(51)]
    assert not any(a["type"] == "impossible-metric"
                   for a in verdict_of(tmp_path, lines)["anomalies_detected"])


def test_a_perfect_score_first_seen_late_in_a_run_is_no_alarm(tmp_path: Path):
    # an excerpt that opens at iteration 4000 of a converged fine-tune
    lines = [f"Iteration: {4000 + 10 * i}, validation accuracy: 1.0" for i in range(30)]
    assert not any(a["type"] == "impossible-metric"
                   for a in verdict_of(tmp_path, lines)["anomalies_detected"])


# -- A summary within one logging interval of the plan ----------------------------------------


def _estimator(last: int) -> list[str]:
    lines = ["{'train_file_pattern': 'train_data.csv', 'output_dir': 'trained_model', "
             "'batch_size': 16, 'train_steps': 1000, 'eval_delay_secs': 10}"]
    for step in range(1, last + 1, 100):
        lines.append("INFO:tensorflow:global_step/sec: 1.60418")
        lines.append(f"INFO:tensorflow:loss = {2.0 / step:.6g}, step = {step} (62.337 sec)")
    lines += [f"INFO:tensorflow:Saving checkpoints for {last + 99} into trained_model/model.ckpt.",
              "INFO:tensorflow:Loss for final step: 0.002."]
    return lines


def test_the_estimators_final_line_one_print_short_of_the_plan_is_its_end(tmp_path: Path):
    # prints every 100 steps: `step = 901` is its last print of a 1000-step plan
    assert verdict_of(tmp_path, _estimator(901))["terminal_state"] == "SUCCEEDED"


def test_the_estimators_final_line_well_short_of_the_plan_is_an_early_stop(tmp_path: Path):
    assert verdict_of(tmp_path, _estimator(501))["terminal_state"] == "ENDED"

"""Shapes read and judged since the forty-third session, each on lines written in the real
shape of a public log (sealed-132 to sealed-137, each scored blind first; sealed-130's
misses)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from babysit.parsing.completion_words import says_finished
from babysit.parsing.log_prefix import message
from babysit.parsing.parser import LogParser
from babysit.parsing.schedule_tail import at_its_end
from tests.rules.test_loss_rules import verdict_of


def _record(line: str) -> Any:
    return LogParser().feed(line)


def _open(artifact: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- an evolutionary search: its generation counts, its best fitness judged -------------

def _neat_generation(generation: int, best: float, average: float) -> list[str]:
    return [f" ****** Running generation {generation} ****** ", "",
            f"Population's average fitness: {average:.5f} stdev: 7.07762",
            f"Best fitness: {best:.5f} - size: (3, 12) - species 1 - id 1",
            "Average adjusted fitness: 0.860",
            "Population of 200 members in 1 species:",
            "   ID   age  size  fitness  adj fit  stag",
            "  ====  ===  ====  =======  =======  ====",
            f"     1  {generation:>3}   200     {best:.1f}    0.860  {generation:>4}",
            "Total extinctions: 0", "Generation time: 2.800 sec", ""]


def test_a_search_whose_best_fitness_never_moved_from_its_first_generation_is_not_learning(
        tmp_path: Path):
    lines: list[str] = []
    for generation in range(23):
        lines += _neat_generation(generation, 50.42, 43.8 + 0.2 * min(generation, 20))
    artifact = verdict_of(tmp_path, lines)
    assert ("not-learning", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_search_whose_best_fitness_climbs_is_not_flagged(tmp_path: Path):
    lines: list[str] = []
    for generation in range(23):
        lines += _neat_generation(generation, 50.42 + generation, 43.8 + generation)
    assert ("not-learning", "blocker") not in _open(verdict_of(tmp_path, lines))


def test_a_genetic_algorithm_stuck_one_short_and_then_solved_finishes_go(tmp_path: Path):
    # A string-matching GA: its fitness counts mismatches (lower is better), held at 1 for
    # hundreds of generations, then 0 and the process exits 0.
    lines = [f"Generation: {g}\tString: I Tove Java 21 and Testing\tFitness: {max(1, 24 - g)}"
             for g in range(400)]
    lines += ["Generation: 400\tString: I love Java 21 and Testing\tFitness: 0", "",
              "Process finished with exit code 0"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["total_steps"] == 400
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_generation_opening_its_line_is_the_step():
    record = _record("Generation: 3\tString: VYOo!e%&hv&[S1xw\tFitness: 22")
    assert record is not None and record.step == 3 and record.metrics["fitness"] == 22


# -- a trading agent's evaluation: its split after an arrow, its measures by name -------

def test_a_split_then_an_arrow_heads_a_trading_evaluation():
    record = _record("  Val  →  Sharpe=0.081  Return=-0.2%  MaxDD=10.1%  WinRate=41.3%")
    assert record is not None
    assert record.metrics["eval/sharpe"] == 0.081 and record.metrics["eval/maxdd"] == 10.1
    record = _record("epoch 3 Sharpe=0.081")
    assert record is not None and record.metrics == {"sharpe": 0.081}
    # a line of names that measure nothing stays unread
    assert _record("Val  →  foo=1  bar=2") is None


# -- a hyperparameter search says it finished ------------------------------------------

def test_a_hyperparameter_search_that_finished_says_so():
    for line in ("Multi-stage tuning completed. Results saved to results/tuning/x",
                 "HYPERPARAMETER SEARCH COMPLETE", "Hyperparameter search finished",
                 "Sweep finished"):
        assert says_finished(line), line
    for line in ("Beam search done", "Tuning stage 2 completed", "tuning is not done"):
        assert not says_finished(line), line


# -- torchlight's `[%m.%d.%y|%X]` head (ST-GCN, mmskeleton) ------------------------------

def test_a_date_and_time_joined_by_a_bar_is_a_loggers_head():
    assert message("[04.29.20|17:42:13] Training epoch: 149") == "Training epoch: 149"
    assert message("[04.29.20|17:42:13] \tmean_loss: nan").strip() == "mean_loss: nan"


def test_stgcn_epochs_behind_their_head_reach_the_plan_the_config_gives(tmp_path: Path):
    lines = ["[04.29.20|17:42:13] Parameters:",
             "{'work_dir': './work_dir', 'phase': 'train', 'start_epoch': 0, "
             "'num_epoch': 12, 'base_lr': 0.1, 'optimizer': 'SGD'}", ""]
    for epoch in range(12):
        lines += [f"[04.29.20|17:42:13] Training epoch: {epoch}",
                  f"[04.29.20|17:42:13] \tmean_loss: {1.4 - 0.1 * epoch:.4f}",
                  "[04.29.20|17:42:13] Time consumption:", "[04.29.20|17:42:13] Done."]
    lines += ["[04.29.20|17:43:00] The model has been saved as ./work_dir/epoch12_model.pt.",
              "[04.29.20|17:43:00] Eval epoch: 11",
              "[04.29.20|17:43:01] \tmean_loss: 0.3400",
              "[04.29.20|17:43:01] \tTop1: 90.34%", "[04.29.20|17:43:01] Done."]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- a linear decay one print from zero is the schedule's end -----------------------------

def test_a_linear_decay_reaching_zero_is_its_schedules_end():
    rates = [(99_500 + 100 * i, rate) for i, rate in
             enumerate((2.5e-6, 2.1e-6, 1.7e-6, 1.3e-6, 0.8e-6, 0.4e-6))]
    assert at_its_end(rates)
    # the same decay far from zero: a live run's
    assert not at_its_end([(100 * i, 4e-4 - 4e-7 * i) for i in range(6)])
    # a stepped schedule: no evidence
    assert not at_its_end([(100 * i, r) for i, r in
                           enumerate((1e-3, 1e-3, 1e-4, 1e-4, 1e-5, 1e-5))])


# -- a 0-based count stopping on a round number ran `range(epochs + 1)` -------------------

def test_a_count_from_zero_stopping_on_a_round_number_ended(tmp_path: Path):
    lines = [f"Epoch:{epoch}   Accuracy:{57.1 + 0.3 * epoch:.2f}" for epoch in range(101)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "ENDED"
    lines = [f"Epoch:{epoch}   Accuracy:{57.1 + 0.3 * epoch:.2f}" for epoch in range(98)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- a stop after a failure is the failure's end -------------------------------------------

_WORKER_DIED = [
    "Exception in thread Thread-14:",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.6/threading.py", line 916, in _bootstrap_inner',
    "    self.run()",
    '  File "/usr/local/lib/python3.6/dist-packages/torch/utils/data/dataloader.py", '
    "line 885, in _try_get_data",
    "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'"
    ".format(pids_str)) from e",
    "RuntimeError: DataLoader worker (pid(s) 11404, 11411) exited unexpectedly",
    ""]
_BROKEN_PIPE = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.6/multiprocessing/queues.py", line 240, in _feed',
    "    send_bytes(obj)",
    "BrokenPipeError: [Errno 32] Broken pipe"]
_INTERRUPT = [
    "---------------------------------------------------------------------------",
    "KeyboardInterrupt                         Traceback (most recent call last)",
    "<ipython-input-11-7d923a26add3> in <module>()",
    "----> 4 xmp.spawn(train_models, args=(cfg,), nprocs=8, start_method='fork')",
    "KeyboardInterrupt: "]


def _epochs(count: int) -> list[str]:
    return [f"Epoch {e}/19 - loss: {1.0 / (e + 1):.4f} - acc: {0.5 + 0.02 * e:.4f}"
            for e in range(1, count + 1)]


def test_a_stop_after_a_loader_died_is_the_failures_end(tmp_path: Path):
    artifact = verdict_of(tmp_path, _epochs(3) + _WORKER_DIED + _BROKEN_PIPE + _INTERRUPT)
    assert artifact["terminal_state"] == "FAILED"
    assert "exited unexpectedly" in artifact["summary"]


def test_a_stop_with_only_its_own_echoes_before_it_is_a_stop(tmp_path: Path):
    artifact = verdict_of(tmp_path, _epochs(3) + _BROKEN_PIPE + _INTERRUPT)
    assert artifact["terminal_state"] == "CANCELLED"
    # and a failure the run trained past is no end at all
    artifact = verdict_of(tmp_path, _epochs(2) + _WORKER_DIED + _epochs(4)[2:] + _INTERRUPT)
    assert artifact["terminal_state"] == "CANCELLED"


# -- sealed-134/135: a held-out loss far off its best, tables, counters ------------------

def test_a_validation_loss_that_overflows_beside_a_falling_training_loss_is_divergence(
        tmp_path: Path):
    values = ["5.66", "4.46", "8.73", "8.11", "7.73", "1291.7", "6.40", "750117.875", "inf",
              "inf", "8.277564671749436e+27"]
    lines = [f"STEP: {100 * i}; training loss: {4.6 - 0.2 * i:.4f}, validation loss: {v}"
             for i, v in enumerate(values)]
    artifact = verdict_of(tmp_path, lines)
    assert ("divergence", "blocker") in _open(artifact)


def test_a_held_out_loss_many_times_its_best_on_its_last_evaluations_is_a_blocker(
        tmp_path: Path):
    test = [552956, 70802, 32934, 225722, 10015, 28452, 460854, 132133586, 10145953,
            1016279, 228595, 12699808]
    lines = [f"Epoch {e} train loss {10171 - 180 * e:.3f} test loss {t:.3f}"
             for e, t in enumerate(test)]
    artifact = verdict_of(tmp_path, lines)
    assert ("eval-degradation", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_bits_per_dim_is_a_likelihood_models_training_loss(tmp_path: Path):
    lines = [f"Training. Epoch: 1/10, Datapoint: {64 * i}/50000, Bits/dim: {9.04 - 0.1 * i:.3f}"
             for i in range(1, 5)]
    lines += [f"Training. Epoch: 1/10, Datapoint: {64 * i}/50000, Bits/dim: {v:.3f}"
              for i, v in enumerate((1.16e24, 2.04e24, 2.84e24, 3.27e24, 3.78e24), start=5)]
    artifact = verdict_of(tmp_path, lines)
    assert ("divergence", "blocker") in _open(artifact)


def test_a_table_header_just_printed_names_the_rows_under_it():
    parser = LogParser()
    head = "[2023/06/12 15:52:25] - "
    for line in (head + "Epoch \t Seconds \t LR \t \t Train Loss \t Train Acc",
                 head + "0 \t 8.8 \t \t 0.0200 \t 1.3512 \t 0.5162",
                 head + "1 \t 7.8 \t \t 0.0400 \t 0.6192 \t 0.7785",
                 head + "Total train time: 2.6265 minutes",
                 head + "Test Loss \t Test Acc \t PGD Loss \t PGD Acc"):
        parser.feed(line)
    record = parser.feed(head + "0.2865 \t \t 0.9169 \t 0.4710 \t 0.8047")
    assert record is not None and record.epoch is None
    assert "train_loss" not in record.metrics and "lr" not in record.metrics


def test_an_epoch_number_before_its_word_is_the_epoch():
    record = _record("[994-epoch] time:28.181 | knn acc: 83.121 | loss:7.177 | cl_loss:7.177")
    assert record is not None and record.epoch == 994 and record.metrics["loss"] == 7.177


def test_a_split_with_two_figures_apart_by_a_slash_reads_the_first(tmp_path: Path):
    record = _record("  epoch  1  train 0.7242/0.5541  val 0.6617/0.5950  auc 0.6894  2.2s")
    assert record is not None and record.epoch == 1
    assert record.metrics == {"train": 0.7242, "val": 0.6617, "auc": 0.6894}


def test_confusion_counts_with_no_positive_predicted_are_not_learning(tmp_path: Path):
    lines = ["Starting Training"]
    for epoch in (1, 2):
        lines += [f"Epoch {epoch} Batch 1 | Loss: 0.6{epoch}", f"--- Epoch {epoch}/2 | Loss: "
                  f"0.6{epoch} | Train Acc: 50.8% | Test Acc: 50.0% | CM: [TP:0, TN:13, FP:0, "
                  f"FN:13] | Progress: {50 * epoch}.0% ---"]
    lines += ["", "Final Best Test Accuracy: 50.00%", "Training completed."]
    artifact = verdict_of(tmp_path, lines)
    assert ("not-learning", "blocker") in _open(artifact)
    # a model that predicts positives is not flagged so
    lines = [line.replace("TP:0, TN:13, FP:0, FN:13", "TP:9, TN:11, FP:2, FN:4")
             for line in lines]
    assert ("not-learning", "blocker") not in _open(verdict_of(tmp_path, lines))


def test_a_clock_reading_is_no_figure():
    record = _record("train: [1][92/93]|Tot: 0:06:37 |ETA: 0:00:05 |loss 1986.1856 "
                     "|hm_loss 491.5602")
    assert record is not None
    assert "tot" not in record.metrics and "eta" not in record.metrics
    assert record.metrics["loss"] == 1986.1856


def test_epochs_ending_one_batch_short_count_their_batches_from_zero(tmp_path: Path):
    lines = ["Namespace(arch='hrnet_18', batch_size=8, num_epochs=4, lr=1e-06)",
             "Starting training..."]
    lines += [f"mot/exp |#####| train: [{e}][92/93]|Tot: 0:06:37 |ETA: 0:00:05 "
              f"|loss {1986 - 50 * e:.4f} |hm_loss {491 - 5 * e:.4f}" for e in range(1, 5)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["total_steps"] == artifact["target_steps"] == 372
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_an_abbreviated_no_improvement_stop_is_an_early_stop(tmp_path: Path):
    lines = [f"<epoch: {e}, iter:1000, lr:3.906e-06, loss:{5.6 - 0.01 * e:.3f}, batch:1000 "
             f"utterances>" for e in range(1, 30)]
    lines += ["no improvement, best loss: 5.3619", "Stop training cause no impr for 10 epochs",
              "Training for 29/200 epoches done!"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


# -- sealed-136/137 ----------------------------------------------------------------------

def test_a_negative_cost_climbing_to_zero_by_smaller_steps_is_no_divergence(tmp_path: Path):
    costs = [-85.22, -52.69, -48.42, -45.45, -43.05, -40.92, -39.14, -37.51]
    lines = ["... pre-training the model"]
    lines += [f"Pre-training layer 0, epoch {e}, cost  {c}" for e, c in enumerate(costs)]
    lines += [f"     epoch {e}, minibatch 71/71, best error {40 - e:.6f} %, best_auc: "
              f"{0.64 + 0.001 * e:.6f}" for e in range(1, 12)]
    lines += ["Optimization complete with best validation score of 20.0 %",
              "The code ran for 12.5m"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in _open(artifact) if a[0] == "divergence"], _open(artifact)
    # a loss climbing faster and faster is still a divergence
    lines = [f"step {i} loss {v}" for i, v in enumerate(
        [2.0, 1.5, 1.2, 1.1, 1.0, 0.95, 0.9, 0.92, 1.3, 2.6, 5.9, 12.0, 25.0])]
    assert [a for a in _open(verdict_of(tmp_path, lines)) if a[0] == "divergence"]


def test_an_unbordered_table_names_its_columns_in_words_and_keeps_its_nan_rows():
    parser = LogParser()
    parser.feed(" Epoch  |  Train loss  |  Valid loss  |  Train / Val  |  Valid acc  |  Dur")
    parser.feed("--------|--------------|--------------|---------------|-------------|-------")
    record = parser.feed("     1  |         nan  |         nan  |          nan  |     47.83%  "
                         "|  0.6s")
    assert record is not None and record.epoch == 1
    assert math.isnan(record.metrics["train_loss"]) and record.metrics["valid_acc"] == 47.83


def test_a_summary_of_epochs_run_after_patience_spent_is_the_runs_early_stop(
        tmp_path: Path):
    losses = [0.4457 - 0.007 * e for e in range(49)] + [0.1045] \
        + [0.1078 + 0.0004 * (e % 5) for e in range(20)]
    lines = [f"  [iTransformer] epoch {e + 1:3d}/150  val_loss={v:.4f}  epoch_time=1.0s  "
             f"elapsed={e + 1}s" for e, v in enumerate(losses)]
    lines.append("iTransformer   best_val_loss=0.1045  epochs_run= 69  time= 79.6s")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_the_loops_counter_is_no_start_up_line(tmp_path: Path):
    lines: list[str] = []
    for epoch in range(2):
        lines += ["2023-09-13 19:55:07.305611: ", f"epoch:  {epoch}",
                  f"2023-09-13 20:09:55.016225: train loss : {-0.1 - 0.3 * epoch:.4f}",
                  "2023-09-13 20:10:50.444458: validation loss: 0.5",
                  "2023-09-13 20:10:50.723239: lr: 0.009991",
                  f"2023-09-13 20:10:50.723503: This epoch took {943.4 - epoch:.6f} s", ""]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"

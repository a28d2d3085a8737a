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


def test_a_few_evaluations_below_the_best_without_a_training_loss_stay_quiet(tmp_path: Path):
    rises = [0.509, 0.550, 0.5599, 0.5612]
    artifact = verdict_of(tmp_path, _grouped([*rises, 0.556, 0.553, 0.550, 0.548, 0.546]))
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"]


# -- sealed-167 and sealed-168, after their blind score ------------------------------------

def test_a_counter_back_to_its_start_well_short_of_a_round_is_a_relaunch(tmp_path: Path):
    """deep-text-recognition's `[1/60000]` after `[36000/60000]`, printed every 2,000: a
    relaunch past half its total is no epoch coming round; the last launch's 60000/60000
    ends the run."""
    def launch(last: int) -> list[str]:
        return [f"[{max(n, 1)}/60000] Train loss: {8 / (n + 1):.5f}, Valid loss: "
                f"{9 / (n + 1):.5f}, Elapsed_time: {n / 10:.5f}" for n in range(0, last + 1, 2000)]
    artifact = verdict_of(tmp_path, [*launch(36000), *launch(60000)])
    assert artifact["total_steps"] == 60000 and artifact["target_steps"] == 60000
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_an_old_flower_server_log_reads_its_rounds_and_its_end(tmp_path: Path):
    """Flower before 1.5 behind a Docker Compose service's name: `fit progress: (1,
    66508.69, {'accuracy': 0.43}, 73.9)`, then `FL finished in 834.95`."""
    head = "torch-FedAdam-run | {level} flwr 2023-12-01 19:4{m}:22,251 | {where} | {text}"
    lines = [head.format(level="INFO", m=3, where="app.py:162",
                         text="Starting Flower server, config: ServerConfig(num_rounds=10, "
                              "round_timeout=None)"),
             head.format(level="INFO", m=4, where="server.py:94",
                         text="initial parameters (loss, other metrics): 2.3003, "
                              "{'accuracy': 0.4402}")]
    for r in range(1, 11):
        lines += [head.format(level="DEBUG", m=5, where="server.py:222",
                              text=f"fit_round {r}: strategy sampled 8 clients (out of 8)"),
                  head.format(level="DEBUG", m=5, where="server.py:236",
                              text=f"fit_round {r} received 8 results and 0 failures"),
                  head.format(level="INFO", m=5, where="server.py:125",
                              text=f"fit progress: ({r}, {2.3 * 10 ** r:.1f}, "
                                   f"{{'accuracy': {0.44 - r / 100:.4f}}}, {70.0 * r:.2f})"),
                  head.format(level="DEBUG", m=6, where="server.py:173",
                              text=f"evaluate_round {r}: strategy sampled 8 clients (out of 8)")]
    lines.append(head.format(level="INFO", m=8, where="server.py:153",
                             text="FL finished in 834.95"))
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED" and artifact["decision"] == "NO-GO"
    assert artifact["total_steps"] == 10 and set(artifact["final_metrics"]) == {"loss", "accuracy"}
    assert "divergence" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_simulation_whose_clients_fail_every_round_still_finishes(tmp_path: Path):
    """A Flower simulation: each round's client dies out of memory, the server aggregates
    on, and `Run finished 3 round(s)`: the run ended as it planned, its failures its
    clients' (caught by the server), still a blocker."""
    lines = ["INFO :      Starting Flower simulation, config: num_rounds=3, no round_timeout"]
    for r in range(1, 4):
        lines += [f"INFO :      [ROUND {r}]", "ERROR :     Traceback (most recent call last):",
                  '  File "ray_actor.py", line 401, in get_client_result',
                  "RuntimeError: MPS backend out of memory (MPS allocated: 8.00 MB, other "
                  "allocations: 18.13 GB, max allowed: 18.13 GB).",
                  f"Server: Aggregating fit results for round {r}. 0 clients returned results."]
    lines += ["INFO :      [SUMMARY]", "INFO :      Run finished 3 round(s) in 5514.38s"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED" and artifact["decision"] == "NO-GO"
    assert "oom" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_keras_bar_one_batch_past_its_total_ends_its_plan(tmp_path: Path):
    """A generator one batch longer than `steps_per_epoch`: `1364/1363`, 30 epochs."""
    lines: list[str] = []
    for epoch in range(1, 31):
        lines += [f"Epoch {epoch}/30",
                  f"1364/1363 [==============================] - 402s 295ms/step - loss: "
                  f"{10 / epoch:.4f} - val_loss: {11 / epoch:.4f}"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert artifact["total_steps"] == artifact["target_steps"] == 30 * 1363


def test_a_counter_inside_the_name_is_no_epoch_of_the_value(tmp_path: Path):
    """`training loss in 1 epoch: 2071.04`, then `done all` behind the logger's head."""
    lines = [f"2018-03-24 18:4{n % 10}:54,235 INFO training loss in {n} epoch: "
             f"{2000 / n:.6f}" for n in range(1, 41)]
    lines.append("2018-03-24 19:44:50,217 INFO done all")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert "at epoch 40" in artifact["summary"]


def test_a_loss_that_rises_block_after_block_is_a_divergence(tmp_path: Path):
    """TransE's margin loss, 277 at epoch 40, then higher every fifty epochs to 524."""
    values = [277 + (40 - n) * 20 if n < 40 else 277 + (n - 40) * 0.95 + (3 if n % 2 else -3)
              for n in range(1, 301)]
    lines = [f"INFO training loss in {n} epoch: {v:.6f}" for n, v in enumerate(values, 1)]
    lines.append("INFO done all")
    artifact = verdict_of(tmp_path, lines)
    assert "divergence" in {a["type"] for a in artifact["anomalies_detected"]}
    assert artifact["decision"] == "NO-GO"


def test_a_loss_on_a_level_stays_quiet(tmp_path: Path):
    values = [277 + (40 - n) * 20 if n < 40 else 277 + (5 if n % 3 else -5) for n in range(1, 301)]
    lines = [f"INFO training loss in {n} epoch: {v:.6f}" for n, v in enumerate(values, 1)]
    lines.append("INFO done all")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_ranking_measure_is_read_and_a_mean_rank_is_no_process_rank(tmp_path: Path):
    """ActiveLink's `Hits @10: 0.143560` and `Mean rank: 280.710432` under its test block."""
    lines: list[str] = []
    for n in range(1, 30):
        lines += [f"2020-08-30 16:41:{n:02d},967 INFO  {n} epoch: finished",
                  f"2020-08-30 16:41:{n:02d},968 INFO  Hits @10: {0.1 + n / 1000:.6f}",
                  f"2020-08-30 16:41:{n:02d},969 INFO  Mean rank: {300 - n:.6f}"]
    artifact = verdict_of(tmp_path, lines)
    assert {"hits@10", "mean_rank"} <= set(artifact["final_metrics"])
    assert "straggler" not in {a["type"] for a in artifact["anomalies_detected"]}


def test_hydra_s_last_words_are_a_failure(tmp_path: Path):
    lines = ["[2025-06-01 10:00:00,000][__main__][INFO] - starting",
             "Multiple values for hydra/job_logging. To override a value use 'override "
             "hydra/job_logging: colorlog'", "",
             "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")


def test_words_after_a_cursor_up_are_a_line_of_their_own(tmp_path: Path):
    """Lightning's `` `Trainer.fit` stopped: `max_steps=20` reached.`` written after the
    bar's last frame (cut at the terminal's width, no closing bracket) and tqdm's
    cursor-up."""
    frames = [f"Epoch 0: {100 * n // 27:3d}%|#| {n}/27 [2:{n:02d}:21<00:00, 336.34s/it, "
              f"loss={0.05 - n / 1000:.4f}, v_num=2, train_l" for n in range(1, 21)]
    lines = [*frames[:-1], frames[-1] + "\x1b[A`Trainer.fit` stopped: `max_steps=20` reached."]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_a_plan_s_counter_after_the_epoch_s_own_number(tmp_path: Path):
    """Pointnet2's `**** Epoch 57 (150/150) ****`: a fine-tune resumed at the plan's epoch
    94, its own epochs counted from 1; the last planned epoch's evaluation ends it."""
    lines: list[str] = []
    for own, planned in enumerate(range(94, 151), 1):
        lines += [f"2021-09-09 02:36:27,817 - Model - INFO - **** Epoch {own} ({planned}/150) ****",
                  f"2021-09-09 02:36:28,817 - Model - INFO - Training mean loss: {1 / own:.6f}",
                  f"2021-09-09 02:36:29,817 - Model - INFO - eval mean loss: {0.1 + 1 / own:.6f}"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- sealed-169, after its blind score ------------------------------------------------------

def test_a_ray_actor_s_prefix_is_no_figure():
    from babysit.parsing.log_prefix import message
    assert message("(_dystack pid=16132) AutoGluon training complete, total runtime = 1187.47s") \
        == "AutoGluon training complete, total runtime = 1187.47s"
    assert message("(RolloutWorker pid=85, ip=10.0.0.3) episode_reward_mean: 3.2") \
        == "episode_reward_mean: 3.2"


def test_a_dict_of_hyperparameters_behind_a_prefix_is_settings(tmp_path: Path):
    """AutoGluon's `User-specified model hyperparameters to be fit:`, `{`, then one model
    family a line behind Ray's prefix: settings, never records."""
    head = "(_dystack pid=167306) "
    lines = [head + "User-specified model hyperparameters to be fit:", head + "{",
             head + "\t'CAT': [{}, {'depth': 6, 'l2_leaf_reg': 2.15, 'learning_rate': 0.0686, "
                    "'ag_args': {'name_suffix': '_r177', 'priority': -1}}],",
             head + "\t'XGB': [{}, {'colsample_bytree': 0.69, 'learning_rate': 0.018, "
                    "'max_depth': 10, 'ag_args': {'name_suffix': '_r33', 'priority': -2}}],",
             head + "}",
             *(f"epoch {n} loss {1 / n:.4f}" for n in range(1, 20))]
    artifact = verdict_of(tmp_path, lines)
    assert "learning_rate" not in artifact["final_metrics"]
    assert "lr-schedule" not in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_frame_printed_with_its_index_under_its_header(tmp_path: Path):
    """pandas' `        MAE      RMSE  R-squared` over `0  9.439865  3.446558   0.112432`:
    the index's column unnamed; a line of words far above is no header of such rows."""
    lines = ["Extracting SQL semantic features", *(f"epoch {n} loss {1 / n:.4f}" for n in
                                                     range(1, 10)),
             "        MAE      RMSE  R-squared", "0  9.439865  3.446558   0.112432",
             "1  9.169162  3.408624   0.072182"]
    artifact = verdict_of(tmp_path, lines)
    assert {"mae", "rmse"} <= set(artifact["final_metrics"])
    assert "extracting" not in artifact["final_metrics"]


def test_a_validation_loss_equal_to_the_training_loss_on_the_line_before(tmp_path: Path):
    """A k-fold loop's `Train Loss: 0.00073 | Accuracy: 0.99984`, then `Val Loss: 0.00073 |
    Accuracy: 0.99984` — the same figures, fold after fold: validation on the training data."""
    lines: list[str] = []
    for fold in range(10):
        loss, acc = 0.0007307087653316557 * (fold + 1), 0.9998403787612915 - fold / 1000
        lines += [f"Fold: {fold}", f"Train Loss: {loss!r} | Accuracy: {acc!r}",
                  f"Val Loss: {loss!r} | Accuracy: {acc!r}",
                  f"Test Loss: {0.4 + fold / 100!r} | Accuracy: {0.93 - fold / 100!r}"]
    artifact = verdict_of(tmp_path, lines)
    found = [a for a in artifact["anomalies_detected"] if a["type"] == "impossible-metric"]
    assert found and "training data" in found[0]["description"]


def test_a_failure_whose_own_line_names_a_later_step_is_no_failure_outlived(tmp_path: Path):
    """detectron2's `Exception during training:`, the traceback, `FloatingPointError: Loss
    became infinite or NaN at iteration=14671!`, then its hooks' `Total training time`: the
    run died; the step the error names is no training after it."""
    lines = [f"[08/07 20:13:10 fastreid.utils.events]: eta: 5:36:53  iter: {n}  total_loss: "
             f"{30 - n / 1000:.3f}  lr: 0.00035" for n in range(199, 14600, 200)]
    lines += ["ERROR [08/07 20:13:36 fastreid.engine.train_loop]: Exception during training:",
              "Traceback (most recent call last):",
              '  File "./fastreid/engine/train_loop.py", line 124, in train',
              "    self.run_step()",
              "FloatingPointError: Loss became infinite or NaN at iteration=14671!",
              "[08/07 20:13:36 fastreid.engine.hooks]: Overall training speed: 14669 iterations "
              "in 1:25:28 (0.3496 s / it)",
              "[08/07 20:13:36 fastreid.engine.hooks]: Total training time: 1:25:31 (0:00:02 on "
              "hooks)"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")


def test_recbole_s_end_names_its_best_epoch_and_reloads_it(tmp_path: Path):
    """`Finished training, best eval result in epoch 10`: RecBole keeps its best, so the
    evaluations after it are no worry left open."""
    lines: list[str] = []
    for epoch in range(20):
        recall = 0.40 + min(epoch, 10) / 100 - max(0, epoch - 10) / 400
        lines += [f"epoch {epoch} training [time: 60.0s, train loss: {1700 - epoch * 8:.4f}]",
                  f"epoch {epoch} evaluating [time: 30.0s, valid_score: {recall:.4f}]",
                  f"valid result: recall@20 : {recall:.4f}    mrr@20 : {recall / 3:.4f}"]
    lines += ["Tue 12 May 2026 23:46:10 INFO  Finished training, best eval result in epoch 10",
              "Tue 12 May 2026 23:46:10 INFO  Loading model structure and parameters from "
              "saved/SRGNN-May-12-2026_20-13-38.pth"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "GO", artifact["summary"]


def test_time_for_a_number_of_steps_is_no_step():
    from babysit.parsing.formats import parse_key_values
    assert parse_key_values(" Time for 100 steps:21.07") is None
    parsed = parse_key_values("training loss in 14 epoch: 765.8770705065845")
    assert parsed is not None and parsed.epoch == 14.0


def test_a_job_script_s_tool_complaint_after_the_traceback_is_no_relaunch(tmp_path: Path):
    """A Slurm job's `conda activate` fails before the run and `conda deactivate` after its
    traceback: the script's own lines around the run, not the run launched again."""
    conda = ["usage: conda [-h] [-v] [--no-plugins] [-V] COMMAND ...",
             "conda: error: argument COMMAND: invalid choice: '{verb}' (choose from 'clean', "
             "'compare', 'config', 'create', 'info')"]
    lines = [conda[0], conda[1].format(verb="activate"),
             *(f"epoch {n} | train_loss {1 / n:.4f} | val_loss {1.1 / n:.4f}"
               for n in range(1, 30)),
             "Error executing job with overrides: ['model=ft_transformer']",
             "Traceback (most recent call last):",
             '  File "bin/tune.py", line 151, in main',
             "RuntimeError: Error(s) in loading state_dict for FTTransformer:",
             "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
             conda[0], conda[1].format(verb="deactivate")]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")


def test_names_printed_as_a_list_name_the_lists_of_figures_under_them(tmp_path: Path):
    """An EEGNet demo's `['acc', 'auc', 'fmeasure']`, then `Train -  [0.63, 0.6536,
    0.6408]`, `Validation -  […]`, `Test -  […]` each epoch: validation stays at a
    random ranking's AUC while the model fits its training data."""
    lines: list[str] = []
    for epoch in range(50):
        lines += ["", f"Epoch  {epoch}", "['acc', 'auc', 'fmeasure']",
                  f"Training Loss  {1.42 / (1 + epoch / 5):.11f}",
                  f"Train -  [{0.63 + epoch / 400:.17f}, {0.65 + epoch / 200:.17f}, 0.64]",
                  f"Validation -  [0.5{epoch % 3}, 0.5{(epoch * 7) % 5}, 0.51]",
                  f"Test -  [0.4{epoch % 5}, 0.5{epoch % 2}, 0.52]"]
    artifact = verdict_of(tmp_path, lines)
    assert {"train_acc", "val_auc", "test_fmeasure"} <= set(artifact["final_metrics"])
    assert "not-learning" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_row_with_a_time_at_its_end_is_no_frame_with_an_index(tmp_path: Path):
    """JDE's test table: `Image Total P R mAP` over `32  30353  0  0  0  2.14s`, one cell
    wider than its header for the time at its end, not for an index at its start."""
    from babysit.parsing.shapes import ShapeReader
    reader = ShapeReader()
    for line in ("      Image      Total          P          R        mAP",
                 "         32      30353          0          0          0       2.14s"):
        reader.note(line)
        parsed = reader.read(line)
    assert not (parsed is not None and parsed is not True and parsed is not False
                and "image" in parsed.metrics)

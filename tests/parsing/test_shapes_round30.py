"""Shapes read and judged since the thirtieth session, each on lines written in the real
shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of

# -- A library's own debug output is no record -----------------------------------------------


def test_matplotlibs_font_scoring_on_a_dataclass_repr_is_no_record():
    # matplotlib ≥ 3.5 at DEBUG level, under SpeechBrain's logger head
    head = "2023-10-25 20:56:44,670 - matplotlib.font_manager - DEBUG - findfont: "
    lines = [f"{head}score(FontEntry(fname='/usr/share/fonts/truetype/f{i}.ttf', name='F{i}', "
             f"style='normal', variant='normal', weight={400 + i}, stretch='normal', "
             f"size='scalable')) = {10 + i * 0.1:.3f}" for i in range(20)]
    assert _records(lines) == []


def test_a_julia_show_of_a_call_is_still_read():
    assert [r.metrics["loss"] for r in _records(
        [f"loss(x, y) = {0.9 - 0.01 * i:.2f}" for i in range(5)])] == [0.9, 0.89, 0.88, 0.87, 0.86]


# -- SpeechBrain: the test of the loaded checkpoint closes the run -------------------------


def _speechbrain(epochs: int, flat: bool) -> list[str]:
    head = "speechbrain.utils.train_logger - "
    lines = []
    for e in range(1, epochs + 1):
        train = 0.94 if flat else 2.0 / e
        lines += [f"{head}epoch: {e}, lr: {1e-4 - e * 1e-6:.2e} - train loss: {train:.2e} - "
                  f"valid loss: {0.0614 if flat else 1.0 / e:.2e}, valid WER: {30 - e * 0.5:.2f}",
                  "speechbrain.utils.checkpoints - Saved an end-of-epoch checkpoint in "
                  f"results/save/CKPT+2025-08-12+21-{e:02d}-45+00"]
    lines.append("speechbrain.utils.checkpoints - Loading a checkpoint from "
                 "results/save/CKPT+2025-08-12+21-20-45+00")
    # the test pass's generation warns once a batch, then its figures
    lines += ["The following generation flags are not valid and may be ignored: ['top_k']. "
              "Set `TRANSFORMERS_VERBOSITY=info` for more details."] * 80
    lines.append(f"{head}Epoch loaded: {epochs} - test loss: 1.11e-01, test CER: 1.83, "
                 "test WER: 3.96")
    return lines


def test_speechbrains_test_of_the_loaded_epoch_closes_a_finished_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, _speechbrain(20, flat=False))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_the_loaded_epoch_is_no_training_record():
    records = _records(_speechbrain(5, flat=False))
    assert not any("epoch_loaded" in r.metrics and r.step is not None for r in records)


def test_a_flat_run_that_speechbrain_tested_is_finished_and_not_learned(tmp_path: Path):
    artifact = verdict_of(tmp_path, _speechbrain(50, flat=True))
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "SUCCEEDED")
    assert any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])


# -- A benchmark driver's jobs, each with its ranking figures ------------------------------


def test_a_benchmark_drivers_counted_jobs_are_its_progress(tmp_path: Path):
    lines = ["Starting complete benchmark: 2 datasets x 3 models, 50 epochs each."]
    for i, (model, data) in enumerate([(m, d) for d in ("Nations", "UMLS")
                                        for m in ("TransE", "PairRE", "ConvE")], start=1):
        lines += [f"[{i}/6] Running {model} on {data}...",
                  f"[{i}/6] Finished {model} on {data} in {3 + i * 0.7:.1f}s, "
                  f"MRR={0.3 + i * 0.05:.4f}."]
    lines.append("Saved artifacts to results/complete")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


# -- A bar per epoch, its index in brackets after the phase -------------------------------


def test_a_train_bar_with_its_epoch_in_brackets_counts_that_epochs_batches(tmp_path: Path):
    lines = ["num_epochs: 100", "patience: 3"]
    lines += [f"train (0): {100 * n // 400:3d}% {n}/400 [00:{n // 60:02d}<00:10,  3.23s/it, "
              f"loss={0.7 / (1 + n / 50):.4f}]" for n in range(1, 401)]
    lines += ["[INFO] 29 Mar 2022 01:13:37 - main ", "    train (0): loss 0.122;"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["decision"] == "CONDITIONAL"


# -- A configuration printed under its heading ---------------------------------------------


def _gst_launch(at: str) -> list[str]:
    return ["", "-" * 65, "Starting new training run", "-" * 65,
            f"[2021-04-14 {at}]  Checkpoint path: logs-tacotron/model.ckpt",
            f"[2021-04-14 {at}]  Hyperparameters:",
            "  adam_beta1: 0.9", "  batch_size: 32", "  initial_learning_rate: 0.002",
            "  max_iters: 1000", "  power: 1.5", "  prenet_depths: [256, 128]"]


def test_settings_under_their_heading_are_no_training_records(tmp_path: Path):
    lines = _gst_launch("10:24:36.899") + _gst_launch("10:25:49.687")
    assert _records(lines) == []
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "CONDITIONAL"
    assert artifact["terminal_state"] == "RUNNING"


def test_records_after_the_settings_block_are_read():
    lines = [*_gst_launch("10:24:36.899"), ""]
    lines += [f"[2021-04-14 10:30:{i:02d}.000]  Step {i:7d}  [0.912 sec/step, loss=0.{90 - i}, "
              f"avg_loss=0.{91 - i}]" for i in range(1, 11)]
    records = _records(lines)
    assert [r.step for r in records] == list(range(1, 11))
    assert records[-1].target_steps in (None, 1000)


# -- sealed-74: recommenders, forecasting, compression, GANs, video ---------------------------


def _fuxictr(aucs: list[float]) -> list[str]:
    """FuxiCTR's log of a toy run under util-linux's `script`: its parameters as a JSON
    object under `Params: {`, one-batch epochs drawn as `0/1` bars, an early stop, the
    final evaluations, and `script`'s exit line."""
    head = "2025-05-31 15:11:{:02d},{:03d} P16402 INFO "
    lines = ['Script started on 2025-05-31 15:11:38+00:00 [TERM="xterm-color"]',
             head.format(45, 2) + "Params: {", '    "epochs": "100",',
             '    "metrics": "[\'logloss\', \'AUC\']",',
             '    "monitor": "{\'AUC\': 1, \'logloss\': -1}",', "}"]
    for epoch, auc in enumerate(aucs, start=1):
        lines += [head.format(47, epoch) + f"************ Epoch={epoch} start ************",
                  "  0% 0/1 [00:00<?, ?it/s]" + head.format(47, 10 + epoch)
                  + f"Train loss: {0.69 - 0.005 * epoch:.6f}",
                  head.format(47, 20 + epoch) + f"Evaluation @epoch {epoch} - batch 1: ",
                  "  0% 0/1 [00:00<?, ?it/s]\x1b[A100% 1/1 [00:00<00:00, 10.94it/s]",
                  head.format(47, 30 + epoch)
                  + f"[Metrics] AUC: {auc:.6f} - logloss: {0.686 - 0.004 * epoch:.6f}"]
    lines += [head.format(47, 961) + "********* Epoch=3 early stop *********",
              head.format(47, 977) + "Training finished.",
              head.format(47, 991) + "****** Validation evaluation ******",
              "  0% 0/1 [00:00<?, ?it/s]100% 1/1 [00:00<00:00, 16.86it/s]",
              head.format(48, 58) + f"[Metrics] logloss: 0.686170 - AUC: {aucs[0]:.6f}",
              head.format(48, 233) + "******** Test evaluation ********",
              "  0% 0/1 [00:00<?, ?it/s]100% 1/1 [00:00<00:00, 16.95it/s]",
              head.format(48, 310) + "[Metrics] logloss: 0.686385 - AUC: 0.496188", "",
              'Script done on 2025-05-31 15:11:49+00:00 [COMMAND_EXIT_CODE="0"]']
    return lines


def test_a_ctr_run_at_a_coin_tosss_auc_that_stopped_early_finished_and_learned_nothing(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _fuxictr([0.507901, 0.499018, 0.498836]))
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "SUCCEEDED")
    assert any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])


def test_the_process_id_before_the_level_is_no_part_of_a_metrics_name():
    names = {k for r in _records(_fuxictr([0.6, 0.7, 0.72])) for k in r.metrics}
    assert "train_loss" in names and not any("p16402" in n for n in names)


def test_scripts_exit_line_with_status_0_ends_the_run():
    from babysit.parsing.events import find_events
    found = find_events('Script done on 2025-05-31 15:11:49+00:00 [COMMAND_EXIT_CODE="0"]')
    assert [(e.kind.value, e.detail) for e in found] == [("completed", "exit-0")]
    failed = find_events('Script done on 2025-05-31 15:11:49+00:00 [COMMAND_EXIT_CODE="1"]')
    assert failed and failed[0].kind.value != "completed"


def _rechorus() -> list[str]:
    lines = []
    for epoch in range(1, 35):
        ndcg = 0.70 + 0.0035 * min(epoch, 21) - 0.0007 * max(0, epoch - 21)
        lines.append(f"INFO:root:Epoch {epoch:<5d} loss={0.69 - 0.013 * epoch:.4f} [28.1 s]    "
                     f"dev=(HR@5:{0.85 + 0.003 * min(epoch, 21):.4f},NDCG@5:{ndcg:.4f}) [1.0 s]"
                     + (" *" if epoch <= 21 else ""))
    lines += ["INFO:root:Early stop at 34 based on dev result.", "INFO:root:",
              "Best Iter(dev)=   21\t dev=(HR@5:0.9130,NDCG@5:0.7735) [1578.4 s] ",
              "INFO:root:Load model from ../model/NeuMF/NeuMF__coclick.pt", "INFO:root:",
              "Test After Training: (HR@5:0.9161,NDCG@5:0.7829,HR@10:0.9929,NDCG@10:0.8081)",
              "INFO:root:", "-" * 40 + " END: 2022-07-25 22:19:57 " + "-" * 40]
    return lines


def test_a_recommenders_early_stop_and_its_best_iteration_end_the_run(tmp_path: Path):
    assert not any(r.step == 21 for r in _records(_rechorus()))
    artifact = verdict_of(tmp_path, _rechorus())
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def _darts(tracebacks: int, at_end: bool) -> list[str]:
    feeder = ["Traceback (most recent call last):",
              '  File "/opt/conda/lib/python3.7/multiprocessing/queues.py", line 242, in _feed',
              "    send_bytes(obj)",
              '  File "/opt/conda/lib/python3.7/multiprocessing/connection.py", line 368, '
              "in _send", "    n = write(self._handle, buf)",
              "BrokenPipeError: [Errno 32] Broken pipe"]
    lines = []
    for epoch in range(tracebacks):
        lines += [f"07/30 04:{epoch:02d}:01 PM epoch {epoch} lr 2.5e-02",
                  f"07/30 04:{epoch:02d}:02 PM train_acc {40 + 4 * epoch:.6f}",
                  *feeder, f"07/30 04:{epoch:02d}:30 PM valid_acc {45 + 4 * epoch:.6f}"]
    if at_end:
        lines += feeder
    return lines


def test_a_queue_feeder_threads_broken_pipe_the_run_outlived_is_no_crash_at_the_end(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _darts(8, at_end=True))
    assert artifact["terminal_state"] == "RUNNING"
    assert not any(a["type"] == "crash" for a in artifact["anomalies_detected"])


def _metric_logger(epochs: int) -> list[str]:
    """torchdistill's log: tab-separated heads, an epoch's metric-logger lines, the
    validation pass's progress (a batch's figures beside the running averages) and its
    summary, then the final test pass on batches of three."""
    head = "2020-10-16 21:41:{:02d},381\tINFO\tkdkit.misc.log\t"
    main = "2020-10-16 21:41:{:02d},738\tINFO\t__main__\t"
    lines = []
    for epoch in range(epochs):
        lines += [head.format(epoch) + f"Epoch: [{epoch}]  [{b:4d}/5025]  eta: 0:00:31  lr: 0.1  "
                  f"loss: {6 - 0.05 * epoch:.4f} ({6.1 - 0.05 * epoch:.4f})  time: 1.06  "
                  f"max mem: 4760" for b in (0, 1000, 2000, 3000, 4000, 5000)]
        lines += [head.format(epoch) + f"Validation:  [  0/131]  eta: 0:15:30  acc1: "
                  f"{30 + epoch - (5 if epoch % 3 else 0):.4f} ({30 + epoch:.4f})  acc5: "
                  f"{55 + epoch:.4f} ({55 + epoch:.4f})  time: 7.1  data: 7.0  max mem: 4760",
                  head.format(epoch) + "Validation: Total time: 0:00:31",
                  main.format(epoch) + f" * Acc@1 {35 + epoch * 0.8:.4f}\tAcc@5 {60 + epoch:.4f}"]
    lines += [head.format(59) + f"Test:  [{b:5d}/16667]  eta: 0:00:25  acc1: {v:.4f} "
              f"({70.5 if b else 0.0:.4f})  acc5: 100.0000 (89.6)  time: 0.003  data: 0.0001"
              for b, v in ((0, 0.0), (1000, 100.0), (2000, 0.0), (16000, 100.0))]
    lines += [head.format(59) + "Test: Total time: 0:01:01",
              main.format(59) + f" * Acc@1 {35 + epochs * 0.8:.4f}\tAcc@5 89.9902"]
    return lines


def test_an_evaluation_passs_batches_are_no_evaluations_its_summary_is(tmp_path: Path):
    evals = [r.metrics for r in _records(_metric_logger(6)) if any("acc" in k for k in r.metrics)]
    assert evals and all(set(m) <= {"eval/acc1", "eval/acc5"} for m in evals[:-1])
    assert set(evals[-1]) == {"test/acc1", "test/acc5"}  # the final test's summary
    assert [round(m["eval/acc1"], 1) for m in evals[:3]] == [35.0, 35.8, 36.6]
    artifact = verdict_of(tmp_path, _metric_logger(20))
    assert not any(a["type"] == "eval-degradation" for a in artifact["anomalies_detected"])


def test_a_classifier_settled_on_a_uniform_guess_finished_not_learned(tmp_path: Path):
    # PYSKL's PoseC3D on six gestures: up from 1.816 and down onto ln 6 = 1.79176
    values = [1.8159, 1.8575, 1.8586, 1.8568, 1.8580, 1.8605, 1.8638, 1.8673, 1.8705,
              1.8721, 1.8708, 1.8652, 1.8550, 1.8418, 1.8286, 1.8178, 1.8101, 1.8045,
              1.8004, 1.7974, 1.7951, 1.7936, 1.7925, 1.7919]
    head = "2024-09-29 15:18:28,687 - pyskl - INFO - "
    lines = []
    for epoch, loss in enumerate(values, start=1):
        lines += [head + f"Epoch [{epoch}][20/30]\tlr: 3.993e-01, eta: 0:04:15, time: 0.365, "
                  f"top1_acc: 0.1844, loss_cls: {loss:.4f}, loss: {loss:.4f}, grad_norm: 0.2315",
                  head + f"Saving checkpoint at {epoch} epochs"]
    artifact = verdict_of(tmp_path, [head + "workflow: [('train', 1)], max: 24 epochs", *lines])
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])


def test_a_classifier_that_passed_below_a_uniform_guess_is_not_taken_for_one(tmp_path: Path):
    values = [1.82 - 0.02 * i for i in range(24)]  # down through ln 6 and on
    head = "2024-09-29 15:18:28,687 - pyskl - INFO - "
    lines = [head + f"Epoch [{e}][20/30]\tlr: 0.1, loss: {v:.4f}" for e, v in enumerate(values, 1)]
    artifact = verdict_of(tmp_path, lines)
    assert not any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])


def test_an_epochs_own_iteration_counter_keeps_the_steps_rising():
    lines = ["start training..."]
    for epoch in (1, 2, 3):
        lines += [f"Iter: {i:03d}, Train Loss: {400 + i * 0.01:.4f}, Train MAPE: 7.09, "
                  f"Train RMSE: 630.7" for i in range(0, 400, 50)]
        lines.append(f"Epoch: {epoch:03d}, Train Loss: 388.08, Train MAPE: 7.56, Train RMSE: "
                     f"660.27, Valid Loss: 409.17, Valid MAPE: 8.06, Valid RMSE: 683.0, "
                     f"Training Time: 1063.4692/epoch")
    steps = [r.step for r in _records(lines) if r.epoch is None]
    assert steps == sorted(steps) and steps[-1] == 2 * 400 + 350


def test_a_best_value_named_at_an_earlier_step_is_no_step_back(tmp_path: Path):
    head = "[INFO] 2021-01-16 01:46:17 > "
    lines = []
    for step in range(100, 10100, 100):
        lines.append(head + f"Step: {step:7d} Progress: {step / 100:.1f}% Elapsed: 1:00:00 "
                     f"Discriminator_loss: 0.5 Generator_loss: {1 - step / 20000:.4f} ")
        if step % 2000 == 0:
            fid = 60 - step / 500
            lines += [head + f"FID score (Step: {step}, Using valid moments): {fid:.2f}",
                      head + f"Best FID score (Step: {step}, Using valid moments): "
                      f"{60 - step / 500:.2f}"]
    lines += [head + "FID score (Step: 10000, Using valid moments): 41.0",
              head + "Best FID score (Step: 8000, Using valid moments): 40.0",
              head + "Save model to checkpoints/WGAN-GP-train"]
    records = _records(lines)
    assert max(r.step for r in records) == 10000 and records[-1].step == 10000
    assert any("fid_score" in r.metrics for r in records)
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_fid_is_an_evaluation_that_falls_as_a_generator_improves():
    from babysit.rules.eval_names import evaluation_direction
    assert [evaluation_direction(k) for k in ("fid_score", "fid50k_full", "kid",
                                              "inception_score")] == [-1, -1, -1, 1]


def test_a_keras_gans_counter_before_its_bracketed_figures_is_its_step():
    lines = []
    for it in range(0, 40):
        lines += ["1/1 [==============================] - 0s 13ms/step",
                  f"{it} [D loss: 0.{650 + it}, acc.: 68.75%] [G loss: 0.{850 + it}]"]
    records = _records(lines)
    assert [r.step for r in records][-3:] == [37, 38, 39]
    assert all(r.target_steps is None for r in records)


# -- sealed-75: RL, rendering, scientific ML, spiking networks, searches ----------------------


def test_an_evolutionary_trainers_generations_are_its_plan_and_it_says_it_finished(
        tmp_path: Path):
    lines = ["    (input)   maximum number of generations = 3000.", "",
             "Step     Total    L1-reg   L2-reg   E-train  F-train  E-test   F-test"]
    lines += [f"{g:<8d} {0.5 - g / 10000:.5f}  0.03836  0.07434  0.00315  {0.1 - g / 100000:.5f}"
              f"  0.00291  0.10942" for g in range(100, 3100, 100)]
    lines += ["", "-" * 63, "Time used for training = 10527.046875 s.", "-" * 63, "", "",
              "-" * 63, "Finished running nep.", "-" * 63]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def _study(trials: int) -> list[str]:
    """An Optuna study whose trials each fit a Lightning model, the log cut inside the
    last one after its trainer said it stopped."""
    lines = []
    for trial in range(trials):
        lines += [f"🔬 Trial {trial} hyperparameters:", "GPU available: True (cuda), used: True"]
        lines += [f"Epoch {e}: val_auc_epoch={0.55 + 0.004 * e + 0.001 * trial:.3f} "
                  f"train_loss={0.69 - 0.004 * e:.4f}" for e in range(12)]
        lines.append("`Trainer.fit` stopped: `max_epochs=12` reached.")
        if trial < trials - 1:
            lines.append(f"[I 2025-08-28 07:34:56,471] Trial {trial} finished with value: "
                         f"-{0.6 + 0.001 * trial:.4f} and parameters: {{'lr': 0.0003}}. "
                         f"Best is trial {trial} with value: -{0.6 + 0.001 * trial:.4f}.")
    return lines


def test_a_trainers_end_inside_a_search_ends_a_trial_not_the_search(tmp_path: Path):
    artifact = verdict_of(tmp_path, _study(5))
    assert artifact["terminal_state"] == "RUNNING"


def test_a_single_fit_that_says_it_stopped_at_its_plan_still_finishes(tmp_path: Path):
    artifact = verdict_of(tmp_path, _study(1))
    assert artifact["terminal_state"] == "SUCCEEDED"


def _pinn(best_epoch: int) -> list[str]:
    head = "2025-10-10 06:05:05,569 - root - INFO - "
    main = "2025-10-10 06:20:36,046 - __main__ - INFO - "
    lines = [head + "[DEBUG] Loss dict at epoch 0:"]
    lines += [head + f"  {term}: loss={value:.6f}, weight={weight}, has_nan=False, has_inf=False"
              for term, value, weight in (("data", 13.3, 35.2), ("momentum_x", 293.5, 1.0),
                                          ("momentum_y", 19332.7, 1.0),
                                          ("continuity", 55.6, 1.0), ("inlet", 0.0, 10.0),
                                          ("pressure_reference", 13607.2, 0.01),
                                          ("prior", 88.1, 35.2))]
    lines += [main + f"Epoch {e:6d} | Total: {50 / (1 + e / 100):.6f} | Residual: "
              f"{80000 / (1 + e / 100):.6f} | BC: 3.24 | Data: 2.51 | Time: {e * 2:.1f}s"
              for e in range(50, 550, 50)]
    lines += [main + "=" * 80, main + "🛑 Early stopping triggered at epoch 501",
              main + f"   Best val_loss: 30.981792 at epoch {best_epoch}",
              main + "   Patience counter: 500/500", main + "=" * 80,
              main + f"✅ Restored best model from epoch {best_epoch}",
              main + "Training completed in 934.5s",
              main + "Final model saved: checkpoints/vs_pinn_channel_flow_epoch_502.pth",
              main + "Training script finished successfully!"]
    return lines


def test_a_loss_broken_down_by_term_in_an_indented_block_is_no_series():
    records = _records(_pinn(1))
    assert not any(r.metrics.get("loss", 0) > 1000 for r in records)


def test_a_run_that_restored_its_first_epochs_weights_after_many_delivers_nothing(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _pinn(1))
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "SUCCEEDED")
    assert any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])
    artifact = verdict_of(tmp_path, _pinn(420))
    assert artifact["decision"] == "GO"


def test_a_total_time_said_with_a_verb_closes_a_run(tmp_path: Path):
    lines = [f"Epoch :  {e}  Epoch time :  1.18  Train L2 Loss :  {0.9 / (1 + e / 10):.6f}"
             for e in range(200)]
    lines.append("Total time is : 1177.9270713549995 Total epoch is  200")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_tagged_runs_best_value_closes_it(tmp_path: Path):
    lines = []
    for tag in ("Muon", "AdamW"):
        lines += [f"[{tag}]             Epoch {e},             Train Loss: {0.5 - 0.03 * e:.4f},"
                  f"             Val Loss: {0.45 - 0.01 * e:.4f},             Val Acc: "
                  f"{0.80 + 0.002 * e:.4f},             Grad Norm: 6.1," for e in range(1, 11)]
        lines.append(f"[{tag}] Best Val Acc: 0.8200")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- sealed-76: robot learning, classic NLP, re-identification, infrastructure, audio ---------


def test_flairs_annealing_out_of_learning_rate_is_its_configured_end(tmp_path: Path):
    stamp = "2019-02-07 22:55:{:02d},{:03d} "
    lines = []
    for epoch in range(1, 31):
        lines += [stamp.format(epoch % 60, i) + f"epoch {epoch} - iter {i}/47 - loss "
                  f"{2.5 - 0.03 * epoch - 0.001 * i:.8f}" for i in range(0, 47, 4)]
        lines += [stamp.format(epoch % 60, 900) + "-" * 100,
                  stamp.format(epoch % 60, 901) + f"EPOCH {epoch} done: loss "
                  f"{2.4 - 0.03 * epoch:.4f} - lr 0.1000 - bad epochs 0",
                  stamp.format(epoch % 60, 902) + f"DEV  : loss {2.0 - 0.01 * epoch:.8f} - "
                  f"f-score {0.6 + 0.008 * epoch:.4f} - acc {0.6 + 0.008 * epoch:.4f}"]
    lines += [stamp.format(59, 319) + "learning rate too small - quitting training!",
              stamp.format(59, 804) + "Testing using best model ...",
              stamp.format(59, 125) + "MICRO_AVG: acc 0.8732 - f1-score 0.8732"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def _allennlp(epochs: int, val_accuracy: float) -> list[str]:
    head = "2019-04-15 22:54:21,130 - INFO - allennlp.training.trainer - "
    lines = [head + "Beginning training."]
    for epoch in range(epochs):
        lines += [head + f"Epoch {epoch}/199", head + "Training", head + "Validating",
                  head + "             Training |  Validation",
                  head + f"loss     |     {2.9 - 0.06 * epoch:.3f}  |     "
                  f"{2.96 + 0.08 * epoch:.3f}",
                  head + f"accuracy |     {0.1 + 0.02 * epoch:.3f}  |     {val_accuracy:.3f}",
                  head + "Epoch duration: 00:00:00"]
    lines.append(head + "Ran out of patience.  Stopping training.")
    return lines


def test_allennlps_split_table_gives_each_metric_under_each_split():
    records = [r for r in _records(_allennlp(3, 0.25)) if r.metrics]
    assert {"loss", "val_loss"} <= set(records[0].metrics)
    assert [r.metrics["val_accuracy"] for r in records if "val_accuracy" in r.metrics] \
        == [0.25, 0.25, 0.25]


def test_a_classifier_whose_validation_accuracy_never_moved_is_no_go(tmp_path: Path):
    artifact = verdict_of(tmp_path, _allennlp(38, 0.056))
    assert artifact["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])


def test_spacys_saved_pipeline_closes_the_run(tmp_path: Path):
    lines = ["ℹ Saving to output directory: output", "ℹ Using CPU",
             "E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE ",
             "---  ------  ------------  --------  ------  ------  ------  ------"]
    lines += [f"{e:3d}  {s:6d}  {30 / (1 + s / 200):12.2f}  {900 / (1 + s / 200):8.2f}  "
              f"{50 + s / 100:6.2f}  {52 + s / 100:6.2f}  {48 + s / 100:6.2f}  "
              f"{0.5 + s / 10000:6.2f}" for e, s in ((i, i * 200) for i in range(11))]
    lines += ["✔ Saved pipeline to output directory", "output/model-last"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_allennlps_best_weights_loaded_at_the_end_keep_its_validation_rise_off_the_verdict(
        tmp_path: Path):
    head = "2019-05-30 15:25:54,071 - INFO - allennlp.training.{} - "
    lines = []
    for epoch in range(20):
        val_loss = 3.0 - 0.1 * epoch if epoch < 6 else 2.4 + 0.05 * (epoch - 6)
        lines += [head.format("trainer") + f"Epoch {epoch}/19",
                  head.format("tensorboard_writer") + "                    Training |  Validation",
                  head.format("tensorboard_writer") + f"loss            |     "
                  f"{4.0 - 0.15 * epoch:.3f}  |     {val_loss:.3f}",
                  head.format("tensorboard_writer") + f"f1              |     "
                  f"{0.5 + 0.02 * epoch:.3f}  |     {0.6 + 0.02 * min(epoch, 8):.3f}"]
        if epoch <= 8:
            lines.append(head.format("checkpointer") + "Best validation performance so far. "
                         "Copying weights to 'output/best.th'.")
    lines.append(head.format("checkpointer") + "loading best weights")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] in ("SUCCEEDED", "RUNNING")
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"
                and a["severity"] in ("high", "blocker") and "resolved" not in a["description"]]


# -- sealed-77: detection, semi-supervised, diffusion fine-tunes, Kaggle, registration -------


def test_an_evaluation_losss_overflow_beside_a_finite_training_loss_is_no_blocker(
        tmp_path: Path):
    head = ("                  epoch,         train/box_loss,         train/cls_loss,   "
            "metrics/mAP50(B),           val/box_loss,           val/cls_loss")
    lines = [head] + [f"{e:23d},{1.65 - 0.1 * e:23.5f},{1.3 - 0.09 * e:23.5f},"
                      f"{0.80 + 0.015 * e:23.5f},{1.11 - 0.02 * e:23.5f},"
                      + (f"{'inf':>23s}" if e <= 3 else f"{0.5 - 0.01 * e:23.5f}")
                      for e in range(1, 11)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] != "NO-GO"
    assert any(a["type"] == "nan-inf" and a["severity"] == "medium"
               for a in artifact["anomalies_detected"])


def test_an_evaluation_losss_nan_is_still_a_blocker(tmp_path: Path):
    lines = [f"Epoch: {e}, Steps: 100 | Train Loss: {0.5 - 0.01 * e:.7f} Vali Loss: nan "
             f"Test Loss: nan" for e in range(1, 4)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"


def test_an_iteration_counter_at_its_total_beside_an_epoch_short_of_its_plan_is_the_epochs():
    lines = [f"Train Epoch: {e}/1024. Iter: 1024/1024. LR: 0.0294. Data: 0.036s. Batch: 0.507s. "
             f"Loss: {0.2 - 0.001 * e:.4f}. Loss_x: 0.0009. Loss_u: 0.1605. Mask: 0.83. "
             for e in range(146, 149)]
    records = _records(lines)
    assert all(r.target_steps != 1024 for r in records)
    assert not any("train_epoch" in r.metrics for r in records)


def test_a_traceback_powershell_wrapped_at_80_columns_inside_line_is_read(tmp_path: Path):
    # PowerShell's error record in a Japanese locale, its stderr hard-wrapped at 80 columns
    path = 'D:\\program\\Kaggle\\Kaggle-Predict Customer Churn\\EXP\\EXP009\\train.py'
    lines = ["python : Traceback (most recent call last):", "発生場所 行:1 文字:56",
             '+ ... er Churn" ; python -u EXP/EXP009/train.py --config EXP/EXP009/config/ ...',
             "+                 " + "~" * 57,
             "    + CategoryInfo          : NotSpecified: (Traceback (most recent call last) ",
             "   ::String) [], RemoteException",
             "    + FullyQualifiedErrorId : NativeCommandError", " ",
             f'  File "{path}", l', "ine 542, in <module>", "    main()",
             f'  File "{path}", l', "ine 357, in main",
             '    print(f"\\U0001f4cb Config loaded from {args.config}")',
             "UnicodeEncodeError: 'cp932' codec can't encode character '\\U0001f4cb' in positi",
             "on 0: illegal multibyte sequence"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")
    assert any("UnicodeEncodeError" in a["description"] for a in artifact["anomalies_detected"])


def test_the_fortran_runtimes_word_for_a_closed_console_is_a_stop(tmp_path: Path):
    # MKL's Intel Fortran runtime under Windows: the console closed (or Ctrl-C) mid-run
    lines = [f"Epoch {e}/50 | train_loss={0.7 - 0.01 * e:.4f} | val_auc={0.6 + 0.01 * e:.4f}"
             for e in range(1, 9)]
    lines += ["python : forrtl: error (200): program aborting due to window-CLOSE event",
              "Image              PC                Routine            Line        Source",
              "KERNELBASE.dll     00007FFFE0C69DED  Unknown               Unknown  Unknown"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "CANCELLED")

"""Shapes read since the sixteenth session, each on lines written in the real shape of
a public log."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.formats import key_values
from babysit.parsing.log_prefix import message
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list[tuple]:
    return [(r.step, r.target_steps, r.epoch, dict(r.metrics))
            for r in LogParser().feed_lines(lines)]


def test_a_colon_may_join_the_timestamp_to_the_level():
    # `%(asctime)s:%(levelname)s: %(message)s`
    assert message("2018-09-04 18:44:21,417:INFO: Epoch 8/10") == "Epoch 8/10"
    assert message("2018-09-04 18:45:58,123:INFO: - Train metrics: loss: 1.386") \
        == "- Train metrics: loss: 1.386"


def _char_lstm(epochs: int, planned: int) -> list[str]:
    lines = ["2018-09-04 18:24:34,163:INFO: -- start training for 10 epoch(s)"]
    for epoch in range(1, epochs + 1):
        minute = 24 + 3 * epoch
        lines += [f"2018-09-04 18:{minute:02d}:10,540:INFO: Epoch {epoch}/{planned}",
                  f"2018-09-04 18:{minute + 1:02d}:36,326:INFO: - Train metrics: "
                  f"loss: {1.7 - epoch / 30:.3f}, acc: {0.49 + epoch / 100:.3f}",
                  f"2018-09-04 18:{minute + 2:02d}:26,539:INFO: - Eval metrics: "
                  f"loss: {1.6 - epoch / 30:.3f}, acc: {0.5 + epoch / 100:.3f}",
                  f"2018-09-04 18:{minute + 2:02d}:51,656:INFO: -- Found new best accuracy"]
    return lines


def test_a_bulleted_training_line_after_the_evaluation_s_is_the_training_s():
    got = [m for *_, m in _records(_char_lstm(2, 10)) if m]
    assert got == [{"loss": 1.667, "acc": 0.5}, {"eval/loss": 1.567, "eval/acc": 0.51},
                   {"loss": 1.633, "acc": 0.51}, {"eval/loss": 1.533, "eval/acc": 0.52}]


def test_a_logged_keras_shaped_header_plans_the_epochs(tmp_path: Path):
    data = verdict_of(tmp_path, _char_lstm(10, 10))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    data = verdict_of(tmp_path, _char_lstm(6, 10))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_one_line_holding_both_splits_under_the_same_names():
    # DeepSleepNet's epoch line: `train (…): n=…, loss=… | valid (…): n=…, loss=…`.
    assert key_values("epoch 23 : train (516.37 sec): n=215300, loss=1.609 (0.000), "
                      "acc=0.198 | valid (3.29 sec): n=5400, loss=1.610 (0.000), acc=0.093") \
        == {"n": 215300.0, "loss": 1.609, "acc": 0.198,
            "eval/n": 5400.0, "eval/loss": 1.61, "eval/acc": 0.093}
    assert key_values("train: loss=0.3 | test: loss=0.4") == {"loss": 0.3, "test/loss": 0.4}
    # names that say their split keep them; no name said twice, nothing moves
    assert key_values("Train Loss: 0.3, Val Loss: 0.4") == {"train_loss": 0.3, "val_loss": 0.4}
    assert key_values("loss=0.5 test acc=0.3") == {"loss": 0.5, "test_acc": 0.3}


def test_a_planned_count_in_a_nested_config_and_its_commented_alternatives(tmp_path: Path):
    # SECOND's protobuf config, printed by each launch: the live `steps:` is the plan,
    # the commented-out ones are not where the run is.
    config = ["train_config: {",
              "  # steps: 99040 # 1238 * 120",
              "  # steps: 49520 # 619 * 80",
              "  steps: 2000 # 40 * 50",
              "  steps_per_eval: 1000 # 40 * 25",
              "}"]
    steps = [f"runtime.step={s}, runtime.steptime=1.1, loss.cls_loss={40 / s:.4f}, "
             f"loss.loc_loss={3 / s ** 0.5:.4f}" for s in range(50, 2001, 50)]
    data = verdict_of(tmp_path, config + steps[:10] + config + steps)
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) \
        == ("SUCCEEDED", 2000, 2000), data["summary"]


def test_a_flag_dump_s_num_steps_is_the_plan(tmp_path: Path):
    # SinGAN's Namespace: `num_steps=2000`, the last scale's `Iteration 2000`.
    head = ["2022-04-16 16:07:17 - INFO - Namespace(batch_size=1, device='cuda', "
            "num_steps=2000, step_size=2000)"]
    lines = [f"2022-04-16 16:{7 + i // 60:02d}:{i % 60:02d} - INFO - Iteration {i * 100}, "
             f"D: {-0.5 + i / 100:.4f}, G: {1.6 - i / 30:.4f}, G_recon: {0.15 / (i + 1):.5f}"
             for i in range(21)]
    data = verdict_of(tmp_path, head + lines)
    assert (data["terminal_state"], data["target_steps"]) == ("SUCCEEDED", 2000)


# PowerShell at 22 columns (sealed-27): `python … 2>&1 > log` wraps stderr in its own
# error record at the console's width, the header in three pieces and every frame in
# several; the traceback still ends the run.
_POWERSHELL_22 = [
    "Ultralytics 8.4.23  Python-3.12.6 torch-2.10.0+cpu ",
    "python : Traceback ", "(most recent call ", "last):",
    "At line:1 char:1", "+ python train.py ", "--mode yolo > ", "train_error.log 2>&1",
    "+ ~~~~~~~~~~~~~~~~~~~~", "    + CategoryInfo    ", "          : ",
    "NotSpecified: (T    ", "raceback (most recent ", "    call ", "last)::String)     ",
    "[], RemoteException", "    + ", "FullyQualifiedError   ", " Id : ",
    "NativeCommandErr    or", " ",
    '  File "C:\\Users\\HP\\Do', "wnloads\\traffic_sign_s", "ystem\\traffic_sign_sys",
    'tem\\train.py", line ', "67, in <module>", "    main()",
    '  File "C:\\Users\\HP\\Ap', "pData\\Roaming\\Python\\P", "ython312\\site-packages",
    "\\ultralytics\\utils\\tor", 'ch_utils.py", line ', "230, in select_device",
    "    raise ValueError(", "ValueError: Invalid ", "CUDA 'device=0' ", "requested. Use ",
    "'device=cpu' or pass "]


def test_a_traceback_a_narrow_console_wrapped_line_by_line(tmp_path: Path):
    data = verdict_of(tmp_path, _POWERSHELL_22)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO"), data["summary"]
    assert "ValueError" in data["summary"]


def test_a_wide_console_s_short_lines_after_a_handled_traceback_are_training():
    # An 80-column console wraps a header only behind a long prefix; the short training
    # lines after the handled traceback are read, not swallowed as its pieces.
    got = _records(["2024-01-01 00:00:00 WARNING trainer.callbacks.saver: could not "
                    "write the preview, Traceback (most recent",
                    "call last):",
                    '  File "/x/preview.py", line 3, in <module>',
                    "OSError: disk busy",
                    "step 10 loss 0.5", "step 20 loss 0.4"])
    assert [s for s, *_ in got if s is not None][-2:] == [10, 20]


def test_a_command_line_s_num_steps_may_be_another_tool_s():
    from babysit.parsing.plan import target_in
    # MLPerf MiniGo (sealed-16) runs a calibration script with `--num_steps=5` mid-run
    assert target_in("Running: python3 produce_min_max_log.py --num_steps=5 --batch_size=16") \
        is None
    assert target_in("Namespace(batch_size=1, num_steps=2000, step_size=2000)") == 2000


def test_a_config_dict_s_quoted_iterations_is_the_plan(tmp_path: Path):
    # A nanoGPT-style loop (sealed-28): the config dict, beside the vocabulary, names
    # `'iterations': 45000`; the run's last `Iter=45000` is the plan's end.
    head = ["Config:",
            "{'config_format': 'base', 'seed': 0, 'eval_interval': 200, 'batch_size': 50, "
            "'vocab_size': 50304, 'lr': 0.001, 'iterations': 45000, 'warmup_steps': 300}"]
    lines = [f"Train: Iter={i} (0.{i // 1000:03d} epochs) train_loss={10 - i / 5000:.3f} "
             f"iter_dt=5.43e-01s lr={1e-3 * (45000 - i) / 45000:.2e}"
             for i in range(0, 45001, 1500)]
    data = verdict_of(tmp_path, head + lines)
    assert (data["terminal_state"], data["target_steps"]) == ("SUCCEEDED", 45000), \
        data["summary"]


def _epochs(count: int) -> list[str]:
    return [f"Epoch {e}  loss: {1 / e:.4f}  acc: {0.5 + e / 100:.4f}" for e in range(1, count + 1)]


def test_the_figures_after_a_closing_banner_are_the_run_s_results(tmp_path: Path):
    # ATCNet's end (sealed-27): `Average all subjects - best run:` then `Accuracy = 0.8538
    # Kappa = 0.8050`; a banner's own line, then the figures, is no training going on.
    for banner in ("Final results:", "Average all subjects - best run:"):
        data = verdict_of(tmp_path, [*_epochs(30), banner, "Accuracy = 0.85   Kappa = 0.80"])
        assert data["terminal_state"] == "SUCCEEDED", (banner, data["summary"])


def _fold(fold: int) -> list[str]:
    lines = ["-" * 30, f"       Fold: {fold} result        ", "-" * 30]
    for epoch in range(1, 6):
        lines += [f"Epoch: {epoch}, \tavg train loss: {0.1 / epoch:.4f}, \t"
                  f"avg validation loss: {0.08 / epoch:.4f}",
                  f"Epoch: {epoch}, \tROC-AUC score: {0.9 + epoch / 100:.4f}, \t"
                  f"time elapsed: 482.4"]
    return [*lines, "-" * 30, f"       Fold: {fold} result        ", "-" * 30,
            f"Score: {0.97 + fold / 1000:.4f}"]


def test_a_cross_validation_score_after_the_last_fold_s(tmp_path: Path):
    # A k-fold run (sealed-27): each fold's `Score:`, then the `CV` banner and its own.
    lines = [line for fold in range(4) for line in _fold(fold)]
    data = verdict_of(tmp_path, [*lines, "-" * 30, "       CV        ", "-" * 30,
                                 "Score: 0.9691"])
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    data = verdict_of(tmp_path, lines[:-4])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_non_finite_figure_in_an_evaluation_s_report_is_kept(tmp_path: Path):
    # The Trainer's closing report (sealed-29): `***** eval metrics *****`, then
    # `  eval_loss = nan` — a finished run whose evaluation is NaN is no GO.
    lines = [f"{{'loss': {2.0 / (i + 1):.4f}, 'learning_rate': 2e-05, 'epoch': {i / 4:.2f}}}"
             for i in range(1, 21)]
    lines += ["{'train_runtime': 7547.06, 'train_samples_per_second': 6.184, "
              "'train_steps_per_second': 0.387, 'train_loss': 0.0063, 'epoch': 5.0}",
              "***** eval metrics *****",
              "  epoch                   =        5.0",
              "  eval_loss               =        nan",
              "  eval_runtime            = 0:00:25.70"]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO", data["summary"]
    assert any(a["type"] == "nan-inf" for a in data["anomalies_detected"])


def _baselines_table(iteration: int, kl: str) -> list[str]:
    return [f"Iteration {iteration}", "kl just right!", "",
            "| EVAfter   | 0.984      |", f"| EpRewMean | {-8.5 + iteration / 1000:.2f}      |",
            f"| KL        | {kl} |", ""]


def test_a_boxed_table_without_its_borders(tmp_path: Path):
    # OpenAI Baselines' `logger.dumpkvs`, pasted without its dashed rules (sealed-29): each
    # table ends where the next `Iteration` line begins, the last one where the log ends.
    lines = _baselines_table(3025, "0.00148061") + _baselines_table(3026, "0.000913428") \
        + _baselines_table(3027, "nan")
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO", data["summary"]
    assert "kl=nan" in data["summary"].lower()


def test_an_inner_loop_that_stops_at_the_same_count_every_round_is_no_launch(tmp_path: Path):
    # SeqGAN's adversarial rounds (sealed-29): the discriminator's `Epoch 0`, `1`, `2`
    # in every round; the log cut after a round's last epoch is a run going on.
    lines = []
    for round_no in range(12):
        lines.append(f"Adversarial Training round {round_no}")
        lines += [f"Epoch {e}, train loss: {0.27 - round_no / 1000 - e / 500:.5f}, "
                  f"train acc: {0.89 + e / 1000:.3f}" for e in range(3)]
        lines.append(f"gen eval loss: {0.5 - round_no / 100:.5f}, dis eval loss: 0.26097, "
                     f"dis eval acc: 0.897")
    data = verdict_of(tmp_path, lines[:-1])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_an_early_stop_said_with_dots_and_an_at_sign(tmp_path: Path):
    # A segmentation loop (sealed-29): `Early Stopping....@ 72 epoch for patience @ 10.0`.
    lines = [f"Epoch: {e} | Train_loss: {0.6 - e / 1000:.5f} | "
             f"Val loss: {0.57 + (e % 3) / 1000:.5f} | val dice: {0.84 + (e % 5) / 1000:.5f}"
             for e in range(47, 73)]
    lines += ["Early Stopping....@ 72 epoch for patience @ 10.0",
              "Best Loss: 0.5660582780838013 | Best Dice: 0.854561984539032"]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


def test_launches_appended_each_ending_on_a_test_line(tmp_path: Path):
    # A Chinese NER loop (sealed-29): three launches in one file, each closed by
    # `test： f1:…` (a full-width colon); the last launch's test line ends the run.
    def launch(epochs: int, f1: float) -> list[str]:
        return [*(f"epoch:{e}\tloss:{300 / (e + 1):.6f}\tf1:{f1 * e / epochs:.6f}\t"
                  f"precision:0.5\trecall:0.6\tbest_f1:{f1 * e / epochs:.6f}\t"
                  for e in range(epochs)),
                f"test： f1:{f1:.6f}\tprecision:0.546954\trecall:0.657513"]
    data = verdict_of(tmp_path, launch(1, 0.0) + launch(3, 0.0) + launch(4, 0.597))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    data = verdict_of(tmp_path, launch(1, 0.0) + launch(3, 0.0) + launch(4, 0.597)[:-1])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_an_epoch_that_ran_no_iteration(tmp_path: Path):
    # Open-Sora under ColossalAI (sealed-29): a bucket sampler with no full batch; each
    # epoch's bar closes at `0it` and the next begins.
    head = ["[2024-06-29 05:36:31] #training batch: 3, #training sample: 160, "
            "#non empty bucket: 1", "[2024-06-29 05:36:31] Beginning epoch 0..."]
    empty = [*head, "Epoch 0: 0it [00:00, ?it/s]",
             "[2024-06-29 05:36:31] Beginning epoch 1...", "Epoch 1: 0it [00:00, ?it/s]"]
    data = verdict_of(tmp_path, empty)
    assert data["decision"] == "NO-GO", data["summary"]
    assert any(a["type"] == "not-learning" for a in data["anomalies_detected"])
    # a bar that moved is an epoch that trained; the next one's `0it` is its start
    trained = [*head, "Epoch 0: 100%|##########| 3/3 [00:01<00:00, 2.9it/s, loss=0.5]",
               "[2024-06-29 05:36:33] Beginning epoch 1...", "Epoch 1: 0it [00:00, ?it/s]"]
    assert verdict_of(tmp_path, trained)["decision"] != "NO-GO"
    # a bar that knows its batches has data: a log of stdout keeps only its first draw
    counted = [*head, "Epoch 0:   0%|          | 0/1522 [00:00<?, ?it/s]",
               "INFO:Trainer:Epoch [1/30] Train: 0.0962 | Val: 0.0991 | 457.0s",
               "Epoch 1:   0%|          | 0/1522 [00:00<?, ?it/s]"]
    assert verdict_of(tmp_path, counted)["decision"] != "NO-GO"


def test_a_term_of_the_evaluation_loss_is_judged_through_its_total(tmp_path: Path):
    # Mask R-CNN under Keras (sealed-29): `val_mrcnn_class_loss` 0.0013 → 0.0031 while
    # `val_loss`, the total it is a term of, improves 0.2564 → 0.1984.
    lines = []
    for epoch, (total, part) in enumerate(((0.31, 0.0011), (0.2564, 0.0013), (0.1984, 0.0031)),
                                          start=48):
        lines += [f"Epoch {epoch}/50",
                  f"100/100 [==============================] - 120s 1s/step - loss: "
                  f"{0.08 - epoch / 10000:.4f} - mrcnn_class_loss: 0.0100 - val_loss: {total} "
                  f"- val_mrcnn_class_loss: {part}"]
    data = verdict_of(tmp_path, lines)
    assert not any(a["type"] == "eval-degradation" and not a.get("resolved")
                   for a in data["anomalies_detected"]), data["anomalies_detected"]


def test_the_planned_epochs_spelled_epoches(tmp_path: Path):
    # NoProp's argparse dump (sealed-30): `Namespace(…, epoches=1000)`.
    from babysit.parsing.frameworks import planned_epochs
    assert planned_epochs("argparse done Namespace(dataset='cifar100', epoches=1000)") == 1000


def test_the_trainer_s_stdout_after_a_bar_drawn_once_at_its_start(tmp_path: Path):
    # XLM-R under DDP (sealed-30): the bar's first draw `0/1075` reached the file, then
    # only the Trainer's dicts (stdout), fractional epochs, and its summary. The records
    # are the progress; the summary after the last epoch is the end.
    lines = ["  0%|                                 | 0/1075 [00:00<?, ?it/s]"]
    lines += [f"{{'loss': {2.2 - i / 60:.4f}, 'grad_norm': 4.2, 'learning_rate': "
              f"{1e-5 * (1 - i / 108):.3e}, 'epoch': {i / 21.6:.2f}}}" for i in range(108)]
    lines += ["{'train_runtime': 807.5068, 'train_samples_per_second': 74.303, "
              "'train_steps_per_second': 1.331, 'train_loss': 0.1557, 'epoch': 5.0}",
              "Training completed successfully."]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]

"""Shapes and judgements added in the fourteenth session, each on lines written in the
real shape of a public log."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import EventKind
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _events(lines: list[str]) -> list[EventKind]:
    return [e.kind for r in LogParser().feed_lines(lines) for e in r.events]


@pytest.mark.parametrize("line", [
    "Something wrong happens! Current model is saved to <D:\\runs\\tmp_model>",
    "Something went wrong: CUDA out of memory. Tried to allocate 280.00 MiB",
    "[2019-01-06 10:24:25] ERROR - something went wrong, saving and exiting.",
])
def test_a_handlers_sentence_that_something_went_wrong_is_a_failure(line: str):
    # (what went wrong, when it is said, names the failure: an OOM is an OOM)
    assert {EventKind.EXCEPTION, EventKind.OOM} & set(
        _events(["step: 10,  total loss: 2517.050", line]))


@pytest.mark.parametrize("line", [
    "UserWarning: there might be something wrong with your environment.",
    "If something goes wrong, the checkpoint is kept.",
    "Nothing wrong happened: the run is fine.",
])
def test_advice_or_prose_about_something_wrong_is_no_failure(line: str):
    assert EventKind.EXCEPTION not in _events(["step: 10,  total loss: 2517.050", line])


def test_the_exit_path_after_a_caught_error_is_no_success(tmp_path: Path):
    # A style-transfer loop's handler catches the error mid-epoch, saves a temporary
    # model, and the script goes on to its own `Done training!` lines on the way out.
    lines = [line for step in range(5000, 5640, 20)
             for line in (f"step: {step},  total loss: {2600 - step / 100:.3f},  "
                          f"elapsed time: 0:54:17.473793", f"content loss: {2478.894:.3f}")]
    lines += ["", "Something wrong happens! Current model is saved to <D:\\wxd\\tmp_model>", "",
              "Done training! Elapsed time: 0:54:30.136937",
              "Model is saved to: model_retrain/style_weight_1e-2.ckpt", "",
              ">>> Successfully! Done all training...", ""]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")


@pytest.mark.parametrize("footer", ["[Finished in 1928.4s]", "Process finished with exit code 0"])
def test_an_exit_status_0_after_a_loop_seen_over_is_the_runs_success(tmp_path: Path,
                                                                     footer: str):
    # An NTM copy task run from Sublime Text: a round count of epochs and nothing said,
    # then the editor's footer for status 0. The loop seen over alone is ENDED; the
    # status the runner saw confirms it.
    lines = [f"Epoch: ({i}), Loss : {5.5 / (1 + i / 50):.6f} , acc: {min(100.0, 48 + i / 5):.4f}%"
             for i in range(1000)]
    data = verdict_of(tmp_path, [*lines, footer])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")
    (tmp_path / "alone").mkdir()
    data = verdict_of(tmp_path / "alone", lines)
    assert data["terminal_state"] != "SUCCEEDED"


# -- a native program's stack ------------------------------------------------------------


def test_a_native_backtrace_after_an_error_is_the_program_dying(tmp_path: Path):
    # Darknet's `error()`: the location, the message, then glibc's backtrace_symbols.
    lines = ["   0 conv     32       3 x 3/ 1    416 x 416 x   3 ->  416 x 416 x  32 0.299 BF",
             " 106 yolo",
             "Darknet error location: ./src/parser.c, parse_yolo(), line #458",
             "Error: l.outputs == params.inputs, filters= in the [convolutional]-layer doesn't "
             "correspond to classes= or mask= in [yolo]-layer: Success",
             "backtrace (4 entries)",
             "1/4: ./darknet/darknet(log_backtrace+0x38) [0x5c6c92b5a1f8]",
             "2/4: ./darknet/darknet(error+0x3d) [0x5c6c92b5a2dd]",
             "3/4: ./darknet/darknet(parse_yolo+0x148) [0x5c6c92bc4dc8]",
             "4/4: /lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x80) [0x797ef21d4e40]"]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")
    assert any("filters=" in a["description"] for a in data["anomalies_detected"]
               if a["type"] == "crash")


def test_one_address_quoted_is_no_stack():
    lines = ["step 1 loss 0.5", "loaded plugin ./libfoo.so(init+0x10) [0x7f00deadbeef]",
             "step 2 loss 0.4"]
    assert EventKind.EXCEPTION not in _events(lines)


# -- the shell's prompt, learned from the log's first line ---------------------------------


def _seq2seq(prompt: str, iterations: int, planned: int) -> list[str]:
    lines = [f"{prompt} python -m src.train", "Loading data..."]
    lines += [f"Iteration {i}/{planned}, Loss: {10.26 - i / 1000:.4f}, Grad Norm: 0.4000"
              for i in range(100, iterations + 1, 100)]
    return [*lines, "", f"{prompt} python -m src.eval", "EN: we are driving a car .", "FR: ."]


def test_the_prompt_the_log_opened_with_printed_again_ends_the_run(tmp_path: Path):
    # A zsh theme's prompt, no shell's default: learned from the command that started
    # the run. The process is over short of its plan: ENDED, not RUNNING.
    data = verdict_of(tmp_path, _seq2seq("  ❯❯ /home/u/Encoder-Decoder :", 3000, 10000))
    assert data["terminal_state"] == "ENDED"


def test_a_line_that_merely_starts_like_a_quote_is_no_prompt(tmp_path: Path):
    data = verdict_of(tmp_path, _seq2seq(">", 3000, 10000))
    assert data["terminal_state"] == "RUNNING"


# -- names in brackets; Ultralytics' glyph bars ----------------------------------------------


def test_names_in_brackets_are_read():
    [*_, record] = [r for r in LogParser().feed_lines([
        "2019-08-07 02:59:37,013 - __main__ - INFO - [epoch]: 199, [batch]: 23900, "
        "[loss]: 4.994150638580322"]) if r.metrics]
    assert record.epoch == 199
    assert record.metrics["loss"] == pytest.approx(4.99415)


def _yolo_epochs(bar: str, epochs: int, planned: int) -> list[str]:
    lines = ["Starting training for 100 epochs..."]
    for epoch in range(1, epochs + 1):
        lines += ["",
                  "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
                  f"\x1b[K      {epoch}/{planned}         0G      {3.4 - epoch / 100:.3f}      "
                  f"5.648      4.318         30        320: 100% {bar} 1/1 1.9it/s 0.5s",
                  "\x1b[K                 Class     Images  Instances      Box(P          R      "
                  f"mAP50  mAP50-95): 100% {bar} 1/1 6.0it/s 0.2s",
                  "                   all          4         17          0          0          0"
                  "          0"]
    return lines


@pytest.mark.parametrize("bar", ["━━━━━━━━━━━━", "ÔöüÔöüÔöüÔöüÔöüÔöü"])
def test_ultralytics_glyph_bars_give_the_rows_and_their_validation(bar: str):
    read = [r for r in LogParser().feed_lines(_yolo_epochs(bar, 3, 100)) if r.metrics]
    assert [r.epoch for r in read if "box_loss" in r.metrics] == [1, 2, 3]
    assert [r.metrics["val/map50"] for r in read if "val/map50" in r.metrics] == [0, 0, 0]


def test_a_finished_detector_whose_map_never_left_0_is_no_go(tmp_path: Path):
    lines = [*_yolo_epochs("━━━━━━━━━━━━", 12, 12), "", "12 epochs completed in 0.036 hours."]
    data = verdict_of(tmp_path, lines)
    assert data["decision"] == "NO-GO"
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in data["anomalies_detected"])


@pytest.mark.parametrize("name", ["aps", "apm", "apl", "bbox/aps", "segm/APl", "ar_100", "ars"])
def test_coco_size_averages_are_statistics_over_a_possibly_empty_set(name: str):
    # detectron2's evaluation: `APs: nan` where no small object was in the split.
    from babysit.rules.nonfinite_roles import Role, role_of
    assert role_of(name, float("nan")) is Role.STATISTIC


def test_plural_counters_of_a_total_give_the_step_and_the_epoch():
    # PaddleSeg-style: `Epochs: 1/200 || Iters: 10/85000 || Lr: … || Loss: …`.
    [record] = [r for r in LogParser().feed_lines([
        "2021-11-01 12:05:05,081 semantic_segmentation INFO: Epochs: 1/200 || Iters: "
        "10/85000 || Lr: 0.009998941170241945 || Loss: 2.78902268409729 || mIoU: "
        "0.12037035822868347 || Cost Time: 0:00:07"]) if r.metrics]
    assert (record.step, record.target_steps, record.epoch) == (10, 85000, 1.0)


def test_a_plural_count_alone_is_a_setting_not_progress():
    read = [r for r in LogParser().feed_lines(["epochs: 30", "iters: 1000"]) if r.metrics]
    assert all(r.epoch is None and r.step is None for r in read)


def test_a_yolo_rows_bar_drawn_before_its_row_is_not_the_runs_step():
    lines = ["      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
             "  0%|          | 0/37 [00:00<?, ?it/s]",
             "      1/100      7.1G     0.4159     0.2449     0.8895          9        640:   3%"
             "|▎         | 1/37 [00:00<00:17,  2.06it/s]"]
    read = LogParser().feed_lines(lines)
    assert all(r.target_steps != 37 for r in read)


def test_a_spread_said_after_the_mean_of_the_folds_closes_the_run(tmp_path: Path):
    lines = [f"Epoch: [{e}][{b}/12]\tLoss {0.9 - e / 200:.4f}\tAccuracy {0.6 + e / 500:.3f}"
             for e in range(95, 100) for b in (4, 8, 12)]
    lines += ["=> loaded best model './checkpoint/kcnn/model_best.pth' (epoch 4)",
              "Average accuracy:  0.6759999999999999", "std:  0.041279534881100574"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"
    (tmp_path / "cut").mkdir()
    # cut before the spread: the average, under names no epoch printed, says the loop is
    # over (ENDED), not that the run finished
    assert verdict_of(tmp_path / "cut", lines[:-1])["terminal_state"] == "ENDED"


def test_a_finished_run_judged_not_learning_while_it_went_on_is_no_go(tmp_path: Path):
    # A from-scratch seq2seq whose grad norm is printed as exactly 0 at every iteration
    # (high while it runs), and whose run then ends: what it delivers never learned.
    lines = [f"Iteration {i}/1000, Loss: {10.26 - i / 2000 + (i % 300) / 500:.4f}, "
             f"Grad Norm: 0.0000" for i in range(100, 1001, 100)]
    data = verdict_of(tmp_path, [*lines, "Training complete."])
    assert data["terminal_state"] == "SUCCEEDED"
    assert data["decision"] == "NO-GO"
    (tmp_path / "live").mkdir()
    assert verdict_of(tmp_path / "live", lines[:6])["decision"] != "NO-GO"


def test_a_tables_time_left_column_at_0_ends_the_run(tmp_path: Path):
    # scikit-learn's GradientBoosting with verbose=1: the time left counts down to 0.00s
    # at the last planned iteration, and nothing else is said.
    rows = [f"{i:>6}           {1.3 - i / 300:.4f}            {(100 - i) * 0.05:.2f}s"
            for i in (*range(1, 10), *range(10, 101, 10))]
    lines = ["  Iter       Train Loss   Remaining Time ", *rows]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"
    (tmp_path / "cut").mkdir()
    assert verdict_of(tmp_path / "cut", lines[:-1])["terminal_state"] == "RUNNING"


def _lasagne_epochs(epochs: int, planned: int) -> list[str]:
    lines = ["Training..."]
    for epoch in range(1, epochs + 1):
        lines += [f"Epoch {epoch} of {planned} took 70.4168188572s",
                  "  LR:                            0.003",
                  f"  training loss:                 {1.2 / epoch:.6f}",
                  f"  validation loss:               {1.1 / epoch:.6f}",
                  f"  validation error rate:         {9.0 / epoch:.6f}%",
                  f"  best epoch:                    {epoch}",
                  f"  best validation error rate:    {9.0 / epoch:.6f}%",
                  f"  test loss:                     {1.1 / epoch:.6f}",
                  f"  test error rate:               {9.1 / epoch:.6f}%"]
    return lines


def test_a_test_after_an_epoch_far_short_of_its_plan_is_no_end(tmp_path: Path):
    # Lasagne's MNIST example tests after every epoch, under `Epoch N of M took …s`.
    assert verdict_of(tmp_path, _lasagne_epochs(2, 1000))["terminal_state"] == "RUNNING"
    (tmp_path / "done").mkdir()
    assert verdict_of(tmp_path / "done", _lasagne_epochs(5, 5))["terminal_state"] == "SUCCEEDED"


@pytest.mark.parametrize("line", [
    "killed",
    "trainthemodel.sh: line 6: 13536 Killed  melody_rnn_train --config=attention_rnn "
    "--hparams=\"{'batch_size':64,'rnn_layer_sizes':[64,64]}\" --num_training_steps=20000",
])
def test_the_shells_kill_report_is_read_whatever_follows_it(tmp_path: Path, line: str):
    # (the second's command line reads as a configuration dict: the kill is still said)
    lines = ["INFO:tensorflow:Starting training loop...", "==== iteration: 1 =====",
             "train: ", line]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("FAILED", "NO-GO")
    assert any(a["type"] == "oom" for a in data["anomalies_detected"])


def test_a_traceback_header_a_terminal_wrapped_still_opens_a_traceback(tmp_path: Path):
    pad = " " * 40
    lines = [f"epoch: 0, file: 1/10, batch: {b}/78125, loss: {10.5 - b / 1000:.4f}"
             for b in range(50, 500, 50)]
    lines += ["./data/shard_1.pkl:  11%|██▍    | 261M/2.35G [01:59<09:18, 3.73MB/s]Traceback "
              "(most recent cal", f"l last):{pad}",
              f'  File "/home/u/train_pretrain.py", line 18, in <module>{pad}',
              f"    trainer.train(){pad}",
              f'  File "/home/u/llm_trainer/trainer.py", line 440, in _on_exception{pad}',
              f"    raise e{pad}"]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "FAILED"
    # frames alone, with no header, still say too little
    (tmp_path / "frames").mkdir()
    assert verdict_of(tmp_path / "frames", lines[:9] + lines[11:])["terminal_state"] == "RUNNING"


def test_keras_bars_with_no_header_that_finish_again_count_epochs(tmp_path: Path):
    # A paste that kept each epoch's last two frames, the checkpoint callback's message
    # glued to the first: the bar's total is one epoch's batches, not the run's plan.
    lines = []
    for epoch, (loss, val) in enumerate([(1.608, 1.5564), (1.5307, 1.5285), (1.4806, 1.5510),
                                         (1.4509, 1.5861)], 1):
        lines += [f"12299/12300 [============================>.] - ETA: 0s - loss: {loss:.4f}"
                  f"Epoch {epoch:05d}: val_loss did not improve",
                  f"12300/12300 [==============================] - 2741s 223ms/step - loss: "
                  f"{loss:.4f} - val_loss: {val:.4f}"]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "RUNNING"
    assert any(a["type"] == "eval-degradation" for a in data["anomalies_detected"])
    [*_, last] = [r for r in LogParser().feed_lines(lines) if r.step is not None]
    assert (last.step, last.target_steps, last.epoch) == (49200, None, 4.0)

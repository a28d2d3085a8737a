"""Shapes read since the forty-seventh session, each on lines written in the real shape of
a public log (sealed-156 and sealed-157, each scored blind first)."""

from __future__ import annotations

from pathlib import Path

from tests.parsing.test_shapes_round44 import _open
from tests.rules.test_loss_rules import verdict_of

# -- a notebook's coloured traceback through a folder whose name has spaces -------------

_RED, _GREEN, _CYAN, _BLUE, _OFF = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0;36m", "\x1b[0;34m", "\x1b[0m"


def _ipython_frame(path: str, function: str, line_no: int, code: str) -> list[str]:
    return [f"{_GREEN}{path}{_OFF} in {_CYAN}{function}{_BLUE}(){_OFF}",
            f"{_GREEN}---> {line_no}{_RED}     {_OFF}{code}{_OFF}", ""]


def _epoch_line(epoch: int) -> str:
    return (f"Epoch # {epoch:2d} ............... train-loss = {0.07 - epoch / 1000:.4g}"
            f"\tvalid-loss = {0.05 - epoch / 2000:.4g}\tTrainTime = 5700.1s")


def test_a_notebook_traceback_through_a_spaced_folder_and_compiled_frames_is_a_crash(
        tmp_path: Path):
    """Colab's Drive folders carry spaces (`/content/drive/MyDrive/2022 FastMRI/…`), and
    h5py's frames are `.pyx` files: each is a frame's head, not training output that ends
    the traceback. The exception's message then runs on to a second line."""
    lines = [_epoch_line(epoch) for epoch in range(3)]
    lines += [f"{_RED}{'-' * 75}{_OFF}",
              f"{_RED}OSError{_OFF}                                   Traceback (most recent "
              "call last)",
              *_ipython_frame("<ipython-input-3-1f2e>", "<module>", 4, "train(args)"),
              *_ipython_frame("/content/drive/MyDrive/2022 FastMRI/varnet/utils/train_part.py",
                              "train", 92, "train_loss, train_time = train_epoch(args)"),
              *_ipython_frame("h5py/_objects.pyx", "h5py._objects.with_phil.wrapper", 0, ""),
              *_ipython_frame("/usr/local/lib/python3.7/dist-packages/h5py/_hl/dataset.py",
                              "__getitem__", 787, "self.id.read(mspace, fspace, arr)"),
              f"{_RED}OSError{_OFF}: Can't read data (file read failed: time = Sat Aug  6 "
              "11:29:06 2022",
              ", filename = '/content/drive/Shareddrives/2022 FastMRI/train/brain101.h5', "
              "errno = 5, error message = 'Input/output error')"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert ("crash", "blocker") in _open(artifact)
    assert "OSError" in artifact["summary"]


# -- the plan as a configuration dict quotes it -------------------------------------------

def _opengait_lines(last: int) -> list[str]:
    head = ["[2025-10-01 13:40:04] [INFO]: {'enable_float16': True, 'log_iter': 100, "
            "'restore_hint': 0, 'save_iter': 400, 'save_name': 'GaitGL', 'sync_BN': True, "
            "'total_iter': 800, 'sampler': {'batch_size': [8, 8], 'type': 'TripletSampler'}}"]
    return head + [f"[2025-10-01 13:{40 + n // 100:02d}:05] [INFO]: Iteration {n:05d}, Cost "
                   f"25.10s, triplet_loss={1.5 - n / 2000:.4f}, softmax_loss="
                   f"{0.9 - n / 2000:.4f}, softmax_accuracy={0.5 + n / 2000:.4f}"
                   for n in range(100, last + 1, 100)]


def test_a_quoted_total_of_iterations_in_a_configuration_dict_is_the_plan(tmp_path: Path):
    artifact = verdict_of(tmp_path, _opengait_lines(800))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    (tmp_path / "short").mkdir()
    short = verdict_of(tmp_path / "short", _opengait_lines(500))
    assert short["terminal_state"] != "SUCCEEDED"


# -- a status box that gives the row's share of the plan -----------------------------------

_XLEARN_HEAD = "                   Epoch      Train log_loss     Time cost (sec)"


def _xlearn_rows(last: int, loss: str) -> list[str]:
    return [_XLEARN_HEAD] + [f"[  {10 * e:3d}%      ]    {e:2d}                 {loss}"
                             f"                0.20" for e in range(1, last + 1)]


def test_a_percentage_box_gives_the_planned_epochs(tmp_path: Path):
    """xLearn's `[ 80% ] 8`: the eighth of ten epochs. At `[ 100% ]` the plan is done."""
    done = verdict_of(tmp_path, _xlearn_rows(10, "nan"))
    assert done["terminal_state"] == "SUCCEEDED"
    assert done["decision"] == "NO-GO"  # every epoch's loss is NaN
    assert ("nan-inf", "blocker") in _open(done)
    (tmp_path / "cut").mkdir()
    cut = verdict_of(tmp_path / "cut", _xlearn_rows(6, "0.5123"))
    assert cut["terminal_state"] == "RUNNING"


# -- a summary of the training's time printed after every step ------------------------------

def _worker_step(n: int) -> list[str]:
    stamp = f"2025-10-28 01:{n // 2:02d}:{14 + n % 2 * 20:02d}"
    head = f"{stamp} - src.worker.training_worker - INFO - "
    return [f"{stamp} - src.lib.model_manager - INFO - Loaded best model from model_weight.pth",
            f"{head}✅ Training step #{n} complete:",
            f"{head}   Total loss: {3.42 - min(n, 10) * 0.02:.4f}",
            f"{head}   Training examples: 5,722",
            f"{head}   Training time: {10.4 + n % 7:.1f}s",
            f"{head}   Model saved: model_step_{n:06d}"]


def test_a_training_time_printed_after_every_step_is_no_end_of_the_run(tmp_path: Path):
    """An AlphaZero training worker closes each step with `Training time: 16.7s`: after
    94 steps the log stops after one more, which says nothing of the run's end."""
    artifact = verdict_of(tmp_path, [line for n in range(1, 30) for line in _worker_step(n)])
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["decision"] == "CONDITIONAL"


# -- a best model's file named on lines in another language ---------------------------------

def _drag_epoch(epoch: int) -> list[str]:
    val = 0.3 * 0.99 ** epoch if epoch <= 60 else 0.3 * 0.99 ** 60 * (1 + (epoch - 60) / 50)
    stamp = f"2026-05-07 11:{epoch // 60:02d}:{epoch % 60:02d},846 - INFO - "
    lines = [f"{stamp}  Batch [{b}/25] Loss: {0.3 * 0.98 ** epoch + b / 1000:.6f} (Main: "
             f"{0.3 * 0.98 ** epoch:.6f}, StdReg: 0.99)" for b in (20, 25)]
    lines += [f"{stamp}", f"Epoch [{epoch}/100] Loss: {0.3 * 0.98 ** epoch:.6f} ValLoss: "
              f"{val:.6f} LR: 5.00e-04 Time: 19.7s"]
    if epoch <= 60:
        lines.append(f"{stamp}✓ 保存最佳模型到 ./checkpoints/best_model.pth (val_loss={val:.6f})")
    return lines


def test_a_best_model_saved_in_another_language_is_the_model_delivered(tmp_path: Path):
    """A Chinese trainer saves `best_model.pth` at each improvement, then names it again as
    it ends (`最佳模型已保存到: …`): the kept best is what it delivers, though its last
    epochs' validation got worse; naming the file again does not rewrite it."""
    lines = [line for epoch in range(1, 101) for line in _drag_epoch(epoch)]
    lines += ["2026-05-07 16:39:18,714 - INFO - 训练完成!",
              "2026-05-07 16:39:18,714 - INFO - 最佳模型已保存到: ./checkpoints/best_model.pth"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "GO", artifact["summary"]
    assert not [a for a in _open(artifact) if a[0] == "eval-degradation"]


def test_a_load_of_the_best_model_in_another_language_is_no_save():
    from babysit.model import EventKind
    from babysit.parsing.events import find_events
    saved = [e.detail for e in find_events("INFO - ✓ 保存最佳模型到 ./ckpt/best_model.pth")
             if e.kind is EventKind.CHECKPOINT_SAVED]
    assert saved == ["./ckpt/best_model.pth"]
    for line in ("加载模型 ./ckpt/best_model.pth", "保存模型到 ./ckpt/last.pth",
                 "最佳模型保存失败 ./ckpt/best_model.pth: Error 28"):
        assert not [e for e in find_events(line) if e.kind is EventKind.CHECKPOINT_SAVED], line


# -- the previous epoch's value restated ----------------------------------------------------

def test_a_previous_value_undefined_at_the_first_epoch_is_no_broken_run(tmp_path: Path):
    """PyKEEN's epoch bar: `loss=1.41, prev_loss=nan` at epoch 1, when no epoch came before."""
    previous = ["nan", *(f"{1.41 - e * 0.03:.3g}" for e in range(1, 20))]
    lines = [f"Training epochs on cpu: 100%|██████████| {e}/20 [00:{e:02d}<00:00, 3.2epoch/s, "
             f"loss={1.41 - e * 0.03:.3g}, prev_loss={previous[e - 1]}]" for e in range(1, 21)]
    artifact = verdict_of(tmp_path, lines)
    assert ("nan-inf", "blocker") not in _open(artifact)
    assert artifact["decision"] != "NO-GO"


# -- a Keras bar finished again and again with no epoch header ------------------------------

def test_a_keras_bar_finished_again_with_no_header_is_another_epoch_not_the_plan(tmp_path: Path):
    """A notebook's loop of one-epoch `fit` calls (a stateful LSTM reset between them)
    leaves each epoch's bar at its end only: fifteen `49519/49519 [====]` lines. Each is
    an epoch; the bar's total is one epoch's, not the run's plan, so the last says
    nothing of how many the loop meant to run."""
    lines = [f"49519/49519 [==============================] - 87s 2ms/step - loss: "
             f"{0.0057 - e * 0.00001:.5f}" for e in range(15)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] != "SUCCEEDED"
    assert artifact["decision"] == "CONDITIONAL"


# -- the best kept, in a log that prints epochs and no step ---------------------------------

def test_a_best_kept_before_the_evaluation_worsened_counts_in_a_log_with_no_step(
        tmp_path: Path):
    """A hand loop's `Epoch 12/100 - train_loss: …, val_loss: …` and `Saved best model to
    …/best_model.pth` at each improvement: no step anywhere, so which came first is told
    by the order of the lines. The best was kept before the validation got worse."""
    def epoch(e: int) -> list[str]:
        val = 0.3 * 0.99 ** e if e <= 60 else 0.3 * 0.99 ** 60 * (1 + (e - 60) / 50)
        line = f"Epoch {e}/100 - train_loss: {0.3 * 0.98 ** e:.6f}, val_loss: {val:.6f}"
        return [line, "Saved best model to ./checkpoints/best_model.pth"] if e <= 60 else [line]
    kept = verdict_of(tmp_path, [*(x for e in range(1, 101) for x in epoch(e)),
                                 "Training complete."])
    assert (kept["terminal_state"], kept["decision"]) == ("SUCCEEDED", "GO")
    # the same run saving nothing: its last weights are the worse ones
    (tmp_path / "none").mkdir()
    unsaved = [x for e in range(1, 101) for x in epoch(e) if not x.startswith("Saved")]
    assert verdict_of(tmp_path / "none", [*unsaved, "Training complete."])["decision"] != "GO"


# -- a classifier that collapsed between two epochs and stayed there ------------------------

def _keras_epochs(rows: list[tuple[float, float, float, float]]) -> list[str]:
    lines = []
    for n, (loss, acc, val_loss, val_acc) in enumerate(rows, 1):
        lines += [f"Epoch {n}/{len(rows)}",
                  f"1034/1034 [==============================] - 64s 62ms/step - loss: "
                  f"{loss:.4f} - sparse_categorical_accuracy: {acc:.4f} - val_loss: "
                  f"{val_loss:.4f} - val_sparse_categorical_accuracy: {val_acc:.4f}"]
    return lines


def test_a_model_that_collapsed_to_a_uniform_guess_and_stayed_is_a_divergence(tmp_path: Path):
    """sealed-160's wake-word model: after its first epoch its loss settles at ln 3 and
    both accuracies fall by half; four epochs are too few for the windowed tests."""
    rows = [(0.77, 0.8439, 1.1411, 0.8102), (1.088, 0.6345, 1.132, 0.4791),
            (1.1005, 0.3765, 1.1226, 0.4974), (1.0992, 0.3783, 1.1196, 0.5033)]
    artifact = verdict_of(tmp_path, _keras_epochs(rows))
    assert artifact["decision"] == "NO-GO"
    assert ("divergence", "blocker") in _open(artifact)


def test_a_dip_that_recovers_or_a_relaunch_is_no_collapse(tmp_path: Path):
    dip = [(0.9, 0.6, 0.8, 0.62), (0.7, 0.72, 0.7, 0.7), (1.0, 0.45, 0.9, 0.45),
           (0.65, 0.74, 0.66, 0.73), (0.6, 0.76, 0.64, 0.74)]
    (tmp_path / "dip").mkdir()
    assert not [a for a in _open(verdict_of(tmp_path / "dip", _keras_epochs(dip)))
                if a[0] == "divergence"]
    # the next launch appended: back near the first loss, not above it
    again = [(0.9, 0.6, 0.8, 0.62), (0.5, 0.82, 0.55, 0.8), (0.4, 0.86, 0.5, 0.84),
             (0.92, 0.55, 0.82, 0.5), (0.91, 0.56, 0.81, 0.52)]
    (tmp_path / "again").mkdir()
    assert not [a for a in _open(verdict_of(tmp_path / "again", _keras_epochs(again)))
                if a[0] == "divergence"]


# -- a perplexity below 1 -------------------------------------------------------------------

def test_a_perplexity_below_one_is_impossible(tmp_path: Path):
    """A Chemformer test run's Lightning table: `test_perplexity 4.13e-08` beside a test
    loss of 1.16 (a perplexity is e to a cross-entropy, never below 1)."""
    lines = [f"Epoch {e}: train_loss={2.0 - e / 10:.3f} val_loss={2.1 - e / 10:.3f} "
             f"val_ppl={2.718 ** (2.1 - e / 10):.3f}" for e in range(1, 6)]
    lines += ["test_loss=1.1629 test_perplexity=4.1300854292103395e-08 test_token_acc=0.891"]
    found = [a for a in verdict_of(tmp_path, lines)["anomalies_detected"]
             if a["type"] == "impossible-metric"]
    assert [a["description"].split(" =")[0] for a in found] == ["test_perplexity"]


# -- a save the saver says it did not make --------------------------------------------------

def test_a_checkpoint_the_saver_says_it_did_not_save_is_a_failed_save():
    from babysit.model import EventKind
    from babysit.parsing.events import find_events
    lightning = ("/usr/local/lib/python3.6/dist-packages/pytorch_lightning/utilities/"
                 "distributed.py:25: RuntimeWarning: The metric you returned 0.372 must be a "
                 "`torch.Tensor` instance, checkpoint not saved")
    assert [e.kind for e in find_events(lightning)] == [EventKind.CHECKPOINT_ERROR]
    for policy in ("val_loss did not improve, model not saved",
                   "Model not saved (not the best so far)"):
        assert not find_events(policy), policy


def test_a_model_checkpoint_watching_a_metric_the_run_never_logs_saves_nothing():
    """Keras' ModelCheckpoint(monitor='acc') where the run logs `accuracy`: at every epoch
    `Can save best model only with acc available, skipping.`, glued to the bar."""
    from babysit.model import EventKind
    from babysit.parsing.events import find_events
    line = ("12/13 [==========================>...] - ETA: 0s - loss: 0.0013 - accuracy: "
            "0.9997WARNING:tensorflow:Can save best model only with acc available, skipping.")
    assert EventKind.CHECKPOINT_ERROR in [e.kind for e in find_events(line)]


def test_the_stop_said_alone_after_its_checks_is_an_early_stop():
    from babysit.model import EventKind
    from babysit.parsing.events import EARLY_STOP, find_events
    for line in ("Stopping Training.", "Stopping training early!"):
        assert [(e.kind, e.detail) for e in find_events(line)] == \
            [(EventKind.COMPLETED, EARLY_STOP)], line
    assert not find_events("Stopping training because of NaN")


def test_a_keras_bar_with_an_older_frames_tail_left_behind_is_read(tmp_path: Path):
    """A notebook redrew the last frame over a longer one without clearing the line:
    `… - loss: 0.3744 - acc: 0.8782 0s - loss: 0.3757 - acc`. The bar at its total is
    the fifteenth epoch's end, the plan's."""
    lines = []
    for e in range(1, 16):
        tail = " 0s - loss: 0.3757 - acc" if e == 15 else ""
        lines += [f"Epoch {e}/15", f"29685/29685 [==============================] - 7s "
                  f"237us/step - loss: {2.4 / e:.4f} - acc: {0.2 + e / 20:.4f}{tail}"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


# -- a tagger's best result restated after its last epoch -----------------------------------

def _tagger_epoch(e: int) -> list[str]:
    return [f"Training:\tEpoch : {e}\tTime : 1.68s\tLoss of tag : {0.65 / (e + 1):.2f}\t"
            f"Loss of class : {0.85 / (e + 1):.2f} ",
            f"Validation:\tEpoch : {e}\tTime : 0.078s\tLoss : (0.06, 0.2)\tFscore : "
            f"{97.0 + (e % 3) / 2:.2f}\tcls-F1 : 98.20 ",
            f"Evaluation:\tEpoch : {e}\tTime : 0.125s\tLoss : (0.23, 0.2)\tFscore : "
            f"{95.0 + (e % 2) / 2:.2f}\tcls-F1 : 98.21 "]


def test_the_best_result_restated_after_the_last_epoch_closes_the_plan(tmp_path: Path):
    """A slot-filling BLSTM (`max_epoch=50` in its arguments, epochs 0 to 49), then `BEST
    RESULT: \tEpoch : 21\tbest valid (…)`: the plan done, the best said again. Its F-score
    is a tagger's measure, not a return to be judged flat."""
    lines = ["Namespace(batchSize=20, dataset='atis', lr=0.001, max_epoch=50, max_norm=5.0)"]
    lines += [line for e in range(50) for line in _tagger_epoch(e)]
    lines += ["BEST RESULT: \tEpoch : 21\tbest valid (Loss: (0.05, 0.15) F1 : 98.10 cls-F1 : "
              "98.40)\tbest test (Loss: (0.18, 0.15) F1 : 95.55 cls-F1 : 98.66) "]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


# -- how much of a long log was parsed, and how much searched --------------------------------

def test_a_long_logs_reading_says_how_much_was_only_searched(tmp_path: Path):
    """The first poll of a long log parses its last lines only: the share understood is
    of those, and the bytes before them were searched, which the reading says."""
    lines = [f"step {i} loss {2.0 - i / 200000:.5f} lr 0.001" for i in range(120_000)]
    artifact = verdict_of(tmp_path, lines)
    reading = artifact["reading"]
    assert reading["bytes_searched"] > 2_000_000
    assert reading["lines"] < 120_000

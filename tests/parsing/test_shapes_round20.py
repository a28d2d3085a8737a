"""Shapes read and judgements made since the twentieth session, each on lines written in
the real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.completion_words import says_finished
from babysit.parsing.events import find_events
from babysit.parsing.formats import parse_key_values
from tests.rules.test_loss_rules import verdict_of


def test_a_configuration_written_as_a_python_call_is_no_training_record():
    # OpenMMLab prints its whole config at the start: `lr=0.0005` in it is a setting.
    for line in ("optim_wrapper = dict(optimizer=dict(type='Adam', lr=0.0005))",
                 "param_scheduler = [dict(type='LinearLR', begin=0, end=500, start_factor=0.001)]",
                 "train_cfg = dict(by_epoch=True, max_epochs=40, val_interval=1)"):
        assert parse_key_values(line) is None, line
    # A record that happens to carry parentheses is still read.
    parsed = parse_key_values("step=100 loss=2.31 (avg 2.40) lr=1e-4")
    assert parsed is not None and parsed.metrics["loss"] == 2.31
    # Settings as `key=word` pairs (Ultralytics' trainer line) are no record; a record
    # whose other fields are a counter and durations (llama.cpp's finetune) is one.
    assert parse_key_values("engine/trainer: task=detect, mode=train, model=yolov8m.pt, "
                            "data=data.yaml, epochs=100, patience=50, batch=16") is None
    parsed = parse_key_values("train_opt_callback: iter=    70 sample=72/5608 sched=0.700000 "
                              "loss=4.948237 dt=00:04:59 eta=03:29:33 |------>")
    assert parsed is not None and parsed.metrics["loss"] == 4.948237


def _openmmlab_epochs(epochs: int, planned: int) -> list[str]:
    # mmengine with a logging interval longer than an epoch: no training line at all, only
    # each epoch's save and its validation (a metric named at its threshold, `PCK@0.05`).
    lines = [f"train_cfg = dict(by_epoch=True, max_epochs={planned}, val_interval=1)",
             "optim_wrapper = dict(optimizer=dict(type='Adam', lr=0.0005))"]
    for epoch in range(1, epochs + 1):
        head = f"09/15 12:42:{epoch:02d} - mmengine - INFO - "
        lines += [f"{head}Saving checkpoint at {epoch} epochs",
                  f"09/15 12:42:{epoch:02d} - mmengine - INFO - Evaluating PCKAccuracy "
                  f"(normalized by ``\"bbox_size\"``)...",
                  f"09/15 12:42:{epoch:02d} - mmengine - INFO - Epoch(val) [{epoch}][2/2]  "
                  f"pck/PCK@0.05: {0.01 + 0.01 * epoch:.6f}"]
    return lines


def test_the_save_after_the_last_planned_epoch_ends_a_run_that_prints_no_training_line(
        tmp_path: Path):
    data = verdict_of(tmp_path, _openmmlab_epochs(40, 40))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    data = verdict_of(tmp_path, _openmmlab_epochs(25, 40))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _vae(last: int) -> list[str]:
    # A JAX VAE: `Epoch N - Train <ELBO>, Test <ELBO>` every ten epochs, fields set apart by
    # a dash and commas only; the training figure falls (an annealed KL term) while the
    # test one rises from its first evaluation on.
    lines = [f"Epoch {e} - Train {-72.0 - 33.0 * e / 5000:.6f}, "
             f"Test {-241.2 + 129.5 * (1 - (1 - e / 5000) ** 4):.6f}"
             for e in range(10, last + 1, 10)]
    return lines


def test_a_dash_and_comma_record_is_read_and_its_unlike_twins_not_judged(tmp_path: Path):
    finished = [*_vae(5000), "Saved final params to /content/drive/My Drive/vae/params.pkl"]
    data = verdict_of(tmp_path, finished)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    assert not any(a["type"] == "eval-degradation" for a in data["anomalies_detected"])
    data = verdict_of(tmp_path, _vae(2130))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_the_shells_stop_word_after_a_logger_s_timestamp_is_a_stop():
    events = find_events("2024-11-24 04:13:57.870606: Terminated")
    assert [e.kind for e in events] == [EventKind.STOPPED_BY_SIGNAL]
    # Not a sentence that merely says the word.
    assert not find_events("2024-11-24 04:13:57.870606: Terminated workers cleanly, saving")


def _distiller(epochs: int) -> list[str]:
    # Distiller (ai8x-training): each epoch's training lines, then a validation pass printed
    # in the training's own `Epoch: [e][i/n]` shape over its own batches, its summary and
    # the best so far; after the last epoch a `--- test ---` pass.
    lines = []
    for epoch in range(epochs):
        loss = 1.9 / (1 + epoch)
        lines.append("2024-05-11 05:00:11,645 - Training epoch: 50000 samples "
                     "(100 per mini-batch)")
        lines += [f"2024-05-11 05:00:16,168 - Epoch: [{epoch}][  {i}/  500]    Overall Loss "
                  f"{loss - i / 5000:.6f}    Objective Loss {loss - i / 5000:.6f}    "
                  f"LR 0.010000    Time 0.045195" for i in range(100, 501, 100)]
        val = loss * 1.4
        lines += [f"2024-05-11 05:00:33,331 - --- validate (epoch={epoch})-----------",
                  "2024-05-11 05:00:33,332 - 10000 samples (100 per mini-batch)",
                  f"2024-05-11 05:00:36,677 - Epoch: [{epoch}][  100/  100]    Loss {val:.6f}    "
                  f"Top1 {50 + epoch:.6f}    Top5 92.270000",
                  f"2024-05-11 05:00:36,869 - ==> Top1: {50 + epoch:.3f}    Top5: 92.270    "
                  f"Loss: {val:.3f}",
                  "2024-05-11 05:00:36,875 - Saving checkpoint to: logs/checkpoint.pth.tar"]
    return lines


def test_a_validation_pass_in_the_training_format_is_no_training_record(tmp_path: Path):
    tail = ["2024-05-11 05:21:28,702 - --- test ---------------------",
            "2024-05-11 05:21:28,703 - 10000 samples (100 per mini-batch)",
            "2024-05-11 05:21:30,862 - Test: [  100/  100]    Loss 0.431733    Top1 86.930000",
            "2024-05-11 05:21:31,001 - ==> Top1: 86.930    Top5: 99.470    Loss: 0.432"]
    data = verdict_of(tmp_path, [*_distiller(12), *tail])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    assert not any(a["type"] in ("loss-spike", "divergence") for a in data["anomalies_detected"])
    data = verdict_of(tmp_path, _distiller(12))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_command_line_refused_after_a_test_pass_printed_its_results_is_a_later_command(
        tmp_path: Path):
    # A Slurm job: a data-parallel test run prints each worker's results, then the job's
    # next step is refused by argparse (its usage text, then `prog: error: …`). The
    # refused command never started: no crash of the run that printed the results.
    lines = ["args: Namespace(batch_size=1, command='test', data_parallel=True, lr=0.0001)"]
    lines += [f"Test Accuracy: {89.86 - i * 0.3:.2f}  Loss: {0.3443 + i * 0.01:.4f}"
              for i in range(8)]
    lines += ["usage: sn_boilerplate_main.py [-h] {compile,run,test,measure-performance} ...",
              "sn_boilerplate_main.py: error: unrecognized arguments: -ws 8"]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("ENDED", "CONDITIONAL"), data["summary"]
    # Refused before anything printed figures, the command line is how the job failed.
    data = verdict_of(tmp_path, [lines[0], *lines[-2:]])
    assert data["terminal_state"] == "FAILED", data["summary"]


def test_a_plan_said_in_words_or_in_a_namespace_and_no_record_made_of_the_namespace(
        tmp_path: Path):
    epochs = [f"Epoch {e} loss: {1.0 - 0.1 * e:.2f}" for e in range(1, 4)]
    for head in ("Starting training for 3 epochs...", "Namespace(epochs=3, lr=0.1)"):
        data = verdict_of(tmp_path, [head, *epochs])
        assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
        data = verdict_of(tmp_path, [head.replace("3", "5"), *epochs])
        assert data["terminal_state"] == "RUNNING", data["summary"]
    # A patience is no plan.
    data = verdict_of(tmp_path, ["ReduceLROnPlateau: lr halves when training loss has not "
                                 "improved for 3 epochs", *epochs])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_an_epoch_summary_after_its_first_batch_stands_at_the_epoch_s_end(tmp_path: Path):
    # One planned epoch of 8 batches, only batch 0 logged, then the epoch's summary and the
    # script's own `Training completed!`: the plan is done, not stopped at step 0 of 8.
    lines = ["2025-07-05 12:59:32,237 - __main__ - INFO - Starting training for 1 epochs...",
             "2025-07-05 12:59:33,799 - __main__ - INFO - Epoch 1, Batch 0/8, Loss: 2.5475",
             "2025-07-05 12:59:34,052 - __main__ - INFO - Epoch 1 Training - Loss: 1.0774, "
             "Mod Acc: 0.8520, Time: 1.8s",
             "2025-07-05 12:59:34,517 - __main__ - INFO - Epoch 1 Validation - Loss: 0.9041, "
             "Mod Acc: 0.8300",
             "2025-07-05 12:59:34,887 - __main__ - INFO - Training completed!"]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


def _fann(errors: list[float], cap: int = 1000000, every: int = 100000) -> list[str]:
    # FANN's own report (every binding of the C library prints it): the plan and the goal,
    # then the epochs done and the current error, each a sentence.
    lines = [f"Max epochs {cap:>8}. Desired error: 0.0010000000."]
    for index, error in enumerate(errors):
        epoch = 1 if index == 0 else index * every
        lines.append(f"Epochs {epoch:>12}. Current error: {error:.10f}. Bit fail 195.")
    return lines


def test_fann_s_report_its_goal_reached_and_its_goal_never_approached(tmp_path: Path):
    # The desired error reached at epoch 69 of 500,000: the run's own stop criterion.
    reached = _fann([0.36, 0.25, 0.09, 0.0035, 0.00098, 0.000048, 0.00000017], 500000, 10)
    data = verdict_of(tmp_path, [*reached, "0,00 Xor 0,00 = 0,00", "1,00 Xor 1,00 = 0,00"])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    # The whole budget spent 480× above the goal: finished, and never learned the task.
    stuck = _fann([0.762] + [0.4797 + 0.0002 * (i % 3) for i in range(10)])
    data = verdict_of(tmp_path, stuck)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in data["anomalies_detected"])


def _yolov8(epochs: int, planned: int) -> list[str]:
    # Ultralytics: its settings as `key=value` words, the optimizer as a call, then per
    # epoch the header row, the epoch's bar and the validation row.
    lines = ["engine/trainer: task=detect, mode=train, model=yolov8m.pt, data=data.yaml, "
             f"epochs={planned}, patience=50, batch=16, imgsz=640, save=True, device=None",
             "optimizer: 'optimizer=auto' found, ignoring 'lr0=0.01' and 'momentum=0.937'",
             "optimizer: AdamW(lr=0.001667, momentum=0.9) with parameter groups 77 "
             "weight(decay=0.0), 84 weight(decay=0.0005), 83 bias(decay=0.0)"]
    for epoch in range(1, epochs + 1):
        box = 1.1 - 0.005 * epoch
        lines += ["", "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances"
                      "       Size",
                  f"{epoch:>7}/{planned}      6.98G     {box:.4f}     0.3178     0.9228          4"
                  f"        640: 100%|██████████| 15/15 [00:07<00:00,  1.95it/s]",
                  "                 Class     Images  Instances      Box(P          R      mAP50"
                  "  mAP50-95): 100%|██████████| 1/1 [00:00<00:00,  2.81it/s]",
                  f"                   all         20         38      0.744      0.909      "
                  f"{0.5 + 0.004 * epoch:.3f}       {0.3 + 0.004 * epoch:.3f}"]
    return lines


def test_ultralytics_settings_are_no_records_and_its_own_end_is_read(tmp_path: Path):
    finished = [*_yolov8(60, 60), "", "60 epochs completed in 0.271 hours.",
                "Optimizer stripped from runs/detect/train/weights/last.pt, 52.0MB"]
    data = verdict_of(tmp_path, finished)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    data = verdict_of(tmp_path, _yolov8(30, 60))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert "record" not in data["summary"], data["summary"]


def test_the_best_checkpoint_validated_once_training_is_over_is_what_the_run_delivers():
    for line in ("Validating runs/detect/train/weights/best.pt...",
                 "Testing best_model.pth on the test split",
                 "Reloading weights from checkpoints/best-epoch=12.ckpt"):
        assert [e.kind for e in find_events(line)] == [EventKind.BEST_RESTORED], line
    assert not find_events("Validating runs/detect/train/weights/last.pt...")


def test_figures_undefined_from_their_first_record_beside_a_finite_cross_entropy(
        tmp_path: Path):
    # (a detector's box loss by its own name is a loss: NaN there is the run's NaN)
    nan_box = [f"[Epoch 0][Batch {b}], Speed: 31.8 samples/sec, "
               f"CrossEntropy={12.25 - b / 1e4:.6f}, SmoothL1=nan" for b in range(99, 1000, 100)]
    assert verdict_of(tmp_path, nan_box)["decision"] == "NO-GO"
    # A graph posterior network prints dozens of figures an epoch; some are undefined for
    # its setting from the first epoch (`…_apr: nan`) while its cross-entropy is finite.
    lines = [f"Epoch {e}: UCE: {900 - 5 * e:.5f}, train_CE: {5.8 - 0.01 * e:.5f}, "
             f"train_accuracy: {0.15 + 0.002 * e:.5f}, train_confidence_structure_apr: nan, "
             f"val_confidence_structure_auroc: nan" for e in range(1, 60)]
    data = verdict_of(tmp_path, [*lines, "Early stopping after epoch 59 (patience 200).",
                                 "done training algorithm"])
    assert data["decision"] != "NO-GO", data["summary"]
    assert not any(a["type"] == "nan-inf" and a["severity"] in ("blocker", "high")
                   for a in data["anomalies_detected"])


def test_a_best_so_far_said_infinite_before_the_first_epoch_is_no_nan(tmp_path: Path):
    lines = ["20201008-153737 Started epoch 1 with learning rate 0.01. Current LR patience "
             "count is 1 epochs. Last lowest train loss is inf. Last lowest val loss is inf."]
    lines += [f"Trained batch: {b} batch loss: {900 / b:.4f} epoch total loss: {900 * b:.1f}"
              for b in range(1, 40)]
    data = verdict_of(tmp_path, lines)
    assert not any(a["type"] == "nan-inf" for a in data["anomalies_detected"]), data["summary"]


def test_a_loop_counting_episodes_in_fields(tmp_path: Path):
    lines = [f"episode {e} | reward {20 + e // 4}.0 | epsilon {max(0.1, 1 - e / 300):.4f}"
             for e in range(1, 400)]
    data = verdict_of(tmp_path, lines)
    assert "399" in data["summary"], data["summary"]


def test_a_tensor_of_nans_printed_again_and_again_is_the_run_s_nan(tmp_path: Path):
    lines = [f"Epoch: [0]  [{i}/3517]  eta: 1:02:03  lr: 0.000200  loss: {9.6 - i / 200:.4f}"
             for i in range(0, 841, 10)]
    for image in range(1933, 1921, -1):
        lines += [f"data/scannet/scene0538_00/instance-filt/{image}.png",
                  "tensor([nan, nan, nan, nan], device='cuda:0', requires_grad=True)"]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("RUNNING", "NO-GO"), data["summary"]


def test_keras_fit_s_return_value_displayed_ends_the_cell(tmp_path: Path):
    lines = []
    for e in range(1, 7):
        lines += [f"Epoch {e}/10", f"633/633 [==============================] - 0s - loss: "
                  f"{0.001 / e:.4e} - acc: 1.0000 - val_loss: {1.17 + 0.05 * e:.4f} - "
                  f"val_acc: 0.8880"]
    data = verdict_of(tmp_path, [*lines, "<keras.callbacks.History at 0x195dc5f60>"])
    assert data["terminal_state"] == "ENDED", data["summary"]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_keras_0_x_epoch_headers_without_a_total_and_each_epoch_s_finished_bar(
        tmp_path: Path):
    # Keras 0.x printed `Epoch 12` (no total) and each epoch's bar at its end only: the
    # bar's total is the epoch's samples, no plan the run reached.
    lines = []
    for epoch in range(15):
        loss = 1.18 - 0.05 * epoch if epoch < 10 else 13.36 if epoch == 10 else 26.64
        lines += [f"Epoch {epoch}", f"61878/61878 [==============================] - 5s - "
                  f"loss: {loss:.4f}     "]
    data = verdict_of(tmp_path, [*lines, "Epoch 15"])
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert data["decision"] != "GO" and data["target_steps"] != 61878, data["summary"]


def test_a_model_said_trained_in_so_many_epochs_or_seconds_is_the_end():
    for line in ("Model trained in 100 epochs.", "Trained for 50 epochs",
                 "The network was trained in 253.4 seconds"):
        assert says_finished(line), line
    for line in ("Trained batch: 1 batch loss: 919.356812", "model trained for epoch 3",
                 "Pretrained for 100 epochs", "Loading model trained in 2019"):
        assert not says_finished(line), line


def test_a_loop_index_by_its_variable_s_name_is_the_step(tmp_path: Path):
    lines = [f"i={i}  total={3.6 / (1 + i / 500):.5f}  map={0.47 - i / 20000:.5f}  "
             f"lag={3.1 / (1 + i / 400):.5f}" for i in range(50, 2051, 50)]
    data = verdict_of(tmp_path, lines)
    assert "2050" in data["summary"], data["summary"]
    assert parse_key_values("it = 40 loss=0.3 lr=1e-3").step == 40  # type: ignore[union-attr]


def _dqn_blocks(last: int) -> list[str]:
    # Berkeley deep-RL course's DQN: a status block every 10,000 timesteps, the counter on a
    # line of its own, each figure `name value` on the next lines.
    lines = []
    for t in range(60000, last + 1, 10000):
        reward = -20.5 + 41 * (t / 10_000_000)
        lines += [f"Timestep {t}", f"mean reward (100 episodes) {reward:.6f}",
                  f"best mean reward {reward:.6f}", f"episodes {t // 1000}",
                  f"exploration {max(0.01, 1 - t / 1_000_000):.6f}", "learning_rate 0.000100"]
    return lines


def test_status_blocks_headed_by_the_loop_s_counter(tmp_path: Path):
    data = verdict_of(tmp_path, _dqn_blocks(3_000_000))
    assert data["terminal_state"] == "RUNNING" and "3000000" in data["summary"], \
        data["summary"]
    # A paragraph under a lone `Step 3` that is never repeated is no block.
    data = verdict_of(tmp_path, ["Step 3", "please check the data 12", "then retry 4"])
    assert "could not read" in data["summary"] or "no training progress" in data["summary"]


def test_a_plan_alone_at_a_line_s_end():
    from babysit.parsing.frameworks import planned_epochs
    assert planned_epochs("2024-08-23 15:39:17,613 [INFO] Epochs 80", sizes=True) == 80
    assert planned_epochs("Epochs       300000. Current error: 0.47", sizes=True) is None

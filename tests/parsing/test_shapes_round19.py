"""Shapes read and judgements made since the nineteenth session, each on lines written
in the real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of

_BLOCKS = "█" * 40


def _ends_here(tmp_path: Path, finished: list[str], cut: list[str],
               state: str = "SUCCEEDED") -> None:
    """The log as the run left it reads `state`; the same log without what ended it, a
    run still going (RUNNING)."""
    for lines, expected in ((finished, state), (cut, "RUNNING")):
        data = verdict_of(tmp_path, lines)
        assert data["terminal_state"] == expected, data["summary"]


def _experiment(backbone: str, epochs: int = 4) -> list[str]:
    # A script that trains one model after another: a pass over the data under its own
    # bar (longer than an epoch's), then epochs headed `Epoch k/N`, each a `Training:` bar
    # and a summary, then `Training finished` and the model's evaluation table.
    lines = [f"统计类别频率: 100%|{_BLOCKS}| 1464/1464 [00:07<00:00, 205.72it/s]",
             "类别权重: [0.036 0.552 1.854 0.986 1.569]", ""]
    for epoch in range(1, epochs + 1):
        loss = 2.5 - 0.3 * epoch
        lines += [f"Epoch {epoch}/{epochs}", "LR: 0.001",
                  f"Training: 100%|{_BLOCKS}| 183/183 [01:18<00:00,  2.33it/s]",
                  f"Validation: 100%|{_BLOCKS}| 46/46 [00:10<00:00,  4.40it/s]",
                  f"Train Loss: {loss:.4f}, Val Loss: {loss + 0.05:.4f}",
                  "  -> Best model saved", ""]
    return [*lines, "Training finished. Total time: 2461.84 seconds", "",
            f"Backbone: {backbone}", "Class         IoU", "bg         0.8691",
            "mIoU       0.5442", "Pixel Accuracy: 0.8744"]


def test_a_script_that_trains_one_model_after_another_finishes_with_its_last(tmp_path: Path):
    # The second `Training finished` ends the second experiment, not an epoch: the epoch
    # counter went back to 1 after the first, and the data pass's bar, longer than the
    # training's and drawn again before the second, counts no step and sets no plan.
    data = verdict_of(tmp_path, [*_experiment("resnet18"), "", *_experiment("resnet34")])
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    assert data["target_steps"] != 1464
    # Cut inside the second experiment, the run is still going.
    data = verdict_of(tmp_path, [*_experiment("resnet18"), "", *_experiment("resnet34")[:20]])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _abbreviated(epochs: int, total: int) -> list[str]:
    # A hand loop printing one line an epoch, its counter under a shortened name.
    return [f"E{epoch:>3}/{total} | Loss:{0.9 / epoch:.4f} | TrA:{50 + epoch / 10:.2f}% | "
            f"VAcc:{45 + epoch / 20:.2f}% | ETA:{(total - epoch) * 0.4:.1f}min"
            for epoch in range(1, epochs + 1)]


def test_a_counter_under_its_shortened_name_is_the_run_s_plan(tmp_path: Path):
    data = verdict_of(tmp_path, _abbreviated(120, 120))
    assert (data["terminal_state"], data["total_steps"], data["target_steps"]) == \
        ("SUCCEEDED", 120, 120), data["summary"]
    data = verdict_of(tmp_path, _abbreviated(80, 120))
    assert (data["terminal_state"], data["target_steps"]) == ("RUNNING", 120), data["summary"]


def test_a_batch_counter_under_its_name_is_no_plan(tmp_path: Path):
    # `Batch 7/7`: the batches of one epoch, whatever name it goes under
    lines = [f"Batch {n}/7 | loss: {1 / n:.3f}" for n in range(1, 8)]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def _hapi(epochs: int, planned: int) -> list[str]:
    # paddle.hapi's Model.fit: a bar per epoch, a save, then `Eval begin...` and the
    # evaluation's bar, in the training bar's shape, its loss the evaluation's.
    lines = []
    for epoch in range(1, epochs + 1):
        lines += [f"Epoch {epoch}/{planned}",
                  f"step 20/20 [==============================] - loss: {0.9 / epoch:.4f} - "
                  f"acc: {0.5 + epoch / 100:.4f} - 35ms/step",
                  f"save checkpoint at /home/aistudio/model/{epoch - 1}", "Eval begin...",
                  f"step 4/4 [==============================] - loss: {2.5 + epoch % 2:.4f} - "
                  f"acc: 0.4402 - 13ms/step", "Eval samples: 224", ""]
    return lines


def test_the_bars_after_an_evaluation_begins_are_not_training(tmp_path: Path):
    data = verdict_of(tmp_path, _hapi(30, 100))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert not [a for a in data["anomalies_detected"]
                if a["type"] in ("loss-spike", "divergence", "not-learning")], data["summary"]
    assert data["final_metrics"]["loss"] < 0.05  # the training's loss, not the evaluation's


def _sweep(configs: int, last_epochs: int = 10, end: str = "finish evaluation") -> list[str]:
    # A script training one configuration after another into one nohup log: each prints
    # its name and settings, `epoch :  k` then its losses, and one line when it is done.
    lines = ["nohup: ignoring input"]
    for config in range(configs):
        lines += [f"training model : model_GroupNorm_lr{config + 1}_optlr001",
                  f"lr : {config + 1}, opti_lr : 0.001, lam_cd : 0.01, lam_reg : 0.0001"]
        for epoch in range(last_epochs if config == configs - 1 else 10):
            loss = 500 - 20 * epoch - config
            lines += [f"epoch :  {epoch}",
                      f"loss : {loss:.2f} | pos eng: -5.78, neg eng: 16.71 | cd: -22.49 | "
                      f"mse: {loss - 1:.2f}"]
        lines.append(end)
    return lines


def test_the_last_run_of_a_sweep_ended_as_every_earlier_one_did(tmp_path: Path):
    data = verdict_of(tmp_path, _sweep(3))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    # stopped at another epoch than the others, or with other words, it proves nothing
    crashed = [*_sweep(3)[:-1], "Traceback (most recent call last):"]
    for lines in (_sweep(3, last_epochs=6), crashed):
        data = verdict_of(tmp_path, lines)
        assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def _models(last_epochs: int) -> list[str]:
    # A comparison script: each model trains, printing every 20th epoch, and is tested;
    # the first stops early and says so, the next one starts from epoch 0 again.
    head = "2025-12-14 15:26:11 | INFO     | "
    lines = []
    for model, epochs in (("LSTM v2a", 21), ("Transformer v1a", last_epochs)):
        lines += [f"{head}Training: {model} (baseline config)", f"{head}Parameters: 534,279"]
        lines += [f"{head}  Epoch {epoch:>3}: loss={2.0 - epoch / 100:.4f}, "
                  f"val_f1={0.15 + epoch / 100:.4f}, lr=1.00e-04"
                  for epoch in range(0, epochs, 20)]
        if model == "LSTM v2a":
            lines += [f"{head}  Early stopping at epoch 35", "  Test Results:",
                      f"{head}    Accuracy: 0.3510", f"{head}    F1 (weighted): 0.4178"]
    return lines


def test_a_model_that_trains_after_the_last_one_stopped_early_is_running(tmp_path: Path):
    data = verdict_of(tmp_path, _models(41))
    assert data["terminal_state"] == "RUNNING", data["summary"]


_VAL = [9.98, 8.21, 7.10, 6.68, 6.57, 6.57, 6.63, 6.43, 6.36, 6.26, 6.24, 6.23, 6.21, 6.23,
        6.204]


def test_a_validation_loss_worse_at_every_evaluation_is_degrading(tmp_path: Path):
    # A tiny model memorising its data: its train loss falls to 1, its validation loss,
    # which wandered by 0.1-0.2 on the way down, climbs a little at each of its last five
    # evaluations.
    climb = [6.212, 6.221, 6.264, 6.291, 6.334]
    values = _VAL + climb
    lines = [f"\t\tTraining loss: {9.75 - 0.44 * i:.4f}, Validation loss: {v}"
             for i, v in enumerate(values)]
    data = verdict_of(tmp_path, [*lines, "Training finished."])
    assert [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"], \
        data["summary"]
    # four such steps are no climb: the noise does that
    lines = [f"\t\tTraining loss: {9.75 - 0.44 * i:.4f}, Validation loss: {v}"
             for i, v in enumerate([*_VAL, 6.1, *climb[1:]])]
    data = verdict_of(tmp_path, [*lines, "Training finished."])
    assert not [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"], \
        data["summary"]


def _mnist_example(epochs: int, test_each_epoch: bool) -> list[str]:
    # PyTorch's MNIST example's shape: batch lines of each epoch, a validation line, and
    # a `test set:` line after every epoch, or once after the last.
    lines = []
    for epoch in range(1, epochs + 1):
        lines += [f"Train Epoch: {epoch} [{n}/2811 ({100 * n // 2811}%)]\tLoss: {1 / epoch:.6f}"
                  for n in (0, 1024, 2048)]
        lines.append(f"val set: Average loss: {0.6 + 1 / epoch:.4f}, Accuracy: 563/704 (79.97%)")
        if test_each_epoch:
            lines.append("test set: Average loss: 0.7464, Accuracy: 516/694 (74.35%)")
        lines.append("")
    if not test_each_epoch:
        lines.append("test set: Average loss: 0.7464, Accuracy: 516/694 (74.35%)")
    return lines


def test_a_test_pass_after_the_last_epoch_only_is_the_end(tmp_path: Path):
    data = verdict_of(tmp_path, _mnist_example(12, test_each_epoch=False))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    # a test pass after every epoch is the run's evaluation, no end
    data = verdict_of(tmp_path, _mnist_example(12, test_each_epoch=True))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    # and the test's figures are a series of their own, not the validation's last point
    assert not [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"]


def test_a_relaunch_that_ends_with_the_line_an_early_stop_ended_with_is_over(tmp_path: Path):
    # Two runs appended to one file: the first stops early and says so, then `Training
    # selesai.` (`finished`); the second trains its 20 epochs and prints that line too.
    def run(epochs: int, early: bool) -> list[str]:
        lines = ["Training started on cuda..."]
        for epoch in range(1, epochs + 1):
            lines += [f"Epoch {epoch:02d} | Train Loss: {1 / epoch:.4f} | Val Loss: "
                      f"{1 / epoch + 0.05:.4f} | Val PER: 0.0141 | Time: 5.7s",
                      "  >> No improvement (2 epochs)."]
        return lines + (["Early stopping triggered."] if early else []) + ["Training selesai."]
    _ends_here(tmp_path, run(14, True) + run(20, False), run(14, True) + run(20, False)[:-1])


def test_a_line_printed_twice_by_a_doubled_handler_is_one_record(tmp_path: Path):
    # A logger with its handler added once per seed prints each record as many times
    # (the fifth seed's `Epoch: 99 …` five times, to the millisecond): one evaluation.
    lines = []
    for epoch in range(1, 41):
        line = (f"2024-04-08 16:57:{epoch:02d},747 - INFO - Epoch: {epoch}, loss_train: "
                f"{5.5 - epoch / 100:.4f}, loss_val: {6.9 + (epoch % 3) * 0.02:.4f}")
        lines += [line] * 4
    data = verdict_of(tmp_path, lines)
    assert data["total_steps"] in (None, 40), data["summary"]
    assert not [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"], \
        data["summary"]


def _early_stopped(last: list[float]) -> list[str]:
    # A loop with patience: its validation loss falls to its best, then the last
    # evaluations rise until patience runs out and the loop says it stopped early.
    values = [10.0 - 0.3 * i for i in range(12)] + [6.4 + 0.001 * (i % 3) for i in range(20)]
    values += last
    lines = [f"2024-04-08 16:29:{i:02d},845 - INFO - Epoch: {i}, step: {8 * i + 8}, loss: "
             f"{5.0 - i * 0.02:.4f}, loss_val: {v:.4f}, best_loss: {min(values[:i + 1]):.4f}"
             for i, v in enumerate(values)]
    return [*lines, "2024-04-08 16:33:21,540 - INFO - Breaking due to early stopping at epoch "
            f"{len(values) - 1}"]


def test_an_early_stop_on_a_small_decline_is_the_patience_working(tmp_path: Path):
    data = verdict_of(tmp_path, _early_stopped([6.43, 6.47, 6.52, 6.56]))
    assert (data["decision"], data["terminal_state"]) == ("GO", "SUCCEEDED"), data["summary"]
    # far from its best, the last weights are not what the run promised
    data = verdict_of(tmp_path, _early_stopped([7.5, 8.6, 9.7, 10.8]))
    assert data["decision"] != "GO", data["summary"]


def test_the_learner_finished_is_the_run_s_end(tmp_path: Path):
    # An actor-learner RL run's learner trains, then says it finished.
    head = "2024-11-28 21:12:06,757 Learner INFO "
    lines = [f"{head}value loss: {1 / (i + 1):.4f}, policy gradient loss: -0.42, entropy: "
             f"-0.57, IS max: 0.98" for i in range(40)]
    data = verdict_of(tmp_path, [*lines, f"{head}Learner finished, episode: 2000, terminate "
                                         "condition : True"])
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


def _ranks_summary(epochs: int, planned: int) -> list[str]:
    # A four-rank DDP loop: each rank prints its epoch's header (0-based) before the
    # run's own `Epoch k/N starting...`, each its loss, then rank 0 the epoch's summary.
    lines = []
    for epoch in range(1, epochs + 1):
        lines += [f"[GPU{rank}] Epoch {epoch - 1} | Batchsize: 32 | Steps: 28"
                  for rank in range(4)]
        lines.append(f"Epoch {epoch}/{planned} starting...")
        lines += [f"Rank {rank} | Epoch Loss: {0.19 - epoch / 200 + rank / 1000:.6f}"
                  for rank in range(4)]
        lines.append(f"Epoch [{epoch}/{planned}], Avg Loss: {0.19 - epoch / 200:.4f}")
    return lines


def test_the_last_epoch_s_summary_ends_the_run(tmp_path: Path):
    data = verdict_of(tmp_path, _ranks_summary(5, 5))
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]
    data = verdict_of(tmp_path, _ranks_summary(5, 5)[:-1])
    assert data["terminal_state"] != "SUCCEEDED", data["summary"]


def test_epochs_that_replay_the_first_one_and_its_summary_are_not_learning():
    # A hand loop printing six losses an epoch and the epoch's own at its last step
    # (`epoch 0 step 600/639 loss=27.2544`, then `epoch loss=27.2237`), the first epoch
    # at a whole epoch: every epoch the same numbers as the one before.
    from babysit.rules.replayed_epochs import EpochReplay

    losses = [27.2307, 27.2309, 27.2276, 27.2295, 27.2383, 27.2544]
    replay, fired = EpochReplay(), []
    for epoch in range(10):
        for n, loss in enumerate(losses, start=1):
            step = epoch * 639 + 100 * n
            fired.append(replay.observe(step, epoch + 100 * n / 639 if epoch else 0.0, loss))
        fired.append(replay.observe(epoch * 639 + 600, epoch + 600 / 639 if epoch else 0.0,
                                    27.2237))
    assert True in fired


def test_a_site_s_gpu_report_after_the_last_record_ends_the_job(tmp_path: Path):
    # A cluster's epilog printing its report of the job's GPU under its own banner.
    lines = [f"step {s}: loss {2.0 - s / 10000:.4f}" for s in range(100, 2100, 100)]
    report = ["", "======== GPU REPORT ========", "", "==============NVSMI LOG==============",
              "    Accounted Processes", "            Is Running                    : 0"]
    _ends_here(tmp_path, lines + report, lines, state="ENDED")


def _folds(count: int, epochs: int = 10) -> list[str]:
    # A k-fold run in Keras: each fold trains from scratch; a callback prints its own
    # AUC before each epoch's `verbose=2` line, so the next fold's first, low figure
    # comes before the line whose loss shows a new start.
    lines = []
    for _fold in range(count):
        for epoch in range(1, epochs + 1):
            auc = 0.55 + 0.2 * min(epoch, 9) / 9 - (0.005 if epoch == 10 else 0)
            lines += [f"Epoch {epoch}/{epochs}", f" | test_auc: {auc:.4f}",
                      f"51/51 - 31s - loss: {0.61 - 0.03 * epoch:.4f} - auc: {auc:.4f} - "
                      f"val_loss: {0.36 - 0.02 * epoch:.4f} - val_auc: {auc + 0.01:.4f} - "
                      "31s/epoch - 607ms/step"]
        lines += ["Results: Loss = 0.1400, AUC = 0.7700", "-" * 65]
    return lines


def test_the_next_fold_s_first_evaluation_is_no_decline(tmp_path: Path):
    data = verdict_of(tmp_path, _folds(4))
    assert not [a for a in data["anomalies_detected"] if a["type"] == "eval-degradation"
                and "resolved" not in a["description"]], data["summary"]


def _darknet(last: int, final: bool) -> list[str]:
    # Darknet's training lines, its weights saved every thousand iterations, and its
    # `_final.weights` once max_batches is reached.
    lines = []
    for it in range(1, last + 1):
        lines.append(f" {it}: {3.0 - it / 2000:.6f}, {3.1 - it / 2000:.6f} avg loss, "
                     f"0.000026 rate, 0.906877 seconds, {it * 48} images, "
                     f"{(4000 - it) * 0.00025:.6f} hours left")
        if it % 1000 == 0:
            lines.append(f"Saving weights to backup//yolov4-tiny-detector_{it}.weights")
    if final:
        lines += ["Saving weights to backup//yolov4-tiny-detector_last.weights",
                  "Saving weights to backup//yolov4-tiny-detector_final.weights"]
    return lines


def test_darknet_s_final_weights_end_the_run(tmp_path: Path):
    _ends_here(tmp_path, _darknet(4000, final=True), _darknet(3500, final=False))


def test_completed_in_its_time_closes_a_script(tmp_path: Path):
    lines = [f"step {n}: loss {0.1 / (n / 1000 + 1):.4f}" for n in range(100, 3100, 100)]
    _ends_here(tmp_path, [*lines, "Completed in 253.5 seconds"], lines)

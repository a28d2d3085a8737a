"""Shapes and judgements added in the thirteenth session, each on lines written in the
real shape of a public log: a bracketed epoch of a plan before a bare step, results an
epoch prints with no counter, a CUDA start-up error the run trained past, an evaluation
exactly at a uniform guess, a segmentation's overlap at the empty mask's, a finished
run's held-out score of exactly 0, a score held to every digit while the loss moved, an
evaluated return that rose though the exploring return did not."""

from __future__ import annotations

import math
from pathlib import Path

from babysit.model import AnomalyType, Severity
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import run_of, verdict_of


def records(lines: list[str]):
    return [r for r in LogParser().feed_lines(lines) if r.metrics]


def _open(lines: list[str], kind: AnomalyType) -> list[Severity]:
    return [a.severity for a in run_of(lines).ledger.anomalies
            if a.type is kind and not a.resolved]


# -- `[e/E] n` -------------------------------------------------------------------------


def _multilabel(epochs: int, planned: int, end: list[str]) -> list[str]:
    # A multi-label classifier's loop: `[2/41] 1300), Loss: 0.066, mAP 89.43%`.
    lines = ["Start training: lr 0.010000, batch size 10", "Checkpoint: ../checkpoints/"]
    step = 0
    for epoch in range(1, epochs + 1):
        for _ in range(5):
            lines.append(f"[{epoch}/{planned}] {step}), Loss: {0.7 / (1 + step / 100):.3f}, "
                         f"mAP {60 + epoch:.2f}%")
            step += 100
        lines += ["Saved: ../checkpoints/", f"TESTING: {step - 97}), mAP {61 + epoch:.2f}%"]
    return lines + end


def test_a_bracketed_epoch_of_a_plan_before_a_bare_count_gives_epoch_and_step():
    read = records(_multilabel(3, 41, []))
    assert [(r.step, r.epoch) for r in read if r.step is not None][-2:] == [(1300, 3.0),
                                                                          (1400, 3.0)]


def test_the_last_planned_epoch_then_a_save_and_a_test_is_the_end(tmp_path: Path):
    finished = verdict_of(tmp_path, _multilabel(4, 4, []))
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")
    cut = verdict_of(tmp_path, _multilabel(3, 41, []))
    assert cut["terminal_state"] == "RUNNING"


# -- results an epoch prints with no counter --------------------------------------------


def _peptide(epochs: int, mse: list[float]) -> list[str]:
    # A regressor's loop: ` Epoch:12,Loss:0.61` per batch, then `MSE_loss = 1.83` and
    # `R2_score = 0.85` once an epoch, with no counter and no split word.
    lines = [f"{{'embedding_dim': 50, 'batch_size': 16, 'epoch_num': {epochs}}}"]
    for epoch in range(epochs):
        for batch in range(3):
            lines += [f" Epoch:{epoch},Loss:{10 / (1 + epoch + batch / 3):.6f}", ""]
        lines += ["work", f"MSE_loss = {mse[epoch]:.6f}", f"R2_score = {1 - mse[epoch] / 12:.6f}"]
    return lines


def test_an_epochs_counterless_results_are_read_as_an_evaluation():
    read = records(_peptide(6, [12.0, 5.4, 4.3, 3.6, 3.2, 3.0]))
    assert any("eval/mse_loss" in r.metrics for r in read)
    assert not any("mse_loss" in r.metrics for r in read[-3:])


def test_progress_printed_many_times_an_epoch_stays_training():
    # A language model: `0.107 perplexity: 1527.65 speed: 8936 wps` ten times an epoch,
    # between its `Train perplexity at epoch N` summaries.
    lines = []
    for epoch in range(4):
        lines += [f"{f / 10 + 0.0075:.4f} perplexity: {900 / (1 + epoch + f / 10):.2f} "
                  f"speed: 9700.5 wps" for f in range(10)]
        lines += [f"Train perplexity at epoch {epoch}: {500 / (1 + epoch):.2f}",
                  f"Validation perplexity at epoch {epoch}: {300 / (1 + epoch):.2f}"]
    assert not any(k.startswith("eval/perplexity") for r in records(lines) for k in r.metrics)


# -- a failure the run trained past -------------------------------------------------------


def test_a_cuda_start_up_error_then_training_records_is_no_crash(tmp_path: Path):
    lines = ["NVIDIA: no NVIDIA devices found",
             "E tensorflow/stream_executor/cuda/cuda_driver.cc:491] failed call to cuInit: "
             "CUDA_ERROR_UNKNOWN"]
    for batch in range(0, 60, 10):
        lines += [f"Epoch 0 Batch {batch} train_loss {2.3 - batch / 100:.5f} train_acc 0.5 "
                  f"valid_loss {2.2 - batch / 100:.5f} valid_acc {0.2 + batch / 200:.3f}", ""]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] in ("crash", "cuda-error") and "resolved" not in a["description"]]


# -- an evaluation exactly at a uniform guess --------------------------------------------


def _genre(batches: int, acc: float, loss: float) -> list[str]:
    return [f"Epoch 0 Batch {b} train_loss 2.30 train_acc {b % 2:.1f} valid_loss {loss:.11f} "
            f"valid_acc {acc}" for b in range(0, 10 * batches, 10)]


def test_an_evaluation_at_one_over_k_and_ln_k_to_the_digit_is_a_blocker():
    assert Severity.BLOCKER in _open(_genre(25, 0.1, math.log(10) + 3e-5),
                                     AnomalyType.NOT_LEARNING)
    assert Severity.BLOCKER not in _open(_genre(4, 0.1, math.log(10) + 3e-5),
                                         AnomalyType.NOT_LEARNING)  # too few yet


def test_an_evaluation_near_chance_but_not_on_it_says_nothing_blocking():
    severities = _open(_genre(25, 0.13, 2.25), AnomalyType.NOT_LEARNING)
    assert Severity.BLOCKER not in severities


def _lasagne(epochs: int, accuracies: list[float], losses: list[float]) -> list[str]:
    # Lasagne's MNIST example: each figure on a line of its own, the epoch's line after.
    lines = []
    for e in range(epochs):
        lines += [f"  training loss:\t\t{2.47 - e / 50:.6f}",
                  f"  validation loss:\t\t{losses[e]:.6f}",
                  f"  validation accuracy:\t\t{accuracies[e]:.2f} %",
                  f"Epoch {e + 1} of 500 took 498.449s"]
    return lines


def test_an_accuracy_held_to_the_digit_beside_a_loss_at_ln_k_is_a_blocker():
    losses = [2.303229, 2.303151, 2.301815, 2.301806, 2.301416, 2.301775]
    assert Severity.BLOCKER in _open(_lasagne(6, [10.64] * 6, losses),
                                     AnomalyType.NOT_LEARNING)
    moving = [10.64, 11.35, 10.28, 10.64, 11.02, 10.09]
    assert Severity.BLOCKER not in _open(_lasagne(6, moving, losses),
                                         AnomalyType.NOT_LEARNING)
    learning = [2.1, 1.7, 1.2, 0.9, 0.7, 0.6]
    assert Severity.BLOCKER not in _open(_lasagne(6, [10.64] * 6, learning),
                                         AnomalyType.NOT_LEARNING)


# -- overlaps at the empty mask's; a held-out score of 0 at the end ----------------------


def _unet(epochs: int, dice: float) -> list[str]:
    lines = []
    for e in range(epochs):
        lines += [f"Epoch {e} trained with loss: {0.02 / (1 + 10 * e):.8f}. "
                  f"The running time is 4073.8.",
                  f"Epoch {e} evaluated with loss: 0.0003{e}, dice score: "
                  f"{dice * (1 + e / 10):.6g}. The running time is 713.2.",
                  f"Best model saved at epoch: {e}"]
    return lines


def test_a_dice_at_the_empty_masks_on_eight_evaluations_is_a_blocker():
    assert Severity.BLOCKER in _open(_unet(10, 1.1e-5), AnomalyType.NOT_LEARNING)
    assert Severity.BLOCKER not in _open(_unet(10, 0.004), AnomalyType.NOT_LEARNING)


def test_a_finished_run_whose_last_held_out_iou_is_zero_is_no_go(tmp_path: Path):
    lines = ["100%|████████| 1/1 [00:01<00:00,  1.95s/it, loss=0.671, iou=0.63]",
             "loss 0.6712 - iou 0.6299 - val_loss 0.7878 - val_iou 0.0000",
             "=> early stopping"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert "val_iou" in artifact["summary"]
    healthy = verdict_of(tmp_path, [*lines[:1], lines[1].replace("val_iou 0.0000",
                                                                 "val_iou 0.5110"), lines[2]])
    assert healthy["decision"] != "NO-GO"


# -- a score held to the digit while the objective moved -----------------------------------


def _wapiti(err: list[str]) -> list[str]:
    objs = [53109.96, 16052.89, 13922.99, 12309.84, 10402.72]
    return (["* Train the model with l-bfgs"]
            + [f"  [{i + 1:4d}] obj={o:.2f}   act=240660   err={e}/25.41% time=0.23s/0.23s"
               for i, (o, e) in enumerate(zip(objs, err, strict=True))]
            + ["* Compacting the model", "* Save the model", "* Done"])


def test_an_error_held_to_the_digit_while_the_objective_fell_is_not_learning():
    assert _open(_wapiti([" 3.71%"] * 5), AnomalyType.NOT_LEARNING)
    assert not _open(_wapiti([" 3.71%", " 3.55%", " 3.40%", " 3.38%", " 3.21%"]),
                     AnomalyType.NOT_LEARNING)


# -- reinforcement learning: the evaluated return -------------------------------------------


def _sb3_block(step: int, rollout: float, evaluated: float | None) -> list[str]:
    rows = [("rollout/", ""), ("    ep_len_mean", "1e+03"), ("    ep_rew_mean", f"{rollout:.3g}"),
            ("time/", ""), ("    total_timesteps", str(step)),
            ("train/", ""), ("    loss", f"{5 / (1 + step / 2048):.3g}"),
            ("    policy_gradient_loss", "-0.00127"), ("    value_loss", "7.81")]
    if evaluated is not None:
        rows = [("eval/", ""), ("    mean_reward", f"{evaluated:.3g}"),
                ("    total_timesteps", str(step)), *rows]
    return ["-" * 41, *(f"| {k:<24}| {v:<12}|" for k, v in rows), "-" * 41]


def _sb3(evaluated: list[float]) -> list[str]:
    lines = []
    for i in range(120):
        rollout = 95 + (i % 7) - 3  # the exploring return wanders, never rising
        lines += _sb3_block(2048 * (i + 1), rollout,
                            evaluated[i // 5] if i % 5 == 0 else None)
    return lines


def test_an_evaluated_return_that_rose_keeps_a_wandering_rollout_return_quiet():
    assert _open(_sb3([35.0 + 5 * k for k in range(24)]), AnomalyType.NOT_LEARNING) == []
    assert _open(_sb3([35.0 + (k % 3) for k in range(24)]), AnomalyType.NOT_LEARNING)


# -- records behind a comment's marker ------------------------------------------------------


def test_a_record_the_run_prints_behind_a_hash_is_read_from_its_second_line():
    lines = [f"# Epoch {e:3d} Time    360.8 lr = {0.2 - e / 100:.6f} avg loss = "
             f"{0.017 / (1 + e):.6f} accuracy = {6.78 + 3 * e:.2f}" for e in range(5)]
    read = records(lines)
    assert [r.epoch for r in read] == [1.0, 2.0, 3.0, 4.0]
    assert read[-1].metrics["avg_loss"] == 0.0034
    # a comment said once is still none of the run's (`# loss: nan` in a pasted config)
    assert records(["# loss: nan", "# NaN check disabled", "step 1 loss 0.5"])[0].metrics \
        == {"loss": 0.5}


# -- the last planned epoch, then what every epoch prints after its record ----------------


def _torch7(epochs: int, planned: int) -> list[str]:
    # A Torch7 seq2seq loop: a header, the epoch's stats block, then the same test
    # samples after every epoch (the very same lines each time).
    lines = []
    for e in range(1, epochs + 1):
        lines += [f"-- Epoch {e} / {planned}\t", "\t", f"Finished in 2h13m {9 + e / 7:.4f} "
                  f"examples/sec.\t", f"training loss = {3 / e:.4f}\t", "Epoch stats:\t",
                  f"           LR= {1e-3 / e:.6g}\t",
                  "  Errors: min= 0\t", f"          max= {120 - e:.4f}\t",
                  f"       median= {40 - e / 3:.4f}\t", f"         mean= {66 - e:.4f}\t",
                  f"          std= {17 + e / 50:.4f}\t"]
        for n in range(1, 4):
            lines += [f"Test Example {n}\t", ">> A large of side of side\t", f"{n * 1000}\t",
                      "-" * 40 + "\t"]
    return lines


def test_the_last_planned_epoch_then_its_usual_samples_is_the_end(tmp_path: Path):
    assert verdict_of(tmp_path, _torch7(6, 6))["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _torch7(5, 6))["terminal_state"] == "RUNNING"


def test_a_nan_guards_stop_ends_the_run_unconfirmed(tmp_path: Path):
    bars = [f"Epoch {e}: : 1200it [21:02,  1.05s/it, loss={0.07 - e / 1000:.4f}, v_num=0, "
            f"val_loss=0.054]" for e in range(5)]
    stop = ["Epoch 5: : 1200it [20:40,  1.03s/it, loss=nan, v_num=0, val_loss=nan.0]"
            "                   Monitored metric val_loss = nan is not finite. Previous best "
            "value was 0.045. Signaling Trainer to stop."]
    artifact = verdict_of(tmp_path, bars + stop)
    assert (artifact["terminal_state"], artifact["decision"]) == ("ENDED", "NO-GO")


def test_a_value_printed_as_a_list_of_one_is_that_value():
    # a scheduler's `get_last_lr()`: `policy lr: [0.0002996926229508197]`
    [record] = records(["step 5 loss: 0.3 lr: [0.0002996926229508197]"])
    assert record.metrics == {"loss": 0.3, "lr": 0.0002996926229508197}
    [record] = records(["step 5 loss: 0.3 lr: [0.001, 0.002]"])
    assert "lr" not in record.metrics  # two groups: no one value


def test_a_detectors_objectness_is_no_objective():
    # Darknet's region lines: `Obj` beside `Avg IOU`, `Class`, `No Obj` is a score; a
    # falling-then-rising objectness is no divergence (sealed-23's YOLOv3 run).
    lines = []
    for i in range(1, 400):
        obj = 0.001 * i if i < 200 else 0.9
        lines.append(f"Region 94 Avg IOU: 0.{i % 90 + 10:02d}, Class: 0.53, Obj: {obj:.6f}, "
                     f"No Obj: 0.000285, .5R: 0.000000, .75R: 0.000000,  count: 3")
    assert _open(lines, AnomalyType.DIVERGENCE) == []

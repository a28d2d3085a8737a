"""Shapes read and judged since the forty-first session, each on lines written in the real
shape of a public log (sealed-123's leftovers, then sealed-124 and sealed-125, scored blind
first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.events import EventKind, find_events
from tests.rules.test_loss_rules import verdict_of


def _open(artifact: dict) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- A FATAL line of glog, absl or TensorFlow's C++ logger ends the process ------------------

def test_a_fatal_line_of_tensorflows_cpp_logger_is_the_runs_end():
    line = ("2021-08-19 02:10:50.224348: F tf_adapter/kernels/geop_npu.cc:766] "
            "GeOp3_0GEOP::::DoRunAsync Failed")
    [event] = find_events(line)
    assert (event.kind, event.detail) == (EventKind.EXCEPTION, "GeOp3_0GEOP::::DoRunAsync Failed")


def test_a_glog_fatal_line_is_the_runs_end_whatever_its_message():
    line = "F1114 09:23:21.224201 31685 solver.cpp:91] Unknown solver type: Adamx"
    [event] = find_events(line)
    assert event.kind is EventKind.EXCEPTION
    assert event.detail == "Unknown solver type: Adamx"


def test_glogs_other_levels_and_a_capital_f_word_are_no_failure():
    for line in ("2021-08-19 02:10:44.726729: W tensorflow/core/framework/op_kernel.cc:1639] "
                 "Unavailable: Internal errors",
                 "I0524 19:24:23.882612 13813 solver.cpp:486] Iteration 150000, lr = 0.01",
                 "Fold: F 3 of 5 started", "F1 score: 0.82"):
        assert not [e for e in find_events(line) if e.kind is EventKind.EXCEPTION], line


def test_a_run_that_dies_on_a_fatal_tensorflow_line_is_a_crash(tmp_path: Path):
    # the Ascend port of PoseFix: iterations at 0.12 s each, then the adapter's fatal
    # line and the multiprocessing tracker's shutdown warning; no traceback
    lines = [f"\x1b[92m08-19 02:10:{40 + i // 10:02d}\x1b[0m Epoch 0 itr {3700 + i}/9364: "
             f"lr: 5e-05 speed: 0.12(0.08s r0.04)s/itr 0.32h/epoch loss_h: "
             f"{2.9 - i * 0.002:.4f} loss_c: {1.4 - i * 0.001:.4f}" for i in range(60)]
    lines += ["2021-08-19 02:10:45.726729: W tensorflow/core/framework/op_kernel.cc:1639] "
              "Unavailable: Internal errors",
              "2021-08-19 02:10:50.224348: F tf_adapter/kernels/geop_npu.cc:766] "
              "GeOp3_0GEOP::::DoRunAsync Failed",
              "Error Message is : ", "E19999: Inner Error!",
              "        Unknown error occurred. Please check the log.", "",
              "/usr/local/lib/python3.7/multiprocessing/semaphore_tracker.py:144: UserWarning: "
              "semaphore_tracker: There appear to be 91 leaked semaphores to clean up at shutdown",
              "  len(cache))"]
    artifact = verdict_of(tmp_path, lines)
    assert ("crash", "blocker") in _open(artifact)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")


# -- The tutorial's `[epoch, batch]` pairs, and a test line per epoch opening on `[e / E]` --

def _mps_loop(epochs: int, planned: int = 10) -> list[str]:
    # a loop grown from PyTorch's CIFAR-10 tutorial, on Apple's MPS: `[7,   600]: loss:
    # 0.047 , acc: 98.54 , time: 0.00250 % ` every 300 batches, then the epoch's test
    lines = []
    for epoch in range(1, epochs + 1):
        for batch in (300, 600, 900):
            lines.append(f"[{epoch}, {batch:5d}]: loss: {0.8 / (epoch + batch / 300):.3f} , "
                         f"acc: {90 + epoch * 0.8:.2f} , time: 0.00250 % ")
        lines.append(f"[{epoch} / {planned}]: Accuracy on test set: {96 + epoch * 0.2:.1f} % ")
    return lines


def test_the_tutorials_pairs_with_a_colon_are_its_epochs(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mps_loop(4)[:-1])
    assert artifact["final_metrics"]["loss"] == 0.114  # epoch 4, batch 900
    assert artifact["reading"]["progress"] == "epoch"


def test_an_epochs_test_line_at_its_epoch_names_the_plan_reached(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mps_loop(10))
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_an_epochs_test_line_short_of_its_plan_is_a_run_still_going(tmp_path: Path):
    artifact = verdict_of(tmp_path, _mps_loop(7))
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["decision"] == "CONDITIONAL"


# -- A VAE's KL term collapsed to zero: posterior collapse ------------------------------------

def _sentence_vae(kl_after: float, batches: int = 60) -> list[str]:
    # a sentence VAE on PTB through Python logging: `TRAIN Batch 0100/1314, Loss    6.5186,
    # Recon-Loss    6.5146, KL-Loss    0.0040, KL-Weight  1.000`, names hyphenated
    lines = []
    for i in range(batches):
        kl = 0.0517 if i == 0 else kl_after
        recon = 9.19 - 4 * i / batches
        lines.append(f"08/04/2020 05:{26 + i // 20:02d}:{i % 60:02d} - INFO - __main__ -   "
                     f"TRAIN Batch {i * 100:04d}/{batches * 100}, Loss    {recon + kl:.4f}, "
                     f"Recon-Loss    {recon:.4f}, KL-Loss    {kl:.4f}, KL-Weight  1.000")
    lines.append("08/04/2020 05:33:49 - INFO - __main__ -   TRAIN Epoch 00/1, Mean Negative "
                 "ELBO    5.4047, PPL: 81.8343")
    return lines


def test_hyphenated_names_of_a_comma_separated_record_are_its_metrics(tmp_path: Path):
    artifact = verdict_of(tmp_path, _sentence_vae(kl_after=3.2))
    assert artifact["final_metrics"]["recon_loss"] == 5.2567
    assert artifact["final_metrics"]["kl_loss"] == 3.2


def test_a_vae_whose_kl_term_stays_at_zero_has_collapsed(tmp_path: Path):
    artifact = verdict_of(tmp_path, _sentence_vae(kl_after=0.0))
    found = [a for a in artifact["anomalies_detected"] if "posterior collapse" in a["description"]]
    assert [a["type"] for a in found] == ["not-learning"]


def test_a_vae_whose_kl_term_carries_information_has_not(tmp_path: Path):
    artifact = verdict_of(tmp_path, _sentence_vae(kl_after=3.2))
    assert not [a for a in artifact["anomalies_detected"]
                if "posterior collapse" in a["description"]]


def test_a_policys_kl_near_zero_is_no_vaes_collapse(tmp_path: Path):
    # PPO's KL to its reference policy, with no reconstruction term beside it
    lines = [f"step {i} | policy_loss {0.5 - i * 0.001:.4f} | kl {0.02 if i == 0 else 0.0:.4f}"
             f" | reward {i * 0.01:.3f}" for i in range(80)]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"]
                if "posterior collapse" in a["description"]]


# -- sealed-124 and sealed-125, after their blind score ---------------------------------------

def test_a_yaml_configuration_logged_whole_is_no_training_record(tmp_path: Path):
    # torchpack's dump of its config as one message, top-level keys alone on their lines,
    # then `Epoch 1/10 started.` and each epoch's `+ [name] = value` block
    head = "\x1b[32m[2023-10-15 20:07:50.812]\x1b[0m \x1b[1m"
    lines = [f"{head}Pruning started: \"runs/quantumnas/\".", "model:", "  arch:",
             "    n_wires: 4", "    n_blocks: 3", "optimizer:", "  name: adam", "  lr: 0.05",
             "  weight_decay: 0.0001", "  lambda_lr: 1e-2", "run:", "  n_epochs: 40",
             "  bsz: 256", "  target_pruning_amout: 0.5\x1b[0m"]
    for epoch in range(1, 11):
        lines += [f"{head}Epoch {epoch}/10 started.\x1b[0m",
                  f"{head}Training finished in 3.24 seconds.\x1b[0m",
                  f"{head}Checkpoint saved: \"runs/quantumnas/checkpoints/step-{epoch * 20}.pt\"."
                  f"\x1b[0m", f"{head}", f"+ [acc/valid] = {60 + epoch:.3f}",
                  f"+ [loss] = {1.2 - epoch * 0.02:.5f}",
                  f"+ [loss/valid] = {1.25 - epoch * 0.02:.5f}\x1b[0m",
                  f"{head}Epoch finished in 6.12 seconds.\x1b[0m"]
    lines.append(f"{head}10 epochs of training finished in 1 minute 38 seconds.\x1b[0m")
    artifact = verdict_of(tmp_path, lines)
    assert "lambda_lr" not in artifact["final_metrics"]
    assert artifact["final_metrics"]["loss"] == 1.0
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_figure_glued_to_pythons_level_is_no_loggers_name(tmp_path: Path):
    # IFRNet's `%(asctime)s:%(levelname)s:%(message)s`: `…:INFO:epoch:1/200 iter:800/51312`
    lines = []
    for epoch in range(1, 5):
        for it in range(800, 4001, 800):
            lines.append(f"2026-06-16 18:{epoch * 10 + it // 800:02d}:14:INFO:epoch:{epoch}/4 "
                         f"iter:{it}/4104 time:0.54+9.41 s/K_items lr:1.00000e-04 "
                         f"loss_rec:{7e-2 - epoch * 1e-2:.4e}")
        lines.append(f"2026-06-16 18:{epoch * 10 + 6:02d}:15:INFO:eval epoch:{epoch}/4 "
                     f"time:28.51 loss_rec:{2e-2:.4e} psnr:{33 + epoch * 0.5:.3f}")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["target_steps"] == 4 * 4104
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_trackers_network_retries_after_an_oom_are_no_new_launch(tmp_path: Path):
    lines = ["wandb: Tracking run with wandb version 0.15.12",
             "wandb: Network error (TransientError), entering retry loop.",
             "loading train data:    : 1666it [00:04, 365.00it/s]"]
    lines += [f"epoch {e} step {s} loss {1.0 - s * 0.001:.4f}" for e in range(3)
              for s in range(e * 50, e * 50 + 50, 10)]
    lines += ["Traceback (most recent call last):",
              '  File "run.py", line 50, in <module>',
              "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 42.00 MiB",
              "wandb: Waiting for W&B process to finish... (failed 1). Press Control-C to abort "
              "syncing.",
              "wandb: Network error (TransientError), entering retry loop.",
              "wandb: Network error (TransientError), entering retry loop.",
              "slurmstepd: error: *** JOB 38604827 ON eu-lo-dgx1-003 CANCELLED AT "
              "2023-12-06T16:50:48 ***"]
    artifact = verdict_of(tmp_path, lines)
    assert ("oom", "blocker") in _open(artifact)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")


def test_a_validation_fields_own_name_does_not_take_the_line_after_it():
    from babysit.parsing.formats import key_values
    line = ("BASIC - ConvLSTM_Bidirectional | Epoch 1 | Loss: 0.4662 | Val Loss: 0.5178 | "
            "LR: 1.00e-03 | Elapsed: 49s")
    assert key_values(line) == {"loss": 0.4662, "val_loss": 0.5178, "lr": 0.001,
                                "elapsed": 49.0}
    assert key_values("train: loss=0.3 acc=0.9 | val: loss=0.4 acc=0.8") == {
        "loss": 0.3, "acc": 0.9, "eval/loss": 0.4, "eval/acc": 0.8}


def _keras_early_stop(best: int, stopped: int) -> list[str]:
    lines = []
    for epoch in range(1, stopped + 1):
        val = 0.5 + 0.01 * abs(epoch - best) + (0 if epoch == best else 0.02)
        lines.append(f"Epoch {epoch}: val_loss did not improve from 0.50000"
                     if epoch != best else
                     f"Epoch {epoch}: val_loss improved from 0.6 to 0.50000, saving model to "
                     f"/content/best.h5")
        lines.append(f"BASIC - ConvLSTM | Epoch {epoch} | Loss: {0.5 - epoch * 0.005:.4f} | "
                     f"Val Loss: {val:.4f} | LR: 1.00e-03 | Elapsed: {epoch * 38}s")
    lines += [f"Epoch {stopped}: early stopping",
              f"Restoring model weights from the end of the best epoch: {best}.",
              "Training Summary - BASIC - ConvLSTM:", "Best validation loss: 0.5000"]
    return lines


def test_best_weights_put_back_from_early_in_a_long_run_leave_its_decline_open(tmp_path: Path):
    artifact = verdict_of(tmp_path, _keras_early_stop(best=4, stopped=54))
    assert ("eval-degradation", "high") in _open(artifact)
    assert artifact["decision"] == "CONDITIONAL"


def test_best_weights_put_back_from_late_in_a_run_resolve_its_decline(tmp_path: Path):
    artifact = verdict_of(tmp_path, _keras_early_stop(best=30, stopped=54))
    assert not [a for a in _open(artifact) if a[0] == "eval-degradation"]


def test_an_exceptions_own_words_logged_at_error_level_end_the_run(tmp_path: Path):
    lines = [f"2021-01-27 23:{m:02d}:03:INFO:TRAIN-(graph_mfn) (1/{m}/1)>> loss: "
             f"{0.6 - m * 0.004:.4f}  Has0_acc_2: 0.80" for m in range(1, 24)]
    lines.append("2021-01-28 01:00:25:ERROR:name 'logger' is not defined")
    artifact = verdict_of(tmp_path, lines)
    assert ("crash", "blocker") in _open(artifact)
    assert artifact["terminal_state"] == "FAILED"
    # (a handler's line that training outlives is no end)
    artifact = verdict_of(tmp_path, lines[:5] + lines[-1:] + lines[5:-1])
    assert artifact["terminal_state"] != "FAILED"


def _constant_then_drifting(classes: int, share: float, later: list[float]) -> list[str]:
    f1 = 2 * share / (classes * (1 + share))
    lines = [f"loss: {1.10 - i * 0.01:.6f}, val_acc: {share:.2%} ({share:.6f}), val_f1: "
             f"{f1:.2%} ({f1:.6f})" for i in range(4)]
    lines += [f"loss: {1.05 - i * 0.01:.6f}, val_acc: {acc:.2%} ({acc:.6f}), val_f1: "
              f"30.00% (0.300000)" for i, acc in enumerate(later)]
    return lines


def test_a_classifier_that_never_beats_answering_one_class_has_not_learned(tmp_path: Path):
    later = [0.4874, 0.4809, 0.4680, 0.4745, 0.4357, 0.4551, 0.4034, 0.3194, 0.3658, 0.37]
    artifact = verdict_of(tmp_path, _constant_then_drifting(3, 0.484439, later))
    assert ("not-learning", "high") in _open(artifact) or \
        ("not-learning", "blocker") in _open(artifact)


def test_a_classifier_that_leaves_its_one_class_start_has_learned(tmp_path: Path):
    later = [0.52, 0.58, 0.61, 0.63, 0.64, 0.66, 0.67, 0.67, 0.68, 0.69]
    artifact = verdict_of(tmp_path, _constant_then_drifting(3, 0.484439, later))
    assert not [a for a in artifact["anomalies_detected"] if "one class" in a["description"]]


def _separation(valid: list[float]) -> list[str]:
    # SpeechBrain's separation recipe: the loss is the negative SI-SNR, under its name
    return [f"epoch: {i + 1}, lr: 1.50e-04 - train si-snr: {v + 0.03:.2e} - valid si-snr: "
            f"{v:.2e}" for i, v in enumerate(valid)]


def test_a_separator_whose_si_snr_stays_at_the_mixtures_has_not_learned(tmp_path: Path):
    valid = [0.087, -0.175, -0.232] + [-0.26 - 0.002 * (i % 3) for i in range(11)]
    artifact = verdict_of(tmp_path, _separation(valid))
    assert ("not-learning", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_separator_whose_si_snr_climbs_is_learning(tmp_path: Path):
    valid = [-0.5 - 1.2 * i for i in range(14)]  # the negative SI-SNR falls to -16 dB
    artifact = verdict_of(tmp_path, _separation(valid))
    assert not [a for a in artifact["anomalies_detected"] if "dB of 0" in a["description"]]


def test_a_classification_report_after_every_epoch_is_never_the_runs_records(tmp_path: Path):
    # scikit-learn's report under each of a BERT-BiLSTM loop's 21 epochs (sealed-125): its
    # header repeats (read once), its rows are the classes, however far down the log
    log = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-125"
           / "pytorch_bilstm_bert_crowdflower_emotion_early_stop_val_decline_finished.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines())
    assert artifact["total_steps"] >= 21 * 27  # (not a class's label read as a step)
    assert not any(k.startswith("col") for k in artifact["final_metrics"])
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_a_secondary_evaluation_worse_while_the_main_one_ends_at_its_best_is_a_notice(
        tmp_path: Path):
    # a DPO fine-tune: val_loss (the first evaluation it reports) improves to its last
    # epochs; the chosen sequences' perplexity swings up, which preference training need
    # not keep
    ppl = [249, 420, 210, 140, 139, 72, 49, 67, 72, 45, 299, 236, 196, 179, 415]
    lines = [f"2026-04-20 00:02:13,723 | INFO | Epoch {e + 1} | lr=1.000e-05 | train_loss="
             f"{0.566 - e * 0.01:.6f} | val_loss={0.538 - e * 0.006:.6f} | val_acc="
             f"{0.76 + e * 0.002:.4f} | val_ppl={p:.4f} | train_batches=1063"
             for e, p in enumerate(ppl)]
    lines.append("2026-04-20 09:40:00,000 | INFO | Training complete: 15/15 epochs")
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in _open(artifact) if a[0] == "eval-degradation"]
    assert artifact["decision"] == "GO"


def test_a_sweep_that_says_it_is_complete_closes_the_run():
    from babysit.parsing.closing import closes
    assert closes("LR sweep complete. 40 runs in C:\\Users\\tejas\\raw_results\\exp_lr_sweep")
    assert closes("Hyperparameter search finished")
    assert not closes("Sweep 3/10 complete")


def _keras_fit(losses: list[float]) -> list[str]:
    lines = ["Train on 60000 samples, validate on 10000 samples"]
    for i, loss in enumerate(losses):
        lines += [f"Epoch {i + 1}/10",
                  f"60000/60000 [==============================] - 6s 101us/sample - loss: "
                  f"{loss:.4f} - accuracy: {0.39 + i * 0.002:.4f} - val_loss: {loss - 1e-4:.4f} - "
                  f"val_accuracy: {0.39 + i * 0.002:.4f}"]
    return [*lines, "Epoch 7/10"]


def test_a_loss_unmoved_at_a_uniform_outputs_for_whole_epochs_has_not_learned(tmp_path: Path):
    # an MNIST autoencoder's binary cross-entropy at ln 2 (Keras's pixel `accuracy` 0.39)
    artifact = verdict_of(tmp_path, _keras_fit([0.6959 - i * 0.0002 for i in range(6)]))
    assert ("not-learning", "blocker") in _open(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_loss_that_leaves_ln_2_is_learning(tmp_path: Path):
    artifact = verdict_of(tmp_path, _keras_fit([0.6959, 0.52, 0.31, 0.2, 0.15, 0.12]))
    assert not [a for a in artifact["anomalies_detected"] if "uniform" in a["description"]]


def test_a_loguru_source_location_is_no_figure_of_the_line(tmp_path: Path):
    head = "2024-01-28 01:17:37.309 | INFO     | __main__:train_val:131 - "
    lines = []
    for epoch in range(1, 13):
        lines += [f"{head}[NestNet_newhash_attn-14][{epoch:2d}/12][01:17:37] bit:16, "
                  f"dataset:imagenet, training....",
                  f"2024-01-28 01:19:31.035 | INFO     | __main__:train_val:169 -  loss:"
                  f"{1.01 - epoch * 0.02:.4f}"]
    artifact = verdict_of(tmp_path, lines)
    assert "train_val" not in artifact["final_metrics"]
    assert not [a for a in _open(artifact) if a[0] == "not-learning"]


def test_aprun_s_account_of_the_application_it_ran_says_the_run_is_over(tmp_path: Path):
    # a Blue Waters job: Torque's prologue, the loop's epochs, then ALPS's resource line
    lines = ["Begin Torque Prologue on nid27558", "Job Id:\t\t\t10697008.bw",
             "End Torque Prologue", "No model found for  ResNet50"]
    for epoch in range(10):
        lines += [f"Epoch {epoch}", f"Loss for epoch {epoch} : {0.2 - epoch * 0.013}",
                  "Saving Model"]
    lines.append("Application 83028875 resources: utime ~77411s, stime ~8618s, Rss ~1689484, "
                 "inblocks ~12562581, outblocks ~3235280")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("ENDED", "CONDITIONAL")


def _models_scored(f1s: list[float], accs: list[float]) -> list[str]:
    # scikit-learn models of an ensemble scored one after another on a 10 %-positive task
    return ["📊 Evaluating Models..."] + [f"  model_{i}: F1={f:.4f}, Acc={a:.4f}"
                                         for i, (f, a) in enumerate(zip(f1s, accs, strict=True))]


def test_models_that_never_answer_the_rare_class_have_not_learned(tmp_path: Path):
    artifact = verdict_of(tmp_path, _models_scored(
        [0.0, 0.0, 0.001, 0.0, 0.0029, 0.0, 0.0, 0.0, 0.001, 0.0102, 0.0447],
        [0.8986, 0.8986, 0.8986, 0.8986, 0.8982, 0.8986, 0.8986, 0.8986, 0.8984, 0.8929,
         0.876]))
    assert [a for a in _open(artifact) if a[0] == "not-learning"]


def test_models_that_find_the_rare_class_have_learned_though_accuracy_barely_moves(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _models_scored(
        [0.0, 0.0, 0.31, 0.42, 0.48, 0.5, 0.52, 0.55, 0.56, 0.57, 0.58],
        [0.8986, 0.8986, 0.9002, 0.9031, 0.9050, 0.9061, 0.9068, 0.9072, 0.9080, 0.9084,
         0.9090]))
    assert not [a for a in artifact["anomalies_detected"] if "one class" in a["description"]]


def test_a_word_and_its_own_bracketed_counter_after_the_epochs_are_its_batches():
    from babysit.parsing.formats import parse_key_values
    for line in ("Epoch [1/5], lter [100/468], Loss: 2.2063",
                 "Epoch: [1/5] | Minibatch [100/468] | loss 2.2063"):
        parsed = parse_key_values(line)
        assert parsed is not None, line
        assert (parsed.fmt, parsed.step, parsed.target, parsed.epoch, parsed.total_epochs) == \
            ("kv-epoch-batch", 100, 468, 1.0, 5), line


def test_bare_rows_with_their_date_and_time_count_the_planned_epochs(tmp_path: Path):
    # RWKV-LM's train_log.txt: `epoch loss ppl lr date time step`, the config's dict first
    log = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-126"
           / "rwkv_peft_rwkv5_modbus_sft_train_log_completed.log")
    lines = log.read_text().splitlines()[:3]  # `NEW RUN …`, the args' dict, DeepSpeed's
    lines += [f"{e} {1.18 / (e + 1):.6f} {3.25 - e * 0.5:.4f} 0.00001000 2025-05-30 "
              f"18:1{e}:20.796917 {e}" for e in range(5)]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_a_json_configs_repeated_closing_lines_still_close_it(tmp_path: Path):
    # SiamMask's config printed as JSON at each of several launches (sealed-127): its
    # `    },` lines come back, and a document left open took every training line after
    # it for its fields
    log = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-127"
           / "pytorch_siammask_refine_exploding_rpn_loss_restarts.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines()[:2300])
    assert artifact["reading"]["progress"] == "step"
    assert "rpn_cls_loss" in artifact["final_metrics"]


def test_a_keras_3_bar_drawn_in_equals_signs_is_a_keras_bar():
    from babysit.parsing.bars import parse_keras
    bar = parse_keras("  1/166 ==================== 29:12 11s/step - accuracy: 0.1875 - "
                      "loss: 1.6506")
    assert bar is not None
    assert (bar.n, bar.total) == (1, 166)


def test_a_nan_given_to_a_name_beside_a_finite_figure_is_reported(tmp_path: Path):
    lines = [f"Epoch {e}: train_loss 0.{90 - e}" for e in range(10)]
    lines += ["Training time: 5.673328638076782", "==Unlearned Model==",
              "Forget Ability: 0.48404255319148937, Utility: nan"]
    artifact = verdict_of(tmp_path, lines)
    assert ("nan-inf", "blocker") in _open(artifact)


def test_a_per_category_tables_nan_is_a_class_without_examples():
    from babysit.parsing.stray_values import StrayNonFinite
    assert StrayNonFinite._nan_beside_figures("| person | 41.2 | bicycle | nan |") == {}
    assert StrayNonFinite._nan_beside_figures("grad_norm_max: inf, lr: 0.1") == {}


def test_a_fit_begun_again_far_above_where_the_last_ended_is_a_new_fit(tmp_path: Path):
    # scikit-learn's MLPRegressor (verbose) refitted on each batch's new targets, between
    # grid-search lines and tqdm bars (sealed-126's fitted-Q trading run)
    log = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-126"
           / "sklearn_mlp_fitted_q_dynamic_trading_slurm_completed.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines())
    assert not [a for a in _open(artifact) if a[0] == "loss-spike"]


def test_an_early_stop_said_with_the_fields_of_where_it_stopped_ends_the_run():
    from babysit.parsing.events import EventKind, find_events
    [event] = find_events("[bench-lora] early stop task=host_tropism_hiyata step=7500")
    assert event.kind is EventKind.COMPLETED
    assert not find_events("[bench-lora] early stop patience=5 min_delta=0.001")


def test_an_early_stop_said_in_other_languages_ends_the_run():
    from babysit.parsing.events import EventKind, find_events
    for line in ("dừng sớm ở epoch 9", "触发早停，训练结束于第 12 轮", "早期終了: epoch 30",
                 "조기 종료: 에폭 17", "Parada temprana en la época 40"):
        assert [e.kind for e in find_events(line)] == [EventKind.COMPLETED], line


def test_a_held_out_auc_at_chance_beside_a_training_auc_that_climbs_has_not_learned(
        tmp_path: Path):
    lines = [f"  Epoch {e:02d}/15 | train_loss={0.05 - e * 0.001:.4f} train_AUROC="
             f"{0.48 + e * 0.017:.4f} | val_loss=0.0530 val_AUROC={0.5 + 0.02 * (e % 3 - 1):.4f}"
             f" | lr=1.00e-04 | 19.0s" for e in range(1, 16)]
    artifact = verdict_of(tmp_path, lines)
    assert ("not-learning", "blocker") in _open(artifact)


def test_a_best_model_saved_verb_first_is_the_runs_best_checkpoint(tmp_path: Path):
    # a chest X-ray ResNet (sealed-127): `New best AUROC: 0.7831`, `Saved best model to
    # checkpoints/resnet50/best_model.pth` at epoch 20 of 25 while its val_loss rose
    from babysit.parsing.events import EventKind, find_events
    [event] = find_events("  Saved best model to checkpoints/resnet50/best_model.pth")
    assert (event.kind, event.detail) == (EventKind.BEST_CHECKPOINT,
                                          "checkpoints/resnet50/best_model.pth")
    log = (Path(__file__).parents[1] / "fixtures" / "logs" / "public" / "sealed-127"
           / "pytorch_resnet50_nih_chestxray14_colab_25ep_completed.log")
    artifact = verdict_of(tmp_path, log.read_text().splitlines())
    assert artifact["best_checkpoint"] == "checkpoints/resnet50/best_model.pth"
    assert artifact["decision"] == "GO"


def test_mmcv_json_evaluations_iterations_are_not_the_trainings_steps(tmp_path: Path):
    # mmcv's JSON lines: `iter` counts the epoch's batches in training records and the
    # evaluation pass's length in `"mode": "val"` ones
    lines = []
    for epoch in range(1, 4):
        lines += [f'{{"mode": "train", "epoch": {epoch}, "iter": {it}, "lr": 0.0005, '
                  f'"loss": {2.0 - epoch * 0.2 - it / 9000:.5f}, "time": 1.19}}'
                  for it in range(25, 901, 25)]
        lines.append(f'{{"mode": "val", "epoch": {epoch}, "iter": 360, "lr": 0.0005, '
                     f'"mIoU": {0.5 + epoch * 0.03:.5f}, "F": 0.6}}')
    artifact = verdict_of(tmp_path, lines)
    assert artifact["total_steps"] == 3 * 900
    assert artifact["final_metrics"]["val_miou"] == 0.59


def _char_lm(val: list[float]) -> list[str]:
    return [f"step {i * 100}: train loss {1.33 - i * 0.006:.4f}, val loss {v:.4f}"
            for i, v in enumerate(val)] + ["Training finished."]


def test_a_finished_run_whose_evaluation_ends_worse_than_its_early_best_overfit(
        tmp_path: Path):
    val = [1.706, 1.6577] + [1.70 + 0.0025 * i + 0.015 * (i % 2) for i in range(32)]
    artifact = verdict_of(tmp_path, _char_lm(val))
    assert ("eval-degradation", "high") in _open(artifact)
    assert artifact["decision"] == "CONDITIONAL"


def test_a_finished_run_whose_evaluation_ends_at_its_plateau_did_not(tmp_path: Path):
    val = [1.706, 1.6577] + [1.66 + 0.015 * (i % 2) for i in range(32)]
    artifact = verdict_of(tmp_path, _char_lm(val))
    assert not [a for a in _open(artifact) if a[0] == "eval-degradation"]


def test_a_run_of_letters_64_kib_long_costs_a_linear_scan():
    # the hostile-input check: one line of 64 KiB of letters (cut there by the reader) held
    # the start-loop reader's two-words test for a minute, every position scanned to the end
    import time

    from babysit.parsing.start_loops import _WORDED
    line = "F0101 00:00:00.000 1 " + "a" * 65_000
    began = time.perf_counter()
    _WORDED.search(line)
    assert time.perf_counter() - began < 5.0  # (linear: milliseconds; quadratic: a minute)
    assert _WORDED.search("Epoch1 loss 0.3") is not None

"""Shapes read and judged since the twenty-ninth session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

import random
from pathlib import Path

from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of


def _open(artifact: dict, kind: str) -> list[dict]:
    return [a for a in artifact["anomalies_detected"]
            if a["type"] == kind and "resolved:" not in a["description"]]


# -- Ends said by the command or the scheduler around the run --------------------------------


def _epochs(count: int) -> list[str]:
    return [f"Epoch {e} | train L1 = {0.9 - 0.003 * e:.4f}\n              |  val L1 = 0.70"
            for e in range(1, count + 1)]


def test_gclouds_word_for_a_ctrl_c_ends_the_run_cancelled(tmp_path: Path):
    # googlecloudsdk's Ctrl-C handler, around a TPU VM's `gcloud … ssh --command`
    lines = [*_epochs(30), "", "Command killed by keyboard interrupt", ""]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "CANCELLED")


def test_sallocs_word_that_the_allocation_ran_out_ends_the_run_timeout(tmp_path: Path):
    lines = [
        *_epochs(197),
        "salloc: Job 8667074 has exceeded its time limit and its allocation has been revoked.",
        "    blogin2:~ $ client_loop: send disconnect: Broken pipe"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "TIMEOUT")


# -- A suite of tasks evaluated at one step ----------------------------------------------------


_TASKS = [("hellaswag_zeroshot", "0-shot", "multiple_choice", 0.50),
          ("jeopardy", "10-shot", "language_modeling", 0.16),
          ("arc_easy", "10-shot", "multiple_choice", 0.67),
          ("bigbench_dyck_languages", "10-shot", "language_modeling", 0.13),
          ("winograd", "0-shot", "schema", 0.68),
          ("bigbench_language_identification", "10-shot", "multiple_choice", 0.25)]


def _nanochat(evaluations: int, rng: random.Random) -> list[str]:
    """A nanochat-style base training: step lines, and every 250 steps a suite of tasks,
    one line each, then the suite's CORE figure."""
    lines: list[str] = []
    step = 0
    for evaluation in range(evaluations):
        for _ in range(250):
            step += 1
            loss = 2.6 - 0.0002 * step + rng.uniform(-0.01, 0.01)
            total = 250 * evaluations
            lines.append(f"step {step:05d}/{total:05d} ({100 * step / total:.2f}%) "
                         f"| loss: {loss:.6f} | lrm: 1.00 | dt: 646.56ms | tok/sec: 810,886 "
                         f"| mfu: 50.68 | total time: {step / 90:.2f}m")
        for task, shots, kind, level in _TASKS:
            accuracy = level + 0.004 * evaluation + rng.uniform(-0.01, 0.01)
            lines.append(f"Evaluating: {task} ({shots}, type: {kind})... accuracy: "
                         f"{accuracy:.4f} | centered: {accuracy - 0.1:.4f} | time: 4.81s")
        lines.append(f"Step {step:05d} | CORE metric: {0.24 + 0.004 * evaluation:.4f}")
    return lines


def test_a_suites_per_task_lines_are_no_series_of_one_metric(tmp_path: Path):
    lines = _nanochat(5, random.Random(2))
    evaluated = [r for r in _records(lines) if "eval/accuracy" in r.metrics]
    assert len(evaluated) <= 1  # the first task's line, before a second showed a suite
    artifact = verdict_of(tmp_path, lines)
    assert not _open(artifact, "eval-degradation")


def test_one_subject_named_evaluation_per_epoch_is_still_a_series():
    lines: list[str] = []
    for epoch in range(1, 6):
        lines.append(f"Epoch {epoch} | loss: {1.0 / epoch:.4f}")
        lines.append(f"Evaluating: dev (500 examples)... accuracy: {0.5 + 0.05 * epoch:.4f}")
    evaluated = [r.metrics["eval/accuracy"] for r in _records(lines)
                 if "eval/accuracy" in r.metrics]
    assert evaluated == [0.55, 0.6, 0.65, 0.7, 0.75]


# -- A reinforcement learner's surrogate loss ------------------------------------------------


def _ppo_steps(count: int, rng: random.Random) -> list[str]:
    """A PPO run printing its clipped surrogate on lines of its own and its mean reward on
    another: the surrogate wanders about 0, the reward climbs."""
    lines: list[str] = []
    for step in range(count):
        lines += ["", f"Step {step}", "++++++++ Policy training ++++++++++",
                  f"Current mean reward: {14 + 3.5 * step + rng.uniform(-30, 30):.6f} "
                  f"| mean episode length: {20 + step:.6f}"]
        for _ in range(4):
            surrogate = rng.uniform(-0.03, 0.015)
            lines.append(f"surrogate={surrogate: .5f}, entropy= 0.17624, loss={surrogate: .5f}")
    return lines


def test_a_flat_surrogate_loss_beside_a_climbing_reward_is_no_finding(tmp_path: Path):
    artifact = verdict_of(tmp_path, _ppo_steps(300, random.Random(5)))
    assert not _open(artifact, "not-learning")


# -- A loss flat for a long run, its start high and one stretch low by luck ------------------


_PUBLIC = Path(__file__).parents[1] / "fixtures" / "logs" / "public"


def _verdict_on(tmp_path: Path, log: Path) -> dict:
    return verdict_of(tmp_path, log.read_text(errors="replace").splitlines())


def test_a_flat_loss_over_a_thousand_points_stays_not_learning(tmp_path: Path):
    # MMTAfrica's M2M100 fine-tune: `Epoch: 1 | Step: 100 | Avg. loss: 30.507` every 100
    # steps at 30.5 ± 0.1 for 113,500 steps. Its start (the first five) sits high, and
    # over a thousand points some stretch dips low by luck while a hundred points'
    # estimate of the noise runs low: that was once taken for learning.
    log = _PUBLIC / "sealed-66" / ("mmtafrica_m2m100_finetune_loss_flat_never_learns_"
                                   "stops_midrun.log")
    artifact = _verdict_on(tmp_path, log)
    assert _open(artifact, "not-learning"), artifact["anomalies_detected"]


def test_ppos_surrogate_loss_is_never_judged_for_learning(tmp_path: Path):
    # Its reward climbs from 14 to over 3,000: the surrogate's flatness is no finding,
    # however long the noise is measured over.
    log = _PUBLIC / "sealed-22" / "ppo_nups_hopper_vanilla_ppo_976_steps_models_saved_cut.log"
    assert not _open(_verdict_on(tmp_path, log), "not-learning")


# -- An epoch's header with a recap of the best so far, behind a padded level -----------------


def test_a_level_padded_inside_its_brackets_is_part_of_the_head():
    from babysit.parsing.log_prefix import message

    assert message("[2024-08-21 12:59:17,846][    INFO] Iters: 81, LR: 0.0000050") \
        == "Iters: 81, LR: 0.0000050"


_CLASSES = ["background", "aeroplane", "bicycle", "bird", "boat"]


def _unimatch(epochs: int, planned: int) -> list[str]:
    """A UniMatch-V2-style log: its config, then per epoch a header recapping the best so
    far, an iteration counter that starts again each epoch, and an evaluation broken down
    by class before its mean."""
    head = "[2024-08-21 12:59:17,846][    INFO] "
    lines = [f"{head}{{'backbone': 'dinov2_base',", " 'batch_size': 4,", f" 'epochs': {planned},",
             " 'lr': 5e-06,", " 'nclass': 21}", ""]
    best = 0.0
    for epoch in range(epochs):
        lines.append(f"{head}===========> Epoch: {epoch}, Previous best: {best:.2f} "
                     f"@epoch-{max(epoch - 1, 0)}, EMA: {best:.2f} @epoch-{max(epoch - 1, 0)}")
        for it in range(0, 649, 81):
            lr = 5e-6 * (1 - (epoch * 649 + it) / (planned * 649)) ** 0.9
            lines.append(f"{head}Iters: {it}, LR: {lr:.7f}, Total loss: "
                         f"{0.3 / (epoch + 1) + 0.01:.3f}, Loss x: 0.100, Loss s: 0.020, "
                         f"Mask ratio: 0.700")
        miou = 80 + 6 * epoch / planned
        for number, name in enumerate(_CLASSES):
            lines.append(f"{head}***** Evaluation ***** >>>> Class [{number} {name}] IoU: "
                         f"{miou + (7 - 4 * number):.2f}, EMA: {miou:.2f}")
        lines.append(f"{head}***** Evaluation original ***** >>>> MeanIoU: {miou:.2f}, "
                     f"EMA: {miou:.2f}")
        best = max(best, miou)
    return lines


def test_an_epoch_header_recapping_the_best_so_far_is_a_header_and_the_last_epoch_ends_the_run(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _unimatch(12, 12))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    rows = [r for r in _records(_unimatch(3, 12)) if "iou" in r.metrics]
    assert len(rows) <= 1  # the per-class rows are no series (the first, before a second)


def test_the_same_log_short_of_its_planned_epochs_is_running(tmp_path: Path):
    artifact = verdict_of(tmp_path, _unimatch(8, 12))
    assert artifact["terminal_state"] == "RUNNING"


# -- A closing heading in capitals -------------------------------------------------------------


def _probe(with_results: bool) -> list[str]:
    lines = ["Namespace(model='dinov2', batch_size=256, num_classes=30, epochs=200, lr=0.01)"]
    for epoch in range(1, 200, 40):
        lines.append(f"Epoch [{epoch}/200], Loss: {3.0 / epoch:.4f}, Accuracy: 0.9")
        lines.append(f"Validation Loss: {2.4 + epoch / 400:.4f}, Validation Accuracy: 0.5341, "
                     f"F1: 0.2686")
    if with_results:
        lines += ["FINAL RESULTS:", "", "0.5650  0.3501  0.3943  0.3485"]
    return lines


def test_final_results_in_capitals_close_the_run(tmp_path: Path):
    assert verdict_of(tmp_path, _probe(True))["terminal_state"] == "SUCCEEDED"


def test_without_them_the_same_run_is_still_running(tmp_path: Path):
    assert verdict_of(tmp_path, _probe(False))["terminal_state"] == "RUNNING"


# -- An epoch's JSON summary numbered as the epoch it closes ----------------------------------


def _dino(epochs: int, loss_at) -> list[str]:
    """A DINO-style stdout: MetricLogger lines every 50 of 1351 iterations, the epoch's
    total time, then its `log.txt` line with the epoch's means, numbered from 0."""
    lines: list[str] = []
    for epoch in range(epochs):
        losses = []
        for it in range(0, 1351, 50):
            loss = loss_at(epoch + it / 1351)
            losses.append(loss)
            lines.append(f"Epoch: [{epoch}/302]  [{it:4d}/1351]  eta: 0:22:44  loss: {loss:.6f} "
                         f"({sum(losses) / len(losses):.6f})  lr: 0.000013 (0.000013)  "
                         f"wd: 0.040011 (0.040010)  time: 1.091859  data: 0.001071  max mem: 22145")
        lines.append(f"Epoch: [{epoch}/302] Total time: 0:22:07 (0.982533 s / it)")
        lines.append(f'{{"train_loss": {sum(losses) / len(losses)}, "train_lr": 1.3e-05, '
                     f'"train_wd": 0.04, "epoch": {epoch}}}')
    return lines


def test_an_epochs_summary_numbered_as_the_epoch_it_closes_is_no_new_stage(tmp_path: Path):
    # a loss that falls, then blows up in its sixth epoch and stays there
    rng = random.Random(4)
    artifact = verdict_of(tmp_path, _dino(9, lambda e: 5.0 / (1 + e) if e < 5
                                          else rng.uniform(30, 50)))
    assert _open(artifact, "divergence"), artifact["anomalies_detected"]


def test_the_same_log_falling_throughout_raises_nothing(tmp_path: Path):
    artifact = verdict_of(tmp_path, _dino(9, lambda e: 5.0 / (1 + e)))
    assert not [a for a in artifact["anomalies_detected"] if a["severity"] in ("high", "blocker")]


# -- From sealed-69 -----------------------------------------------------------------------------


def _trainer_steps(count: int, loss: float = 0.0) -> list[str]:
    return [f"{{'loss': {loss}, 'learning_rate': {2e-5 * (1 - i / 400):.6e}, 'epoch': "
            f"{i / 374:.2f}}}" for i in range(1, count + 1)]


def _deepspeed_exit(code: int) -> str:
    return (f"[2024-07-01 20:55:45,903] [ERROR] [launch.py:321:sigkill_handler] ['/envs/bin/"
            f"python', '-u', 'train_mem.py', '--local_rank=0', '--deepspeed', "
            f"'scripts/zero2.json', '--num_train_epochs', '1'] exits with return code = {code}")


def test_deepspeeds_launcher_saying_a_worker_was_killed_is_a_death(tmp_path: Path):
    lines = [*_trainer_steps(83, 0.7),
             "[2024-07-01 20:55:45,902] [INFO] [launch.py:315:sigkill_handler] Killing "
             "subprocess 63948", _deepspeed_exit(-9)]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "FAILED")


def test_deepspeeds_launcher_saying_a_worker_got_sigterm_is_a_stop(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_trainer_steps(83, 0.7), _deepspeed_exit(-15)])
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "CANCELLED")


def test_catboosts_stop_on_a_degenerate_solution_ends_the_run(tmp_path: Path):
    # (as the paste stores it: the tabs as runs of spaces)
    lines = [f"{i}:     learn: {0.6 / (1 + i / 10):.7f}        total: {i * 7 // 60}m "
             f"{i * 7 % 60}s   remaining: {(70 - i) * 7 // 60}m {(70 - i) * 7 % 60}s"
             for i in range(60)]
    lines += ["60:     learn: nan      total: 7m 2s    remaining: 1m 2s",
              "Training has stopped (degenerate solution on iteration 60, probably too small "
              "l2-regularization, try to increase it)"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "ENDED")


def test_retrieval_recalls_without_their_at_sign_are_higher_is_better():
    from babysit.rules.eval_names import evaluation_direction

    assert [evaluation_direction(k) for k in ("val_txt_r1", "test_img_r10", "val_r_mean",
                                               "eval/rsum")] == [1, 1, 1, 1]
    assert [evaluation_direction(k) for k in ("train_lr", "val_r2", "r1")] == [0, 0, 0]


def test_recalls_falling_while_the_loss_terms_fall_are_degradation(tmp_path: Path):
    # ALBEF's log.txt: one JSON line per epoch, its loss only as terms (itm, ita), as
    # strings; its retrieval recalls on val and test
    lines = []
    for epoch in range(6):
        itm, ita, recall = 0.41 - 0.03 * epoch, 0.62 - 0.05 * epoch, 81.0 - 0.45 * epoch
        lines.append(f'{{"train_lr": "0.000", "train_loss_itm": "{itm:.3f}", '
                     f'"train_loss_ita": "{ita:.3f}", "val_txt_r1": {recall - 9.2}, '
                     f'"val_r_mean": {recall}, "test_r_mean": {recall - 0.6}, "epoch": {epoch}}}')
    assert _open(verdict_of(tmp_path, lines), "eval-degradation")


def test_the_script_stopping_its_own_cloud_machine_closes_the_run(tmp_path: Path):
    lines = [f"[{i}]\tcv_agg's multi_logloss: {-1.0 - i / 1000:.5f} + 0.02\tcv_agg's wloss: "
             f"{0.5 - i / 20000:.6f} + 0.017" for i in range(50, 1451, 50)]
    lines.append("Stopping instance(s) instance-1...")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_a_nan_in_a_record_line_whose_time_field_changed_style_is_read(tmp_path: Path):
    # CatBoost prints its elapsed time as `413s`, then `7m 2s`: the NaN's line is the
    # first of its template, and the log ends on it
    lines = [f"{i}:     learn: {0.6 / (1 + i / 10):.7f}        total: {i * 7}s   "
             f"remaining: {(70 - i) * 7}s" for i in range(60)]
    lines.append("60:     learn: nan      total: 7m 2s    remaining: 1m 2s")
    artifact = verdict_of(tmp_path, lines)
    assert _open(artifact, "nan-inf") and artifact["decision"] == "NO-GO"


# -- From sealed-70 -----------------------------------------------------------------------------


def _flower(rounds: int, planned: int, finished: bool) -> list[str]:
    head = "\x1b[92mINFO \x1b[0m:      "
    lines = [f"{head}Starting Flower server, config: num_rounds={planned}, no round_timeout",
             f"{head}Flower ECE: gRPC server running ({planned} rounds), SSL is disabled",
             f"{head}[INIT]", f"{head}Requesting initial parameters from one random client"]
    for number in range(1, rounds + 1):
        lines += [f"{head}", f"{head}[ROUND {number}]",
                  f"{head}configure_fit: strategy sampled 6 clients (out of 6)",
                  f"{head}aggregate_fit: received 6 results and 0 failures",
                  f"{head}configure_evaluate: strategy sampled 6 clients (out of 6)",
                  f"{head}aggregate_evaluate: received 6 results and 0 failures"]
    if finished:
        lines += [f"{head}", f"{head}[SUMMARY]",
                  f"{head}Run finished {rounds} round(s) in 8.01s",
                  f"{head}\tHistory (loss, distributed):"]
        lines += [f"{head}\t\tround {n}: {0.7 / n}" for n in range(1, rounds + 1)]
        lines += [f"{head}", "[Server] Using aggregation method: fedavg"]
    return lines


def test_a_flower_servers_rounds_are_its_steps_and_its_summary_ends_it(tmp_path: Path):
    artifact = verdict_of(tmp_path, _flower(20, 20, True))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    assert artifact["total_steps"] == 20


def test_a_nan_in_a_flower_servers_loss_history_is_the_runs(tmp_path: Path):
    lines = [line.split("round 5: ")[0] + "round 5: nan" if "\tround 5: " in line else line
             for line in _flower(20, 20, True)]
    assert any("round 5: nan" in line for line in lines)
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO" and _open(artifact, "nan-inf")


def test_a_flower_server_part_way_through_its_rounds_is_running(tmp_path: Path):
    artifact = verdict_of(tmp_path, _flower(7, 20, False))
    assert (artifact["terminal_state"], artifact["total_steps"]) == ("RUNNING", 7)


def test_arcface_torchs_head_and_negative_zero_time_left(tmp_path: Path):
    # `Training: %(asctime)s-%(message)s`, a `Loss 15.48` cell among `Name: value` ones,
    # and `Required: -0 hours` at the last step
    lines = [f"Training: 2021-03-15 07:{i // 60:02d}:{i % 60:02d},486-Speed 4433.12 samples/sec"
             f"   Loss {15.0 / (1 + i / 10):.4f}   Epoch: 24   Global Step: {124000 + 50 * i}"
             f"   Fp16 Grad Scale: 16384   Required: {'-0' if i == 11 else '0'} hours"
             for i in range(12)]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")
    assert not _open(artifact, "not-learning")


def test_a_status_token_in_capitals_saying_training_is_complete_closes_the_run(tmp_path: Path):
    lines = [f"epoch {e} | loss: {1.0 / e:.4f} | val_fde: {2.0 / e:.4f}" for e in range(1, 31)]
    lines.append("STAGE3B_FORMAL_TRAINING_COMPLETE {'status': 'COMPLETE', 'stop_reason': "
                 "'patience_5'}")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_hrnets_end_epoch_in_its_printed_config_is_the_plan(tmp_path: Path):
    def lines(last: int) -> list[str]:
        out = ["{'DATASET': {'DATASET': 'coco'}, 'TRAIN': {'WORLD_SIZE': 4, 'BATCH_SIZE': 32, "
               "'BEGIN_EPOCH': 0, 'END_EPOCH': 30, 'OPTIMIZER': 'adam', 'LR': 0.001}}"]
        for epoch in range(last + 1):
            out += [f"############# Starting Epoch {epoch} | LR: 0.001 #############",
                    f"Train-{epoch} epoch | loss:{0.001 / (1 + epoch):.8f} | acc:0.{50 + epoch}"]
        return out
    assert verdict_of(tmp_path, lines(29))["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, lines(20))["terminal_state"] == "RUNNING"


def test_a_printed_settings_dicts_singular_epoch_beside_its_batch_size_is_the_plan(
        tmp_path: Path):
    head = ["09-26 08:44 INFO     {'dataset_type': 'cifar10', 'model_name': 'resnet18', "
            "'num_clients': 5, 'num_heads': 10, 'cut_a': 3, 'cut_b': 23, 'batch_size': 64, "
            "'training_lr': 0.05, 'decay_rate': 0.993, 'min_lr': 0.005, 'epoch': 40, "
            "'local_epoch': 1, 'momentum': -1, 'weight_decay': 0, 'data_path': './data', "
            "'device': 'cuda', 'partition_method': 'iid', 'classif_target': 'label', "
            "'alpha': 4.0, 'policy': 'cyclic', 'phi': 10, 'script': 'MULTIHOP ONLY'}"]
    lines = [*head, *(f"09-26 08:45 INFO     >>>>> Epoch [{e}]: Global model loss: "
                      f"{0.035 / (1 + e / 10)} acc: {0.14 + e / 60:.4f}" for e in range(40))]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_gaussian_splattings_evaluations_below_a_flat_pictures_psnr_end_no_go(tmp_path: Path):
    lines = ["Optimizing ./output/lego_eval/",
             "Training progress:  23%|███▏  | 7000/30000 [01:24<04:48, 79.82it/s, Loss=0.01539]",
             "[ITER 7000] Evaluating test: L1 0.34677 PSNR 6.25497 [01/01 13:45:38]", "",
             "[ITER 7000] Evaluating train: L1 0.36500 PSNR 5.93967 [01/01 13:45:38]",
             "Training progress: 100%|██████| 30000/30000 [05:41<00:00, 86.33it/s, Loss=0.00956]",
             "[ITER 30000] Evaluating test: L1 0.55763 PSNR 3.08221 [01/01 13:50:00]", "",
             "[ITER 30000] Evaluating train: L1 0.54754 PSNR 3.06422 [01/01 13:50:00]",
             "[ITER 30000] Saving Gaussians [01/01 13:50:00]", "",
             "Training complete. [01/01 13:50:04]"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "SUCCEEDED")
    assert _open(artifact, "not-learning")


def test_the_same_splatting_run_at_thirty_decibels_is_go(tmp_path: Path):
    lines = ["Training progress: 100%|██████| 30000/30000 [05:41<00:00, 86.33it/s, Loss=0.00956]",
             "[ITER 7000] Evaluating test: L1 0.0123 PSNR 31.2 [01/01 13:45:38]",
             "[ITER 30000] Evaluating test: L1 0.0101 PSNR 35.1 [01/01 13:50:00]",
             "Training complete. [01/01 13:50:04]"]
    assert verdict_of(tmp_path, lines)["decision"] == "GO"


def test_a_term_of_an_evaluation_loss_whose_total_is_printed_is_not_judged_alone(
        tmp_path: Path):
    # VoteNet on KITTI, its evaluation a line per figure: the small `sem_cls_loss` wanders
    # (0.0064, then 0.0123) while the total falls from 26.5 to 10.6
    log = _PUBLIC / "sealed-70" / "pytorch_votenet_kitti_200_epochs_finished_benign_nan_map.log"
    artifact = _verdict_on(tmp_path, log)
    assert not _open(artifact, "eval-degradation"), artifact["anomalies_detected"]


# -- From sealed-71 -----------------------------------------------------------------------------


def test_a_search_dumping_tensors_after_each_epoch_is_no_notebook_cell_returning(
        tmp_path: Path):
    lines: list[str] = []
    for epoch in range(1, 5):
        lines += [f"Train: Layer 1/3 Epoch {epoch:2d}/25 Step {s:03d}/002 Loss 2.30"
                  f"{s} Prec@(1,5) (10.{s}%, 48.4%)" for s in range(2)]
        lines += ["####### ALPHA #######", "# Alpha - normal"]
        lines += [f"tensor([0.333{epoch}, 0.3333, 0.333{4 - epoch}], device='cuda:0', "
                  f"grad_fn=<SoftmaxBackward>)" for _ in range(4)]
        lines += ["# Beta - reduce", "tensor([0.5000, 0.5000], device='cuda:0')"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_fairseqs_json_summary_behind_its_pipe_head_is_read(tmp_path: Path):
    lines = ["2023-04-29 00:02:05 | WARNING | tensorboardX.x2num | NaN or Inf found in input "
             "tensor.",
             '2023-04-29 00:02:05 | INFO | train | {"epoch": 1, "train_loss": "inf", '
             '"train_nll_loss": "inf", "train_wps": "687.9", "train_num_updates": "71", '
             '"train_lr": "1.87323e-06", "train_gnorm": "17.868", "train_loss_scale": "4"}']
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO" and _open(artifact, "nan-inf")


def _mlperf_v05(bleus: list[float]) -> list[str]:
    tag = ":::MLPv0.5.0 transformer 1541634588.379487514 (/workspace/translation/train.py:"
    lines = [f"{tag}60) run_start"]
    for epoch, bleu in enumerate(bleus):
        lines += [f"| epoch {epoch + 1:03d} | loss {6.9 - epoch:.3f} | nll_loss 5.687 | "
                  f"num_updates {3930 * (epoch + 1)} | lr 0.000559171 | gnorm 43.7 | "
                  f"loss_scale 8.000 | wall 596",
                  f'{tag}152) eval_accuracy: {{"epoch": {epoch - 1}, "value": {bleu}}}',
                  f"{tag}153) eval_target: 25.0"]
    return [*lines, f"{tag}167) run_stop", f"{tag}168) run_final"]


def test_a_bare_run_stop_after_the_quality_target_was_reached_is_success(tmp_path: Path):
    assert verdict_of(tmp_path, _mlperf_v05([20.8, 23.1, 25.1]))["terminal_state"] \
        == "SUCCEEDED"


def test_a_bare_run_stop_short_of_the_target_is_no_success(tmp_path: Path):
    assert verdict_of(tmp_path, _mlperf_v05([20.8, 23.1, 24.1]))["terminal_state"] \
        != "SUCCEEDED"


def _gnorms(values: list[float]) -> list[str]:
    return [f"| epoch 001:   {1000 * (i + 1)} / 3935 loss={10.2 - i * 0.3:.3f}, "
            f"nll_loss=9.410, num_updates={998 + 1000 * i}, lr=0.0002, gnorm={v}, clip=100%, "
            f"oom=0, loss_scale=16.000, wall={154 + 150 * i}" for i, v in enumerate(values)]


def test_a_grad_norm_high_from_the_first_print_and_falling_since_is_no_explosion(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _gnorms([90465.3, 66285.0, 53807.2, 43724.1, 35936.1,
                                             30603.1, 27278.5, 24929.9]))
    assert not _open(artifact, "grad-explosion")


def test_a_grad_norm_high_from_the_first_print_and_rising_stays_an_explosion(tmp_path: Path):
    artifact = verdict_of(tmp_path, _gnorms([20465.3, 26285.0, 33807.2, 43724.1, 55936.1,
                                             70603.1, 97278.5, 124929.9]))
    assert _open(artifact, "grad-explosion")


# -- From sealed-72 -----------------------------------------------------------------------------


def _tesseract(iterations: int) -> list[str]:
    return [f"At iteration {i}/{i * 8}/{i * 8}, Mean rms=0.{300 - i // 100}%, delta=0.107%, "
            f"char train={2.0 / (1 + i / 1000):.3f}%, word train=1.067%, skip ratio=0%,  "
            f"wrote checkpoint." for i in range(100, iterations + 1, 100)]


def test_makes_word_that_its_recipe_was_terminated_is_a_stop(tmp_path: Path):
    lines = [*_tesseract(3000), "", "make: *** Deleting file 'data/ocrd/checkpoints/ocrd_ch'",
             "make: *** [Makefile:287: data/ocrd/checkpoints/ocrd_ch] Terminated"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "CANCELLED")


def test_a_model_said_trained_for_its_epochs_closes_the_run(tmp_path: Path):
    head = "[2020-12-02 03:15:32,384 INFO laia] "
    lines = [f"{head}TR - E{e}: 100% 16/16 [00:34<00:00, 0.46it/s, loss={20 / (1 + e):.4f}, "
             f"cer={50 / (1 + e):.1f}%, wer=27.4%]" for e in range(40)]
    lines += [f"{head}Model has been trained for 40 epochs (641 steps)",
              f"{head}Best va_cer=None obtained with model="]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_the_time_it_took_to_train_said_last_closes_the_run(tmp_path: Path):
    lines = [f"Train loss: {0.2 / (1 + e):.6f}, Test loss: {0.15 / (1 + e):.6f}. Time: 5.6 s."
             for e in range(8)]
    lines.append("Took 216.353234053 to train and test this model.")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_training_ends_in_the_present_tense_closes_the_run(tmp_path: Path):
    lines = [f"Epoch {e} | Train Loss: {1.0 / e:.3f} | Train Accuracy: 0.{60 + e}"
             for e in range(1, 30)]
    lines += ["Training Ends", "", "[Evaluation on Test Set]"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"

"""Shapes read and judged since the thirty-eighth session, each on lines written in the
real shape of a public log (sealed-113 and sealed-114, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.formats import key_values, parse_key_values
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list:
    parser = LogParser()
    return [*parser.feed_lines(lines), *parser.finish()]


def _anomalies(artifact: dict) -> list[tuple[str, str]]:
    return [(a["type"], a["severity"]) for a in artifact["anomalies_detected"]
            if "resolved" not in a["description"]]


# -- Fields apart by a dash; an epoch in capitals -------------------------------------------


def _torchmd(epochs: int, planned: int = 50) -> list[str]:
    lines = []
    for epoch in range(1, epochs + 1):
        for protein in range(1, 4):
            lines.append(f"18:11:{protein} Training {protein} / 3 - RMSD {3.5 - epoch / 40:.6f} "
                         f"over 250 steps at EPOCH {epoch} ")
        lines.append(f"EPOCH {epoch} / {planned} - RMSD {3.54 - epoch / 50:.10f} ")
    return lines


def test_an_epoch_in_capitals_and_a_field_after_a_dash_are_read():
    # (the template's first line, with other lines between it and its second, is not
    # recovered: the epochs from the second on are)
    epochs = [r for r in _records(_torchmd(5)) if r.metrics.get("rmsd") is not None]
    assert [r.epoch for r in epochs][-4:] == [2.0, 3.0, 4.0, 5.0]


def test_the_planned_epoch_reached_in_capitals_ends_the_run(tmp_path: Path):
    assert verdict_of(tmp_path, _torchmd(50))["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _torchmd(20))["terminal_state"] == "RUNNING"


# -- A detector's AP at a range of IoU cut-offs; an inference pass's bar ---------------------


def test_a_map_at_a_range_of_cut_offs_is_one_figure():
    parsed = parse_key_values("Epoch: 0 | mAP@0.5: 0.0 | mAP@0.50:0.95: 0.0")
    assert parsed is not None and parsed.metrics == {"map@0.5": 0.0, "map@0.50:0.95": 0.0}
    assert key_values("R@1: 0.5 R@5: 0.7") == {"r@1": 0.5, "r@5": 0.7}


def _yolov6(epochs: int) -> list[str]:
    bar = "█" * 10
    lines = []
    for epoch in range(epochs):
        lines += ["     Epoch  iou_loss  dfl_loss  cls_loss",
                  f"      {epoch}/99         0         0    {0.5 / (epoch + 1):.4f}: 100%|{bar}| "
                  f"106/106 [00:17<00:00,",
                  f"Inferencing model in train datasets.: 100%|{bar}| 11/11 [00:01<00:00,  "
                  f"9.37it/s]",
                  f"Epoch: {epoch} | mAP@0.5: 0.01 | mAP@0.50:0.95: 0.005", ""]
    return lines


def test_an_inference_pass_bar_is_no_plan_of_the_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, _yolov6(9))
    assert artifact["terminal_state"] == "RUNNING"


# -- A loop counted under the script's own word ---------------------------------------------


def _rolling(days: int, planned: int = 73) -> list[str]:
    head = "2026-03-14 14:38:23,992 [INFO]"
    lines = [f"{head} Test dates: {planned} days"]
    for day in range(1, days + 1):
        lines.append(f"{head}   [{100 * day / planned:5.1f}%] Day {day}/{planned} "
                     f"(2026-01-{day % 28 + 1:02d}) | 0.8s/day | ETA: {planned - day}s")
    return lines


def test_a_counter_under_the_scripts_own_word_is_the_runs_progress(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_rolling(73), "2026-03-14 14:39:21,168 [INFO] Done."])
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _rolling(40))["terminal_state"] == "RUNNING"


def test_a_data_pass_counted_so_is_no_progress():
    lines = [f"Loading file {n}/12 from disk" for n in range(1, 13)]
    assert all(r.step is None for r in _records(lines))


# -- A bar around every fit, at its end ------------------------------------------------------


def _bagging(rounds: int, finished: bool) -> list[str]:
    bar = "█" * 20
    lines = [f"  0%|{' ' * 20}| 0/{rounds} [00:00<?, ?it/s]0:\tlearn: 0.4825355\ttotal: 357ms"
             f"\tremaining: 35.3s"]
    for done in range(rounds if finished else rounds - 3):
        for fit in range(2):
            start = 1 if done == 0 and fit == 0 else 0
            lines += [f"{i}:\tlearn: {0.48 - i / 400:.7f}\ttotal: {i * 0.3:.1f}s\tremaining: "
                      f"{(29 - i) * 0.3:.1f}s" for i in range(start, 30)]
        lines.append(f" {100 * (done + 1) // rounds}%|{bar}| {done + 1}/{rounds} "
                     f"[04:10<37:34, 250.52s/it]")
    return lines


def test_a_bar_around_every_fit_run_to_its_end_ends_the_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_bagging(10, True), "Bagging train/test accuracies "
                                                          "0.866/0.859"])
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_an_epochs_batch_bar_at_its_end_is_no_end_of_the_run(tmp_path: Path):
    # One epoch's bar run to its end, the step counter going on: no fit started again
    # inside it, so it is an inner loop's bar.
    bar = "█" * 20
    lines = [f"  0%|{' ' * 20}| 0/50 [00:00<?, ?it/s]"]
    lines += [f"step {s} loss {2.0 - s / 100:.3f}" for s in range(1, 51)]
    lines.append(f"100%|{bar}| 50/50 [00:50<00:00, 1.00it/s]")
    lines += [f"step {s} loss {1.5 - s / 1000:.3f}" for s in range(51, 60)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


# -- A counter padded to its width is no battery of subjects ---------------------------------


def test_a_counter_padded_to_its_width_keeps_its_line_a_record():
    lines = [f"Epoch 0 | iter {i:>3} step {i:>3} | loss train: {10 + i / 10:.3f}, val_loss "
             f"valid: 21.817 | iter time: 38.615 s (step)" for i in range(8, 13)]
    losses = [r.metrics.get("loss_train") for r in _records(lines)]
    assert losses == [10.8, 10.9, 11.0, 11.1, 11.2]


# -- Judgement ------------------------------------------------------------------------------


def _distillation(scores: list[float], best: float = 0.8214666666666667) -> list[str]:
    bar = "█" * 10
    lines = []
    for epoch, score in enumerate(scores):
        lines += [f"Train     {epoch}/30: 100%|{bar}| 805/805 [09:18<00:00,  1.44it/s, "
                  f"cls_QFL=0.1288, bb_DIoU=0.2465, Total=0.2282, gpu_mem=7.01Gb]",
                  f"Evaluating: 100%|{bar}| 202/202 [13:53<00:00,  4.13s/it]",
                  f"Current score: {score}, best_score: {max(best, score)}"]
    return lines


def test_a_best_never_reached_by_any_evaluation_is_the_start_lost(tmp_path: Path):
    artifact = verdict_of(tmp_path, _distillation([0.343, 0.370, 0.324, 0.476]))
    assert ("eval-degradation", "blocker") in _anomalies(artifact)
    assert artifact["decision"] == "NO-GO"


def test_a_best_the_run_reaches_is_no_start_lost(tmp_path: Path):
    artifact = verdict_of(tmp_path, _distillation([0.5, 0.7, 0.9, 0.85, 0.88], best=0.5))
    assert not any(kind == "eval-degradation" for kind, _ in _anomalies(artifact))


def test_a_best_within_reach_is_left_alone(tmp_path: Path):
    artifact = verdict_of(tmp_path, _distillation([0.80, 0.79, 0.81, 0.80]))
    assert not any(kind == "eval-degradation" for kind, _ in _anomalies(artifact))


def _gan(d_tail: list[float], g_tail: list[float]) -> list[str]:
    lines = [f"[2023-11-28 12:44:42] Epoch {e}/100 | Discriminator Loss: 0.{3000 + e:06d} | "
             f"Generator Loss: {2.0 + e / 50:.6f}" for e in range(80)]
    for offset, (d, g) in enumerate(zip(d_tail, g_tail, strict=True)):
        lines.append(f"[2023-11-28 13:56:20] Epoch {80 + offset}/100 | Discriminator Loss: "
                     f"{d:.6f} | Generator Loss: {g:.6f}")
    return lines


def test_a_discriminator_that_won_by_a_rounding_hair_is_the_game_over(tmp_path: Path):
    # 0.000047, 0.000069, then 0.000000: within a thousandth of 0 is the game won
    d = [0.000047, 0.000552, 0.00033, 0.0048, 0.000069, 0.0033, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    g = [15.1, 9.1, 9.8, 9.6, 11.1, 10.0, 10.5, 52.1, 50.6, 47.4, 49.7, 49.7]
    artifact = verdict_of(tmp_path, _gan(d, g))
    assert ("not-learning", "blocker") in _anomalies(artifact)


def test_a_discriminator_low_beside_an_ordinary_generator_is_left_alone(tmp_path: Path):
    d = [0.0005] * 12
    g = [3.1, 2.9, 3.3, 3.0, 2.8, 3.2, 3.1, 2.9, 3.0, 3.1, 2.9, 3.0]
    artifact = verdict_of(tmp_path, _gan(d, g))
    assert ("not-learning", "blocker") not in _anomalies(artifact)


def _fine_tune_csv(force_mae: list[float]) -> list[str]:
    lines = ["epoch,step,train_Total_Loss,val_Force_MAE,val_Total_Loss"]
    for epoch, value in enumerate(force_mae):
        step = 69 + 70 * epoch
        lines.append(f"{epoch},{step},,{value},{9.3 - epoch * 0.1}")
        lines.append(f"{epoch},{step},{8.47 - epoch * 0.2},,")
    return lines


def test_an_error_never_better_than_its_first_and_several_times_it_is_a_blocker(
        tmp_path: Path):
    maes = [0.0297, 0.0322, 0.0407, 0.0495, 0.0593, 0.0643, 0.0677, 0.0751, 0.0935, 0.0795,
            0.0965, 0.0893]
    artifact = verdict_of(tmp_path, _fine_tune_csv(maes))
    assert ("eval-degradation", "blocker") in _anomalies(artifact)


def test_an_error_a_little_above_its_first_stays_a_notice(tmp_path: Path):
    maes = [0.0297, 0.0322, 0.0331, 0.0335, 0.0341, 0.0339, 0.0344, 0.0349, 0.0352, 0.0348]
    artifact = verdict_of(tmp_path, _fine_tune_csv(maes))
    assert ("eval-degradation", "blocker") not in _anomalies(artifact)


# -- A stop while a library handled its own exception; a launch after the plan --------------


def _stopped_in_a_plot(own_first: bool) -> list[str]:
    site = "/home/u/miniconda3/envs/r/lib/python3.10/site-packages"
    first = ['  File "/home/u/code/train.py", line 968, in train_process'] if own_first else []
    return [*_epochs_lines(30),
            "Traceback (most recent call last):", *first,
            f'  File "{site}/PIL/ImageFile.py", line 644, in _save',
            "    fh = fp.fileno()",
            "AttributeError: '_idat' object has no attribute 'fileno'", "",
            "During handling of the above exception, another exception occurred:", "",
            "Traceback (most recent call last):",
            '  File "/home/u/code/train.py", line 1215, in <module>', "    main()",
            '  File "/home/u/code/train.py", line 232, in plot_history',
            "    plt.savefig(plot_path, dpi=300, bbox_inches='tight')",
            f'  File "{site}/PIL/ImageFile.py", line 648, in _save',
            "    _encode_tile(im, fp, tile, bufsize, None, exc)",
            "KeyboardInterrupt"]


def _epochs_lines(count: int) -> list[str]:
    return [f"Epoch {e}, lr: 0.0003\nTrain loss: {8.2 - e / 100:.5f}" for e in range(count)]


def test_a_stop_while_a_library_handled_its_own_exception_is_a_cancel(tmp_path: Path):
    artifact = verdict_of(tmp_path, _stopped_in_a_plot(own_first=False))
    assert artifact["terminal_state"] == "CANCELLED"
    assert "checkpoint-failure" not in {kind for kind, _ in _anomalies(artifact)}


def test_a_stop_while_the_programs_own_failure_was_handled_stays_a_failure(tmp_path: Path):
    artifact = verdict_of(tmp_path, _stopped_in_a_plot(own_first=True))
    assert artifact["terminal_state"] == "FAILED"


def _presumm(relaunch: bool) -> list[str]:
    head = "[2024-04-24 02:05:42,047 INFO]"
    lines = [f"{head} Namespace(accum_count=5, batch_size=140, task='abs', train_steps=200000)",
             f"{head} Device ID 0", f"{head} Start training..."]
    lines += [f"{head} Step {s}/200000; acc:  60.78; ppl:  5.51; xent: 1.71; lr: 0.00000448; "
              f"  0/511 tok/s;  13663 sec" for s in range(190000, 200001, 50)]
    lines.append(f"{head} Saving checkpoint saved_models/model_step_200000.pt")
    if relaunch:
        lines += [f"{head} Namespace(accum_count=5, batch_size=140, task='ext')",
                  f"{head} Device ID 0", f"{head} Start training..."]
    return lines


def test_a_launch_after_the_plan_was_reached_is_a_run_not_yet_finished(tmp_path: Path):
    assert verdict_of(tmp_path, _presumm(relaunch=False))["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _presumm(relaunch=True))["terminal_state"] == "RUNNING"


def test_a_loops_line_glued_after_its_bar_is_read_by_its_own_names(tmp_path: Path):
    # An FNO's Slurm output: tqdm's redraw, then the loop's own print on the same line.
    lines = ["epochs :   250"]
    for epoch in range(1, 251):
        train = 0.09 - epoch * 0.0001
        test = 0.0889 + max(0, epoch - 45) * 0.0001
        lines.append(f"{100 * (epoch - 1) // 250:3d}%|{'█' * ((epoch - 1) // 25):<10}| "
                     f"{epoch - 1}/250 [00:10<42:21, 10.21s/it][{epoch:3d}], time: 7.158, "
                     f"train: {train:.3e}, test: {test:.3e}")
    artifact = verdict_of(tmp_path, lines)
    assert "test" in artifact["final_metrics"]
    assert "eval-degradation" in {kind for kind, _ in _anomalies(artifact)}


# -- The end of training said in other languages; an accuracy of real numbers ---------------


def _spanish(epochs: int, planned: int = 400, closing: str = "") -> list[str]:
    lines = ["Entrenando Modelo Final...",
             f"--- Inicio entrenamiento: {planned} épocas (17:56:47) ---"]
    lines += [f"  Epo {e}: Loss={1.6 * 0.99 ** e:.4f} | Acc={25 + 70 * e / planned:.2f}%"
              for e in range(1, epochs + 1)]
    return [*lines, closing] if closing else lines


def test_the_end_of_training_said_in_spanish_with_its_time_ends_the_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, _spanish(400, closing="--- Fin entrenamiento (17:57:05) ---"))
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _spanish(120))["terminal_state"] == "RUNNING"


def test_end_words_of_other_languages_are_sentences_of_their_own():
    from babysit.parsing.completion_words import says_finished

    assert says_finished("Fim do treinamento.")
    assert says_finished("Ende des Trainings")
    assert says_finished("--- End of training (17:57:05) ---")
    assert not says_finished("the fine training loop continues")
    assert not says_finished("Training done 3")


def _depth_regression(epochs: int) -> list[str]:
    lines = []
    for epoch in range(1, epochs + 1):
        lines += [f"Epoch {epoch}/{epochs}",
                  f"1268/1268 [==============================] - 136s 106ms/step - loss: "
                  f"{0.05 * 0.98 ** epoch:.4f} - acc: {3.1754e-09 * (1 + epoch % 3):.4e} - "
                  f"val_loss: {0.06 * 0.985 ** epoch:.4f} - val_acc: 0.0000e+00"]
    return lines


def test_an_accuracy_of_real_numbers_matched_exactly_is_no_measure_of_learning(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, _depth_regression(40))
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "GO", artifact["summary"]


def _pbs(epochs: int) -> list[str]:
    lines = []
    for epoch in range(1, epochs + 1):
        lines += [f"Epoch:{epoch} Iter:{epoch * 20 + i} Loss Seg:{0.5 - epoch / 1000:.4f} "
                  f"Loss Aux:{0.51 - epoch / 1000:.4f}" for i in range(3)]
        lines += [f"Enad of epoch: {epoch}. Now validating.....",
                  f"{{'Heart Dice': {0.7 + epoch / 1000}, 'Aorta Dice': {0.8 + epoch / 2000}}}"]
    return [*lines, "PBS Job 3523461.pbs", "CPU time  : 15:04:28", "Wall time : 15:11:01",
            "Mem usage : 10928728kb"]


def test_a_schedulers_report_on_the_job_is_no_word_of_the_runs_success(tmp_path: Path):
    # The scheduler prints it however the job ended: over, outcome not confirmed.
    assert verdict_of(tmp_path, _pbs(200))["terminal_state"] == "ENDED"


def test_the_time_training_took_with_its_units_in_brackets_closes_the_run(tmp_path: Path):
    lines = []
    for epoch in range(15):
        lines += [f"Epoch {epoch} - Training loss: {2.30 - epoch * 0.03:.13f}",
                  "Number Of Images Tested = 60000", "",
                  f"Model Accuracy for train= {0.12 + epoch * 0.03:.16f}"]
    lines += ["Training Time (in minutes) = 6.454254253705343"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_a_named_counter_said_twice_or_not_rising_is_no_progress():
    twice = [f"[INFO] Day {day}/73 | ETA: 60s" for day in (1, 2)]
    assert all(r.step is None for r in _records(twice))
    again = [f"[INFO] Day 5/73 | ETA: {s}s" for s in (60, 50, 40, 30)]
    assert all(r.step is None for r in _records(again))


def test_a_best_loss_never_reached_is_judged_lower_is_better(tmp_path: Path):
    lines = [f"Epoch {e}: train_loss: {2 - e / 10:.2f}, val_loss: {0.9 + e / 100:.3f}, "
             f"best_val_loss: 0.500" for e in range(1, 6)]
    assert ("eval-degradation", "blocker") in _anomalies(verdict_of(tmp_path, lines))
    better = [f"Epoch {e}: train_loss: {2 - e / 10:.2f}, val_loss: {0.52 - e / 1000:.3f}, "
              f"best_val_loss: 0.500" for e in range(1, 6)]
    assert ("eval-degradation", "blocker") not in _anomalies(verdict_of(tmp_path, better))


def _gluoncv(epochs: int, last_iteration: int = 180) -> list[str]:
    lines = ["Starting Epoch: 0", "Total Epochs: 10"]
    for epoch in range(epochs):
        top = last_iteration if epoch == epochs - 1 else 180
        lines += [f"Epoch {epoch} iteration {i:04d}/0187: training loss {0.9 - epoch * 0.03:.3f}"
                  for i in range(20, top + 1, 20)]
        lines.append(f"Epoch {epoch} validation pixAcc: {0.8 + epoch / 100:.3f}, mIoU: "
                     f"{0.4 + epoch / 100:.3f}")
    return lines


def test_the_last_print_before_the_plans_end_is_the_plan_done(tmp_path: Path):
    # Printed every 20 iterations of 187: iterations 181-186 of the last epoch ran unprinted.
    assert verdict_of(tmp_path, _gluoncv(10))["terminal_state"] == "SUCCEEDED"
    assert verdict_of(tmp_path, _gluoncv(10, last_iteration=140))["terminal_state"] == "RUNNING"


def test_a_log_ending_on_its_last_print_before_the_plans_end_is_not_yet_the_plan_done(
        tmp_path: Path):
    # A DCGAN notebook's `[4/5][150/190]`: nothing shows the last 40 batches ran.
    lines = ["Starting Training Loop..."]
    lines += [f"[{e}/5][{b}/190]\tLoss_D: {0.5 + b / 1000:.4f}\tLoss_G: {2.5 + e / 10:.4f}"
              for e in range(5) for b in range(0, 151, 50)]
    assert verdict_of(tmp_path, lines)["terminal_state"] != "SUCCEEDED"

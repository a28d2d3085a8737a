"""Shapes read and judged since the thirty-seventh session, each on lines written in the
real shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

import math
from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of

_PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "public"


def _public(split: str, name: str) -> list[str]:
    """A public log's lines, as committed (its held-out set scored blind before any work
    on it)."""
    return (_PUBLIC / split / name).read_text(errors="replace").splitlines()


def _records(lines: list[str]) -> list:
    parser = LogParser()
    return [*parser.feed_lines(lines), *parser.finish()]


# -- A script's own last word that it is done ----------------------------------------------


def _epochs(count: int) -> list[str]:
    return [f"epoch {e} loss {2.0 / e:.4f} acc {0.5 + e / (4 * count):.4f}"
            for e in range(1, count + 1)]


def test_done_with_the_time_it_took_closes_the_run(tmp_path: Path):
    # A benchmark script's last line (XGBoost vs LightGBM tables, sealed-108).
    artifact = verdict_of(tmp_path, [*_epochs(12), "Done: 2076.7 seconds"])
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_the_program_saying_it_finished_closes_the_run(tmp_path: Path):
    # gensim's example scripts end on a banner of their own.
    artifact = verdict_of(tmp_path, [*_epochs(12), "",
                                     "*" * 32 + " The program finished. " + "*" * 32])
    assert artifact["terminal_state"] == "SUCCEEDED"


def test_a_program_finished_with_a_failing_status_is_no_success(tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_epochs(12), "Program finished with exit code 1"])
    assert artifact["terminal_state"] != "SUCCEEDED"


# -- A metrics.csv: its column names, and the test row after the fit -------------------------


def _lightning_csv(test_row: bool) -> list[str]:
    lines = ["epoch,lossD,lossG,lossG+lossD,step,test_RMSE,val_RMSE,val_loss"]
    step = 0
    for epoch in range(100):
        for _ in range(2):
            step += 30
            d, g = 0.5 - epoch * 0.0005, 0.25 + epoch * 0.0015
            lines.append(f"{epoch},{d:.6f},{g:.6f},{d + g:.6f},{step},,,")
        lines.append(f"{epoch},,,,{step},,{11 + 5 / (epoch + 1):.4f},{0.01 / (epoch + 1):.6g}")
    if test_row:
        lines.append(f"100,,,,{step + 1},13.07546329498291,,")
    return lines


def test_a_column_named_for_a_sum_is_read():
    # A GAN's Lightning CSVLogger file: `lossG+lossD` in its header (sealed-107).
    records = _records(_lightning_csv(test_row=False)[:5])
    assert records and "lossg+lossd" in records[-1].metrics


def test_the_test_row_after_the_fit_ends_the_run(tmp_path: Path):
    # `trainer.test()` writes one row of test_* figures a step after the fit's last: an
    # evaluation, not training, and what a finished fit does next.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    finished = verdict_of(tmp_path / "a", _lightning_csv(test_row=True))
    assert finished["terminal_state"] == "SUCCEEDED"
    assert finished["final_metrics"]["test_rmse"] > 13
    cut = verdict_of(tmp_path / "b", _lightning_csv(test_row=False))
    assert cut["terminal_state"] == "RUNNING"


# -- Counters named as ids, bars that counted no training --------------------------------------


def _kbert(epochs: int) -> list[str]:
    lines = ["nohup: ignoring input",
             "  0%|          | 0/82 [00:00<?, ?it/s]\r100%|██████████| 82/82 [00:00<00:00, "
             "847125.44it/s]", "epochs_num:  32", "Start training."]
    for epoch in range(1, epochs + 1):
        for step in range(100, 1200, 100):
            lines.append(f"Epoch id: {epoch}, Training steps: {step}, Train Acc:  0.00%, "
                         f"Train Loss: {0.09 - epoch * 0.0005:.6f}, Train Avg Loss: 0.085228, "
                         f"Time: 0:{epoch:02d}:{step // 100:02d}")
        lines.append("Start evaluation on dev dataset.")
        lines.append("Acc. (Correct/Total):  0.00% micro-Prec: 0.0000 micro-Recall:0.0000 "
                     f"micro-F1: 0.0000 dev loss: {0.08 - epoch * 0.0001:.6f}")
    return lines


def test_an_epoch_named_by_its_id_is_the_epoch():
    records = _records(_kbert(2))
    trained = [r for r in records if "train_loss" in r.metrics]
    assert trained[-1].epoch == 2.0 and "epoch_id" not in trained[-1].metrics


def test_a_bar_run_to_its_end_before_training_is_no_plan(tmp_path: Path):
    # K-BERT loads its vocabulary under a bar (82/82 at 847,125 it/s), then trains in
    # lines with no step of their own: the run stopped at epoch 19 of 32, not at 82/82.
    artifact = verdict_of(tmp_path, _kbert(19))
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["target_steps"] is None


def test_an_epoch_bar_is_still_the_training(tmp_path: Path):
    # The same shape with a bar drawn for every epoch: the bars count the epochs' batches.
    lines = []
    for epoch in range(1, 4):
        lines.append("100%|██████████| 349/349 [00:03<00:00, 91.06it/s]")
        lines.append(f"Epoch {epoch}, loss {1.0 / epoch:.4f}")
    records = _records(lines)
    assert max(r.step or 0 for r in records) > 349


# -- An epoch's footer, and the bars of the epochs it closes -----------------------------------


def test_an_epochs_footer_makes_its_bar_one_epochs(tmp_path: Path):
    # Avalanche prints each epoch's bar at its end, then `Epoch N ended.`, then the
    # epoch's figures: the same 349/349 three times is three epochs, not a run finished.
    lines = []
    for epoch in range(3):
        lines.append(f"100%|██████████| 349/349 [00:03<00:00, {91 + epoch}.06it/s]")
        lines.append(f"Epoch {epoch} ended.")
        lines.append(f"\tTop1_Acc_Epoch/train_phase/train_stream/Task003 = 0.89{epoch}6")
        lines.append(f"\tTop1_Acc_MB/train_phase/train_stream/Task003 = 0.8{epoch}13")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"


# -- A continual learner's tasks: each a loss of its own level ---------------------------------


def test_a_continual_learners_tasks_are_judged_each_on_its_own(tmp_path: Path):
    # One epoch per task, twenty tasks of five new classes each: the loss of each task's
    # epoch sits near ln 5 however well the run learns (sealed-108).
    lines = []
    for task in range(20):
        lines.append(f" Task {task + 1}/20  | Classes ({task * 5}, {task * 5 + 5})")
        loss = 1.45 + 0.1 * math.sin(task)
        lines.append(f"[03:01:15] task={task}  epoch=0  train_loss={loss:.4f}")
        lines.append(f"[03:01:19] task={task}  epoch=END  time_sec=3.8  acc_task{task}=52.6")
    lines.append("Done - run: split_cifar100_joint_training_seed42")
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]


# -- After training: the next program failing as it starts -------------------------------------


_IMPORT_FAILURE = [
    "Evaluate original-trained NLLB on original test hsb-de",
    "Traceback (most recent call last):",
    '  File "/home/u/CODE/evaluate_extended_nllb_baseline.py", line 5, in <module>',
    "    from sacrebleu import corpus_bleu, corpus_chrf",
    '  File "/home/u/.local/lib/python3.10/site-packages/sacrebleu/__init__.py", line 21, '
    "in <module>",
    "    from .compat import (",
    '  File "/home/u/.local/lib/python3.10/site-packages/sacrebleu/utils.py", line 16, in '
    "<module>",
    "    import colorama",
    "ModuleNotFoundError: No module named 'colorama'",
    "Done."]


def _hf_finished() -> list[str]:
    lines = [f"{{'loss': '{4.5 - i * 0.01:.3f}', 'grad_norm': '8.6', 'learning_rate': "
             f"'{1e-5 * (1 - i / 100):.3e}', 'epoch': '{i * 0.05:.3f}'}}" for i in range(1, 100)]
    return [*lines,
            "{'train_runtime': '3710', 'train_samples_per_second': '21.85', "
            "'train_steps_per_second': '1.366', 'train_loss': '5.332', 'epoch': '5'}",
            "", "Saving fine-tuned model and tokenizer...",
            "Saved to: /home/u/models/nllb-600M-hsb-de-finetuned"]


def test_a_program_failing_at_its_imports_after_training_is_the_next_steps_failure(
        tmp_path: Path):
    artifact = verdict_of(tmp_path, [*_hf_finished(), *_IMPORT_FAILURE])
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "CONDITIONAL"
    kinds = {a["type"] for a in artifact["anomalies_detected"]}
    assert "crash" in kinds and "checkpoint-failure" not in kinds


def test_a_failure_in_the_training_script_after_its_summary_is_still_a_failure(
        tmp_path: Path):
    failure = ["Traceback (most recent call last):",
               '  File "train.py", line 300, in <module>', "    main()",
               '  File "train.py", line 290, in main', "    evaluate(model, test)",
               "TypeError: evaluate() missing 1 required positional argument: 'task'"]
    artifact = verdict_of(tmp_path, [*_hf_finished()[:-3], *failure])
    assert artifact["terminal_state"] == "FAILED"


# -- A paste cut inside the stack --------------------------------------------------------------


def test_a_stack_from_the_top_level_cut_before_its_exception_is_a_crash(tmp_path: Path):
    # A 3DUnetCNN issue paste: two steps of epoch 4, then the frames from `<module>` down,
    # the exception line lost.
    lines = [f"Epoch: [{e}][{i:3d}/296]\tTime  1.281 ( 1.281)\tLoss {0.3 - e * 0.01:.4e} "
             f"({0.3:.4e})" for e in range(1, 5) for i in range(1, 4)]
    lines += ['File "/home/u/3DUnetCNN/unet3d/scripts/train.py", line 177, in <module>',
              "    main()",
              '  File "/home/u/3DUnetCNN/unet3d/scripts/train.py", line 173, in main',
              "    run(config_filename, output_dir, namespace)",
              '  File "/home/u/3DUnetCNN/unet3d/train/train.py", line 55, in run_training',
              "    losses.append(epoch_training(training_loader, model, criterion,"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "FAILED"


def test_a_few_frames_alone_are_no_crash(tmp_path: Path):
    lines = [f"step {i} loss {1.0 / i:.4f}" for i in range(1, 30)]
    lines += ['  File "/usr/lib/python3/warnings.py", line 10, in warn', "    x()"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"


# -- A word value before the next field --------------------------------------------------------


def test_a_word_value_is_not_part_of_the_next_fields_name():
    records = _records(["[TRAIN] epoch=001 dataset=Etth1 iteration=001 loss=31.638554 "
                        "pair_acc=0.4889"])
    assert records[-1].step == 1 and set(records[-1].metrics) == {"loss", "pair_acc"}


# -- A figure given with its spread sums up the folds --------------------------------------------


def test_a_figure_with_its_spread_after_the_folds_closes_the_run(tmp_path: Path):
    # A 5-fold run's `=== Cross-Validation Results ===` then `Acc: 0.779 ± 0.065`: a
    # summary over the folds, not more training (sealed-110).
    lines = []
    for fold in range(5):
        lines.append(f"===== Fold {fold} =====")
        for epoch in range(1, 9):
            lines.append(f"Epoch {epoch:02d}: Train: Loss {0.09 - epoch * 0.004:.4f}, Acc "
                         f"{0.6 + epoch * 0.03:.3f} |Val: Loss 0.0908, Acc 0.714, F1 0.833")
        lines.append(f"Test Results: Acc 0.750, F1 0.857, AUC 0.917 (fold {fold})")
    lines += ["", "=== Cross-Validation Results ===", "Acc: 0.779 ± 0.065",
              "F1: 0.854 ± 0.053", "AUC: 0.870 ± 0.074"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- The last of a planned number of folds, then its test ----------------------------------------


def test_the_last_planned_fold_then_its_test_is_the_runs_end(tmp_path: Path):
    # An HF-Trainer-style loop over three folds (`Running fold 0/2` … `2/2`), each ending
    # on its best model's save and a test evaluation.
    artifact = verdict_of(tmp_path, _public(
        "sealed-109", "hf_trainer_convnext_uveal_3fold_early_stop_test_eval_finished.log"))
    assert artifact["terminal_state"] == "SUCCEEDED"


# -- A sentence of ending said at every step, and Ctrl-C after it ---------------------------------


def test_ctrl_c_after_an_end_said_far_short_of_the_plan_is_a_cancel(tmp_path: Path):
    artifact = verdict_of(tmp_path, _public(
        "sealed-110", "tunix_grpo_openmath_tpu_6_of_20000_steps_keyboardinterrupt.log"))
    assert artifact["terminal_state"] == "CANCELLED"


# -- A loss that starts at exactly 0 --------------------------------------------------------------


def test_a_surrogate_loss_from_exactly_0_rising_by_millionths_is_no_divergence(tmp_path: Path):
    # Tunix GRPO's `training loss: 0.000000`, then 0.000013 by step 8: a KL to the
    # reference model growing from 0, not a run undoing itself.
    values = [0, 0, 1e-6, 1e-6, 4e-6, 1.1e-5, 1e-5, 1.3e-5, 1.6e-5, 2e-5]
    lines = [f"step {i + 1}/20000 loss {v:.6f}" for i, v in enumerate(values)]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "divergence"]


# -- A tracker's sparkline beside a log of every step ---------------------------------------------


def test_a_noisy_loss_printed_every_step_is_not_judged_by_its_sparkline(tmp_path: Path):
    # A diffusion model's per-step loss varies twentyfold with the sampled timestep; W&B's
    # closing sparkline of it wanders over its whole height.
    import random

    rng = random.Random(4)
    lines = [f"Steps: {s}/800 [00:{s % 60:02d}<00:00, 0.22it/s, "
             f"loss={rng.uniform(0.01, 0.25):.4f}, lr=0.0001]" for s in range(1, 801)]
    lines += ["wandb: Run history:", "wandb:   loss ▃▆█▆▅▂▅▆▅▇▇▅▃▇▆█▄▅▇▆▇▆▃▂▄▇█▅▄█▃▃▃▃▆▄▆▄▄▁",
              "wandb: Run summary:", "wandb:   loss 0.0712", "wandb: 🚀 View run at x"]
    artifact = verdict_of(tmp_path, lines)
    assert not [a for a in artifact["anomalies_detected"] if a["type"] == "not-learning"]


# -- A sliver of the gain given back at the end ---------------------------------------------------


def test_an_evaluation_a_sliver_below_its_best_at_the_end_is_a_notice(tmp_path: Path):
    # RotatE: validation MRR 0.0009 at step 0, 0.3236 at its best, 0.3196 at its end.
    mrrs = [0.000928, 0.302168, 0.321163, 0.323638, 0.323115, 0.320794, 0.320027, 0.319752,
            0.319577]
    lines = []
    for index, mrr in enumerate(mrrs):
        step = index * 10000
        lines += [f"Training average loss at step {step + k * 1000}: "
                  f"{0.2 / (1 + index + k / 10):.6f}" for k in range(10)]
        lines.append(f"Valid MRR at step {step}: {mrr:.6f}")
    lines.append("Test MRR at step 80000: 0.316377")
    artifact = verdict_of(tmp_path, lines)
    serious = [a for a in artifact["anomalies_detected"] if a["type"] == "eval-degradation"
               and a["severity"] in ("high", "blocker")]
    assert serious == []


# -- Data passes' bars before the training's ------------------------------------------------------


def test_data_passes_done_again_and_again_lend_no_laps_to_the_training_bar(tmp_path: Path):
    # kohya's caching passes (`240/240`, again and again), then `epoch 1/50` and the
    # training bar: step 219 of 60000, not 60219.
    artifact = verdict_of(tmp_path, _public(
        "sealed-109", "kohya_sdxl_lora_step219_of_60000_wrapper_done_ended.log"))
    assert artifact["total_steps"] == 219


# -- A launch that died in its start-up, then one that trained, then a third --------------------


def test_a_start_up_printed_again_after_the_last_epoch_is_a_new_launch(tmp_path: Path):
    # A dual encoder's log: `Namespace(… n_epochs=10 …)` and its HTTP checks, again with
    # `n_epochs=20` (the first launch died in its start-up), twenty epochs, then the
    # start-up a third time: that launch is the run now, and it has not trained.
    artifact = verdict_of(tmp_path, _public(
        "sealed-109", "python_logging_dual_encoder_ccpm_eval_acc_falls_20_of_20_epochs_then_"
        "relaunch.log"))
    assert artifact["terminal_state"] == "RUNNING"


# -- A policy gradient's loss of both signs beside the return --------------------------------------


def test_a_loss_of_both_signs_beside_a_return_is_a_surrogate_not_a_flat_loss(tmp_path: Path):
    # A hand-written TF1 REINFORCE agent on ViZDoom: its `Training Loss` wanders around 0,
    # either sign (-0.006, then 0.009); its return rises from about 1 to 5.
    artifact = verdict_of(tmp_path, _public(
        "sealed-111", "tf1_reinforce_vizdoom_defend_center_1000_epochs_reward_plateau.log"))
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] == "not-learning" and a["severity"] in ("high", "blocker")
                and not a.get("resolved")]


# -- An evaluation's wander while the training loss barely moves ---------------------------------


def test_a_rise_while_the_training_loss_barely_moves_is_no_over_fitting(tmp_path: Path):
    # A Keras U-Net whose learning rate had decayed to 1e-10 (sealed-112): val_loss
    # 0.1313 → 0.138 over six epochs while the training loss went 0.1431 → 0.1419.
    artifact = verdict_of(tmp_path, _public(
        "sealed-112", "keras_notebook_brain_tumor_seg_30_of_30_epochs_lr_decayed_to_1e-10_"
        "finished.log"))
    assert artifact["decision"] == "GO"


# -- A notebook cell's estimator repr, the log's unterminated last line ---------------------------


def test_an_estimators_repr_after_fit_on_the_unterminated_last_line_ends_the_run(
        tmp_path: Path):
    # XGBoost's 100 rounds in a notebook, then the cell's value, `XGBClassifier(objective=
    # 'multi:softprob')`, with no newline after it: read at the end in a read of its own,
    # after the loop was already seen over, it is still the cell returning.
    from dataclasses import replace

    from babysit.config import PollSettings, Settings
    from babysit.core.reports import NullObserver
    from babysit.core.session import run_session
    from babysit.targets.common.log_file import LocalLogTarget
    from tests.conftest import FakeClock, artifact_in

    log = tmp_path / "train.log"
    rows = [f"[{i}]\tvalidation_0-merror:0.33{i % 7}\tvalidation_0-mlogloss:"
            f"{1.05 - 0.0027 * i:.6f}" for i in range(100)]
    log.write_text("\n".join(rows) + "\nXGBClassifier(objective='multi:softprob')")
    run_session(lambda: LocalLogTarget(log), str(log), "local-log",
                Settings(poll=replace(PollSettings(), once=True), out_dir=tmp_path),
                NullObserver(), clock=FakeClock())
    assert artifact_in(tmp_path)["terminal_state"] == "SUCCEEDED"

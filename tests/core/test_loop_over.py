"""A run whose training loop is over with nothing said about how it went is ENDED, not
RUNNING and not SUCCEEDED (issue 23, item 4; babysit/parsing/loop_over.py): the learning
rate's schedule at its end, the count an earlier launch in the same log stopped at, a
first evaluation, samples or a save after the last training record, a job's epilog. And
a log that stops mid-run in the same shapes stays RUNNING.

The lines are the shapes of held-out logs in tests/fixtures/logs/public (named at each
test), rebuilt small."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.test_endings import once


def _verdict(data: dict) -> tuple[str, str]:
    return data["decision"], data["terminal_state"]


# --- the learning rate's schedule at its end -------------------------------------------


def _julia_reports(last_batch: int, every: int = 100, planned: int = 300000) -> str:
    # sealed-6/julia_scratch_mlp_mnist_report_blocks_batch_300000_alpha_zero.log: a
    # hand-written Julia loop, `alpha` decaying linearly to 0 at its last batch:
    # `REPORT` / `  Batch = 299900` / `  alpha = 3.3e-7` / `  Correct = 99.27%`.
    blocks = []
    for batch in range(every, last_batch + 1, every):
        alpha = round(0.001 * (1 - batch / planned), 10)
        blocks.append(f"REPORT\n  Batch = {batch}\n  alpha = {alpha}\n  Correct = 99.2%\n")
    return "\n".join(blocks)


def test_a_rate_decayed_to_exactly_zero_at_the_last_record_ended(tmp_path: Path):
    data = once(tmp_path, _julia_reports(3000, planned=3000))
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "learning rate reached 0" in data["summary"]
    assert [f["title"] for f in data["findings"]] == ["completion not confirmed"]


def test_a_rate_still_decaying_is_a_run_going_on(tmp_path: Path):
    assert _verdict(once(tmp_path, _julia_reports(2000, planned=3000))) == \
        ("CONDITIONAL", "RUNNING")


def _nanogpt_steps(first: int, last: int, max_steps: int = 19073) -> str:
    # sealed-3/build_nanogpt_124m_grad_accum_32_step_19072_hellaswag_no_end_line.log:
    # `step 19062 | loss: 3.017092 | lr 6.0000e-05 | norm: 0.3440 | dt: 4784.16ms |
    # tok/sec: 109588.33`, a cosine from 6e-4 down to min_lr = 6e-5 at max_steps.
    import math

    lines = []
    for step in range(first, last + 1):
        ratio = step / (max_steps - 1)
        lr = 6e-5 + 0.5 * (1 + math.cos(math.pi * ratio)) * (6e-4 - 6e-5)
        lines.append(f"step {step:5d} | loss: {3.05 + (step % 7) / 100:.6f} | lr {lr:.4e} | "
                     f"norm: 0.3100 | dt: 4785.00ms | tok/sec: 109560.00")
    return "\n".join(lines) + "\n"


def test_a_cosine_flattened_onto_its_floor_ended(tmp_path: Path):
    # (the log itself keeps its first 300 steps and its last 700, the middle cut out)
    data = once(tmp_path, _nanogpt_steps(100, 300) + _nanogpt_steps(18800, 19072))
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "floor" in data["summary"]


def test_a_cosine_short_of_its_floor_is_a_run_going_on(tmp_path: Path):
    text = _nanogpt_steps(100, 300) + _nanogpt_steps(15000, 15300)
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_a_stepped_schedule_held_at_its_level_is_a_run_going_on(tmp_path: Path):
    # A step decay (1e-3, then 1e-4 from step 300) lands on its level with a jump.
    text = "".join(f"step {s} | loss: {1.0 - s / 1000:.4f} | lr {1e-3 if s < 300 else 1e-4:.4e}\n"
                   for s in range(1, 400))
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


# --- launches appended in one log ------------------------------------------------------


def _tiny_llm_launch(epochs: int, loss: float) -> str:
    # sealed-4/tiny_llm_epoch_loss_lines_then_three_reruns_loss_0_speed_0_tok_s.log:
    # `Epoch 30, Loss 1.5934, Time 89.67s`, then launches appended with `Epoch 1, Loss
    # 0.0000, Time 0.00s, Speed 0.00 tok/s`, the epoch counter back at 1.
    return "".join(f"Epoch {e}, Loss {max(loss - e * 0.05, 0.3):.4f}, Time {e * 2.9:.2f}s, "
                   f"Speed 812.00 tok/s\n" for e in range(1, epochs + 1))


def test_the_latest_launch_at_the_count_an_earlier_one_stopped_at_ended(tmp_path: Path):
    data = once(tmp_path, _tiny_llm_launch(30, 3.8) + _tiny_llm_launch(30, 3.6))
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "earlier launch" in data["summary"]


def test_the_latest_launch_short_of_that_count_is_running(tmp_path: Path):
    data = once(tmp_path, _tiny_llm_launch(30, 3.8) + _tiny_llm_launch(17, 3.6))
    assert _verdict(data) == ("CONDITIONAL", "RUNNING")


def test_a_new_launch_after_a_finished_one_is_the_run_the_log_holds(tmp_path: Path):
    # The same script run twice into one log: the first launch prints the Hugging Face
    # Trainer's end-of-training summary, the second only its start-up so far.
    start = ("Loading config from configs/ppyolo.yaml\nUsing 1 GPU, seed 42\n"
             "Building model resnet50\n")
    first = start + "".join(f"{{'loss': {2.0 - i * 0.1:.4f}, 'learning_rate': 5e-05, "
                            f"'epoch': {i + 1}.0}}\n" for i in range(6))
    first += "{'train_runtime': 120.5, 'train_samples_per_second': 8.1, 'epoch': 6.0}\n"
    assert _verdict(once(tmp_path, first)) == ("GO", "SUCCEEDED")
    data = once(tmp_path, first + start)
    assert data["terminal_state"] == "RUNNING"


def test_a_second_script_with_the_same_configuration_is_no_new_launch(tmp_path: Path):
    # dev paddlerec_sign_ctr_epochs_20_then_infer_finished.log: `python -u trainer.py -m
    # config.yaml`, its training and its end, then `python -u infer.py -m config.yaml`,
    # which prints the same configuration banner.
    banner = "**************common.configs**********\n"
    text = ("$ python -u ../../tools/trainer.py -m config.yaml\n" + banner
            + "use_gpu: True, train_batch_size: 1024\n" + banner
            + "".join(f"{{'loss': {2.0 - i * 0.1:.4f}, 'learning_rate': 5e-05, "
                      f"'epoch': {i + 1}.0}}\n" for i in range(6))
            + "{'train_runtime': 120.5, 'train_samples_per_second': 8.1, 'epoch': 6.0}\n"
            + "$ python -u ../../tools/infer.py -m config.yaml\n" + banner
            + "use_gpu: True, infer_batch_size: 1024\n" + banner)
    assert _verdict(once(tmp_path, text)) == ("GO", "SUCCEEDED")


# --- what a finished loop prints once, after its last training record ------------------


def _bert_epochs(epochs: int) -> str:
    # sealed-2/bert_stock_direction_4_epochs_loss_at_ln2_val_acc_chance.log:
    # `Epoch 4: Average Training Loss = 0.6774892114793578`, then once
    # `Validation Accuracy: 0.5117851749720964`.
    return "cuda\n" + "".join(f"Epoch {e}: Average Training Loss = {0.70 - e * 0.01}\n"
                              for e in range(1, epochs + 1))


def test_an_evaluation_first_printed_after_the_last_epoch_ended(tmp_path: Path):
    data = once(tmp_path, _bert_epochs(4) + "Validation Accuracy: 0.5117851749720964\n")
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "Validation Accuracy" in data["summary"]


def test_an_evaluation_it_printed_after_every_epoch_is_no_end(tmp_path: Path):
    text = "".join(f"Epoch {e}: Average Training Loss = {0.70 - e * 0.01}\n"
                   f"Validation Accuracy: {0.5 + e / 100}\n" for e in range(1, 5))
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_the_first_evaluation_of_a_one_epoch_excerpt_is_no_end(tmp_path: Path):
    # sealed-6 flair_modeltrainer_epoch_iter_bad_epochs_4_running.log: `epoch 6 - iter
    # 1750/1750 - loss 0.12924214 - samples/sec: 70.89 - lr: 0.000032`, then the epoch's
    # `DEV : loss 0.1774 - f1-score (micro avg)  0.65`: an excerpt of one epoch cannot
    # tell a final evaluation from a periodic one.
    text = "".join(f"epoch 6 - iter {i}/1750 - loss 0.129 - samples/sec: 71.0 - lr: 0.000033\n"
                   for i in range(175, 1751, 175))
    text += "DEV : loss 0.17740997672080994 - f1-score (micro avg)  0.65\n"
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_samples_generated_once_after_the_last_epoch_ended(tmp_path: Path):
    data = once(tmp_path, _bert_epochs(5) + "Generating 16 images with the trained model\n")
    assert _verdict(data) == ("CONDITIONAL", "ENDED")


def test_a_save_it_made_every_epoch_is_no_end(tmp_path: Path):
    # sealed-5/titans_lm_epoch_loss_spikes_to_20_recovers_checkpoint_100.log saves every
    # 10 epochs (`Saving checkpoint at epoch 100` is one more of them).
    text = "".join(f"Epoch {e}: Average Training Loss = {0.70 - e * 0.01}\n"
                   f"Saving checkpoint at epoch {e}\n" for e in range(1, 6))
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_a_save_it_made_after_the_excerpts_first_epoch_is_no_end(tmp_path: Path):
    # sealed-13's DCRNN paste (epochs 22-25 of 100): a save when validation improved,
    # after the excerpt's first epoch and again after its last. The first one, seen
    # before the loop had a shape, still shows the save is periodic.
    def save(epoch: int) -> str:
        return (f"Val loss decrease from 2.78{epoch} to 2.77{epoch}, saving to "
                f"data/model/models-2.77{epoch}-{epoch * 375}\n")
    text = ""
    for epoch in range(22, 26):
        text += f"Epoch [{epoch}/100] ({epoch * 375}) train_mae: 1.96, val_mae: 2.78\n"
        text += save(epoch) if epoch in (22, 25) else ""
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_a_job_epilog_after_the_last_record_ended(tmp_path: Path):
    # sealed-6/trans4mom_gpu_prolog_epilog_two_jobs_train_loss_flat_or_rising.log:
    # `GPU Prolog Script v1.14` … `Epoch 199: Train Loss 0.1064`, `GPU Epilog Script v0.30`.
    text = ("GPU Prolog Script v1.14\nAllocating card 5\n"
            + "".join(f"Epoch {e}: Train Loss {0.5 - e * 0.01:.4f}\n" for e in range(20))
            + "GPU Epilog Script v0.30\n")
    data = once(tmp_path, text)
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "epilog" in data["summary"]


@pytest.mark.parametrize("report", [
    # bash's `time` (sealed-18's word2vec runs), GNU time, zsh's `time`
    "\nreal\t45m47.814s\nuser\t71m50.251s\nsys\t0m13.984s\n",
    "71.21user 0.42system 1:12.03elapsed 99%CPU (0avgtext+0avgdata 1234maxresident)k\n",
    "python train.py  12.34s user 1.23s system 99% cpu 13.45 total\n",
], ids=["bash", "gnu", "zsh"])
def test_the_shells_time_report_after_the_last_record_ended(tmp_path: Path, report: str):
    text = "".join(f"Epoch {e}: Train Loss {0.5 - e * 0.01:.4f}\n" for e in range(20)) + report
    data = once(tmp_path, text)
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "time the command took" in data["summary"]


def test_a_log_that_stops_after_a_record_is_still_running(tmp_path: Path):
    text = ("GPU Prolog Script v1.14\nAllocating card 5\n"
            + "".join(f"Epoch {e}: Train Loss {0.5 - e * 0.01:.4f}\n" for e in range(20)))
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_an_evaluation_after_records_within_one_epoch_is_no_end(tmp_path: Path):
    # Hugging Face's `'epoch': 0.37` moves at every record: no epoch end was trained past.
    text = "".join(f"{{'loss': {2.0 - i * 0.1:.2f}, 'learning_rate': 1e-05, "
                   f"'epoch': {0.1 * (i + 1):.2f}}}\n" for i in range(6))
    text += "{'eval_loss': 1.5, 'eval_runtime': 2.0, 'epoch': 0.6}\n"
    assert _verdict(once(tmp_path, text)) == ("CONDITIONAL", "RUNNING")


def test_a_new_launch_that_printed_only_its_start_up_is_running(tmp_path: Path):
    # The latest launch is the run: the first job's epilog is not the second job's end.
    job = ("GPU Prolog Script v1.14\nAllocating card 5\n"
           + "".join(f"Epoch {e}: Train Loss {0.5 - e * 0.01:.4f}\n" for e in range(20))
           + "GPU Epilog Script v0.30\n")
    assert _verdict(once(tmp_path, job + job)) == ("CONDITIONAL", "ENDED")
    start_only = job + "GPU Prolog Script v1.14\nAllocating card 1\n"
    assert _verdict(once(tmp_path, start_only)) == ("CONDITIONAL", "RUNNING")


def test_a_loop_seen_over_and_a_process_gone_without_its_status_ended():
    # Watching the process too: gone with no exit status babysit could see. The loop was
    # seen over (no success proven, nothing says it was killed): ENDED.
    from babysit.core.lifecycle import RunLifecycle
    from babysit.model import EventKind, LogEvent, TerminalState
    from babysit.parsing.loop_over import LOOP_OVER

    life = RunLifecycle()
    life.on_step(2990, 3000)
    life.on_event(LogEvent(EventKind.COMPLETED, "the learning rate reached 0", LOOP_OVER), 2990)
    ending = life.on_process_gone(None, None, 2990, 3000)
    assert ending is not None and ending.state is TerminalState.ENDED


# --- the loop stopped at a count a plan names (babysit/parsing/round_count.py) ---------


def _keras_csv(last_epoch: int) -> str:
    # sealed-5/keras_csvlogger_cnn_quant_val_loss_rises_from_epoch4_overfit.log: a Keras
    # CSVLogger file, `epoch,acc,loss,val_acc,val_loss` then one row an epoch from 0,
    # `99,0.8225408389504164,0.7049207878121199,0.5940803372582724,1.2853740609977513`.
    rows = ["epoch,acc,loss,val_acc,val_loss"]
    for epoch in range(last_epoch + 1):
        rows.append(f"{epoch},{0.52 + epoch / 400:.6f},{1.28 - epoch / 200:.6f},0.59,"
                    f"{1.3 - epoch / 1000:.6f}")
    return "\n".join(rows) + "\n"


def test_a_hundred_epochs_counted_from_zero_and_nothing_after_ended(tmp_path: Path):
    data = once(tmp_path, _keras_csv(99))
    assert _verdict(data) == ("CONDITIONAL", "ENDED")
    assert "a count a plan names" in data["summary"]
    assert [f["title"] for f in data["findings"]] == ["completion not confirmed"]


def test_an_epoch_count_nobody_plans_is_a_run_going_on(tmp_path: Path):
    assert _verdict(once(tmp_path, _keras_csv(136)))[1] == "RUNNING"


def _titans(last: int, save_every: int = 10) -> str:
    # sealed-5/titans_lm_epoch_loss_spikes_to_20_recovers_checkpoint_100.log: `2025-02-22
    # 12:59:40,212 - titans_training - INFO - Epoch 99: {'loss': 0.894927442073822}`, and
    # `... - Saving checkpoint at epoch 100` every 10 epochs.
    lines = []
    for epoch in range(last + 1):
        lines.append(f"2025-02-22 12:59:40,212 - titans_training - INFO - Epoch {epoch}: "
                     f"{{'loss': {1.2 - epoch / 500:.6f}}}")
        if (epoch + 1) % save_every == 0:
            lines.append(f"2025-02-22 12:59:40,213 - titans_training - INFO - Saving "
                         f"checkpoint at epoch {epoch + 1}")
    return "\n".join(lines) + "\n"


def test_an_epoch_counter_at_a_round_count_then_its_save_ended(tmp_path: Path):
    data = once(tmp_path, _titans(99))
    assert data["terminal_state"] == "ENDED"


def test_the_same_counter_short_of_a_round_count_is_running(tmp_path: Path):
    assert once(tmp_path, _titans(87))["terminal_state"] == "RUNNING"


def test_work_under_way_at_the_last_line_is_a_run_going_on(tmp_path: Path):
    # simg_gat_wandb_sweep_loss_lines_overfit_running.log ends at its 1000th epoch with
    # `Evaluating...`: the process is in the middle of something.
    assert once(tmp_path, _keras_csv(99) + "Evaluating...\n")["terminal_state"] == "RUNNING"


def test_a_step_counter_at_a_round_count_is_no_evidence(tmp_path: Path):
    # sealed-2/tf1_cifar10_adversarial_regularizer_global_step_10000_test_acc_plateau.log
    # stops at `Global Step:  10000` (printed every 10) and a reader calls it running.
    lines = [f"Global Step: {step:6d}, accuracy:  94.9%, loss = 0.25 (615.3 examples/sec, "
             f"0.21 sec/batch)" for step in range(10, 10001, 10)]
    assert once(tmp_path, "\n".join(lines) + "\n")["terminal_state"] == "RUNNING"


# --- a launch appended after the last planned epoch (babysit/parsing/final_epoch.py) ----


def _paddleclas(epochs: int = 4, per_epoch: int = 3) -> str:
    # sealed-4/paddleclas_cait_resumed_400_epochs_then_new_launch_config_only.log:
    # `[2022/10/08 07:49:16] ppcls INFO: [Train][Epoch 400/400][Avg]CELoss: 4.58527, …`,
    # the eval, `Already save model in ./output_/cait_xxs_24/epoch_400`, and then the
    # program's start-up (a banner and its configuration) printed again at 16:28.
    start = ["[2022/10/08 04:31:53] ppcls INFO: ",
             "== PaddleClas is powered by PaddlePaddle ! ==",
             "[2022/10/08 04:31:53] ppcls INFO: Arch : ",
             "[2022/10/08 04:31:53] ppcls INFO:     name : CaiT_XXS_24",
             "[2022/10/08 04:31:53] ppcls INFO: train with paddle 2.3.2 and device Place(gpu:0)"]
    lines = list(start)
    for epoch in range(1, epochs + 1):
        for it in range(per_epoch):
            lines.append(f"[2022/10/08 07:49:0{it}] ppcls INFO: [Train][Epoch {epoch}/{epochs}]"
                         f"[Iter: {it * 10}/97]lr(LinearWarmup): 0.00032529, CELoss: "
                         f"{4.8 - epoch / 10:.5f}, loss: {4.8 - epoch / 10:.5f}, batch_cost: "
                         f"0.48670s")
        lines.append(f"[2022/10/08 07:49:38] ppcls INFO: [Eval][Epoch {epoch}][Avg]CELoss: "
                     f"3.20188, loss: 3.20188, top1: 0.36560, top5: 0.60540")
        lines.append(f"[2022/10/08 07:49:39] ppcls INFO: Already save model in "
                     f"./output_/cait_xxs_24/epoch_{epoch}")
    return "\n".join(lines) + "\n", "\n".join(start) + "\n"


def test_the_last_planned_epoch_then_nothing_more_succeeded(tmp_path: Path):
    body, _ = _paddleclas()
    assert once(tmp_path, body)["terminal_state"] == "SUCCEEDED"


def test_a_launch_appended_after_the_last_planned_epoch_is_running(tmp_path: Path):
    body, start = _paddleclas()
    data = once(tmp_path, body + start)
    assert data["terminal_state"] == "RUNNING"
    assert data["decision"] == "CONDITIONAL"


def test_a_round_count_short_of_the_plan_the_run_named_is_running(tmp_path: Path):
    # Keras `verbose=2`: `Epoch 100/200` then `469/469 - 3s - loss: 0.6667 - …`: the plan
    # decides, and 100 of 200 is half way.
    lines = []
    for epoch in range(1, 101):
        lines += [f"Epoch {epoch}/200", f"469/469 - 3s - loss: {1 - epoch / 300:.4f} - "
                  f"accuracy: 0.9000 - val_loss: 0.3000 - val_accuracy: 0.9000"]
    assert once(tmp_path, "\n".join(lines) + "\n")["terminal_state"] == "RUNNING"


def test_the_shells_prompt_after_a_ctrl_c_traceback_is_still_a_cancel(tmp_path: Path):
    # sealed-19's ezGO policy net: `^CTraceback (most recent call last):` … `KeyboardInterrupt`,
    # then the prompt the shell gave back (`rob@ubuntu1404:~/ezGO$ `): the prompt says the
    # process is over, the traceback how
    text = "".join(f"{b} batches ran. loss {1 / b:.4f}\n" for b in range(1, 30))
    text += ('^CTraceback (most recent call last):\n  File "training/train.py", line 63, in '
             '<module>\n    network.train(batch)\nKeyboardInterrupt\nrob@ubuntu1404:~/ezGO$ \n')
    assert _verdict(once(tmp_path, text)) == ("NO-GO", "CANCELLED")

"""The run's own sentence that training is over, in the many ways scripts say it
(issue 23, point 4): a verb of ending and what ended, in either order, in several
languages; not a part of the run, a negation or a condition."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.parsing.completion_words import says_finished, says_plan_reached
from tests.rules.test_loss_rules import verdict_of


@pytest.mark.parametrize("line", [
    "Training COMPLETE",
    "INFO 2026-01-02 12:00:00 train.py:88 End of training",
    "I0101 12:00:00.1 utils.py:306] [trainer] training loop finished.",
    "2024-05-01 10:00:00,000 - INFO: Finish training: best accuracy 0.91 in epoch 99.",
    "End training....",
    "[03/04 10:11:12] Training completed in 2:03:04",
    "== Fine-tuning has been completed successfully ==",
    "optimization done",
    "Done training after 120 steps",
    "job: the whole process completed successfully",
    "训练完成，模型已保存",
    # the task or process between, and how it ended: `the pretraining task ended in full`
    "2026-05-12 13:33:13,907 - INFO - ✅ 预训练任务圆满结束 (总耗时: 1.46 小时)",
    "训练过程已经顺利完成",
    "微调训练任务成功结束",
    "Training abgeschlossen nach 20 Epochen",
    "Обучение завершено",
    "✅ Training completed in 3 days, 17:44:15",
    # how much the run did, and that it is done
    "I | 06-14 13:55:16 |  train   | Done 10000 train steps.",
    "274 epochs completed in 35.859 hours.",
    "Finished 50 epochs",
    "Completed 5,000 iterations in 2:03:04",
    "12000 training steps have been completed",
    # the experiment's repeated runs, folds or seeds all done (sealed-18's GNN benchmark)
    "Finished 10 runs.", "All 5 folds completed", "10 seeds done",
    # the line opens on the ending and where the loop stood (sealed-19's CartPole), or on
    # an RL task solved (pytorch/examples' REINFORCE)
    "Completed at episode:  109", "Done after 5000 steps",
    "Solved! Running reward is now 195.3 and the last episode runs to 200 time steps!",
    "Environment solved at episode 109",
    # a tag in brackets names what ended
    "[train] done. best_val=2.3918  ckpt=/runs/ckpt.pt",
    "(training) finished",
    "train success",  # MindSpore's model zoo (sealed-15)
    "Training successful!",
    # a cross-validation, the training of all its folds (sealed-50's MONAI LOOCV)
    "  LOOCV complete in 2.37h", "Cross-validation finished", "5-fold CV done",
])
def test_a_sentence_that_training_is_over(line: str):
    assert says_finished(line)


@pytest.mark.parametrize("line", [
    "Training epoch 3 done",  # a part of the run
    "Finished training epoch 3/10",
    "Fold 2 training complete",
    "Epoch [3/10] training done",
    "Training done for stage 1",
    "Training finished: epoch 3/10",
    "training is not done yet",  # a negation, a condition, a plan
    "waiting until training is done",
    "evaluate when training completes",
    "after training finishes, run the test set",
    "Training ends at step 1000",
    "training_done: false",  # a setting
    "Averaged over training set: 0.31",
    "Training completion: 45%",
    "Preprocessing completed successfully",
    "Epoch 3: done 100 steps",  # a part of the run, a part-way count
    "done 100/1000 steps",
    "[eval] done.",  # an evaluation's end, not training's
    "loaded 5000 steps from the checkpoint",
    "[train] iter 10 done",
    "not done 10 steps yet",
    "训练任务开始",  # the task began
    "第3轮训练完成",  # a round of the run (`round 3 training done`)
    "training success rate: 0.5",  # a measure of it (an RL run's)
    "train success: 0.5",
    "Train success 12/20",
    "Evaluation completed at step 500",  # an evaluation's, not the line's own end
    "finished after epoch 3 of 10", "finished at epoch 3/10",  # part-way
    "Finished at 10:32", "Completed at 50%", "Solved 3 of 10 puzzles",
    "Fold 2 CV done", "cv completed for fold 3", "CV score: 0.81",  # a fold's, a score
])
def test_no_sentence_that_training_is_over(line: str):
    assert not says_finished(line)


@pytest.mark.parametrize("line", [
    "`Trainer.fit` stopped: `max_epochs=60` reached.",
    "Reached max_steps, stopping training",
    "reached the maximum number of iterations",
    # its own time budget
    "stopping_early: wallclock_cap train_time:599635ms step:6130/20000",
    "Wall-clock budget reached, stopping training at step 4100",
    "INFO: Reached the max wallclock time (3600 s); saving and exiting",
    "Time limit reached. Elapsed time is 1:00:00. Signaling Trainer to stop.",
    # its own time flag, named as the command line gave it
    "reached --max-seconds 600, stopping",
    "Reached max_time 02:00:00; saving final checkpoint",
    "reached the --max-hours budget (6), exiting",
])
def test_the_run_says_it_reached_its_plan(line: str):
    assert says_plan_reached(line)


def _steps(last: int, every: int = 10) -> list[str]:
    return [f"step {s} loss {2.0 / (1 + s / 100):.4f}" for s in range(every, last + 1, every)]


@pytest.mark.parametrize("closing", [
    "Training COMPLETE", "End of training", "[runner] training loop finished.",
    "训练结束",
])
def test_a_finished_run_is_succeeded(tmp_path: Path, closing: str):
    verdict = verdict_of(tmp_path, [*_steps(500), closing])
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_sentence_the_run_prints_every_epoch_is_no_end(tmp_path: Path):
    lines = []
    for epoch in range(1, 4):
        lines += [*_steps(300 * epoch)[-30:], f"epoch {epoch}: training done"]
    lines.append("step 910 loss 0.5000")
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_a_sentence_well_short_of_the_plan_is_no_success(tmp_path: Path):
    verdict = verdict_of(tmp_path, ["max_steps=100000", *_steps(500), "Training is done"])
    assert verdict["terminal_state"] != "SUCCEEDED" and verdict["decision"] != "GO"


@pytest.mark.parametrize("line", [
    "slurmstepd: error: *** JOB 123 ON gpu01 CANCELLED AT 2024-01-01T00:00:00 "
    "DUE TO TIME LIMIT ***",
    "=>> PBS: job killed: walltime 3600 exceeded limit 3600",
    "Job wallclock limit reached",
    "max_wallclock_seconds:600.000",
    "max_steps=20000",
    # the flag set, not reached
    "args: --max-seconds 19800 --lr 1e-4",
    "max_time has not been reached yet",
])
def test_no_plan_reached_in_a_kill_or_a_setting(line: str):
    assert not says_plan_reached(line)


def test_the_plan_reached_in_the_frameworks_words_ends_the_run(tmp_path: Path):
    # Lightning counts its own plan; babysit's reckoning of the steps may say more.
    lines = ["max_steps=20000", *_steps(7440, 40),
             "`Trainer.fit` stopped: `max_epochs=6000` reached."]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"


def test_a_known_completion_line_printed_every_epoch_ends_a_stage(tmp_path: Path):
    lines = []
    for epoch in range(1, 4):
        lines += [*_steps(100 * epoch)[-10:], f"Training done for epoch {epoch}"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_a_count_of_the_steps_done_ends_a_run_without_a_plan(tmp_path: Path):
    lines = [*_steps(990), "Saving checkpoint ckpt_000999.npz", "Done 1000 train steps."]
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_count_done_before_training_goes_on_is_a_stage(tmp_path: Path):
    # `Done 1000 pretrain steps.`, then the training proper
    lines = [*_steps(100), "Done 100 pretrain steps.", *_steps(200)[10:]]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_a_run_that_stops_at_its_own_time_budget_is_succeeded(tmp_path: Path):
    # the plan was the time it was given, not the iterations it names
    lines = ["iterations:20000 max_wallclock_seconds:600.000", *_steps(6130, 10),
             "stopping_early: wallclock_cap train_time:599635ms step:6130/20000",
             "final_eval val_loss:2.7345 val_bpb:1.1736"]
    verdict = verdict_of(tmp_path, lines)
    assert (verdict["decision"], verdict["terminal_state"]) == ("GO", "SUCCEEDED")


def test_a_scheduler_time_limit_is_no_success(tmp_path: Path):
    lines = ["max_steps=20000", *_steps(6130, 10),
             "slurmstepd: error: *** JOB 9 ON gpu01 CANCELLED AT 2024-01-01T00:00:00 "
             "DUE TO TIME LIMIT ***"]
    assert verdict_of(tmp_path, lines)["terminal_state"] != "SUCCEEDED"


def test_a_script_stopping_at_its_own_time_flag_is_a_finished_run(tmp_path: Path):
    # A hand-written loop with a `--max-seconds` budget: per-step lines, then `reached
    # --max-seconds N, stopping` and its final save (sealed-15's learned image codec).
    lines = [*_steps(600), "reached --max-seconds 600, stopping",
             "saved checkpoints/base.pt (epoch 3, step 604)"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "SUCCEEDED"

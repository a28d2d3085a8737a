"""Shapes read and judgements made since the seventeenth session, each on lines written
in the real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from babysit.parsing.spaced_fields import parse_spaced_fields
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]) -> list[tuple]:
    return [(r.step, r.target_steps, dict(r.metrics)) for r in LogParser().feed_lines(lines)]


def _bracketed(steps: int) -> list[str]:
    # A hand-written loop's logger: the counter bracketed with its name, then fields.
    lines = ["[07:55:57] [INFO] logger ready",
             "[08:01:49] [INFO] ========[ TRAINING START ]========  (2025-10-21 08:01:49)"]
    for i in range(1, steps + 1):
        lines.append(f"[08:{i % 60:02d}:18] [INFO] [Step {500 * i:>6}/159210] "
                     f"Train {9.68 - i / 400:.4f} | Val~20% {9.679 - i / 350:.4f}")
    return lines


def test_a_counter_bracketed_with_its_name_leads_its_fields():
    got = parse_spaced_fields("[Step    500/159210] Train 9.6801 | Val~20% 9.6793",
                              known_names=False)
    assert got is not None
    assert (got.step, got.target, dict(got.metrics)) == \
        (500, 159210, {"train": 9.6801, "val~20%": 9.6793})
    # an unnamed bracket is no such counter, and a name in brackets must close them
    assert parse_spaced_fields("[Step 500/159210 Train 9.68 | Val 9.67", known_names=False) \
        is None


def test_a_bracketed_loop_is_read_as_progress(tmp_path: Path):
    records = _records(_bracketed(6))
    assert [r[:2] for r in records] == [(1000, 159210), (1500, 159210), (2000, 159210),
                                        (2500, 159210), (3000, 159210)]
    data = verdict_of(tmp_path, _bracketed(6))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert "no training progress" not in data["summary"]


def _sb3_sac(dumps: int, reward: str) -> list[str]:
    # Stable-baselines3's table for an off-policy learner, then the script's own lines.
    lines = ["Using cuda device", "Wrapping the env with a `Monitor` wrapper",
             "Logging to results/humanoid/tensorboard/SAC_5"]
    for i in range(1, dumps + 1):
        lines += ["---------------------------------",
                  "| rollout/           |          |",
                  "|    ep_len_mean     | 100      |",
                  f"|    ep_rew_mean     | {reward:<8} |",
                  "| time/              |          |",
                  f"|    episodes        | {10 * i:<8} |",
                  "|    fps             | 42       |",
                  f"|    time_elapsed    | {23 * i:<8} |",
                  f"|    total_timesteps | {1000 * i:<8} |",
                  "---------------------------------"]
    return [*lines, "  Training complete in 0.1 hours",
            "  Saved final model to results/humanoid/checkpoints/final_model"]


def test_an_episode_reward_of_exactly_0_over_a_whole_finished_run_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _sb3_sac(10, "0"))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "ep_rew_mean" in data["summary"]
    # a reward that moves is no such finding
    moving = _sb3_sac(10, "0")
    moving = [line.replace("| 0        |", f"| {i % 7 - 3:<8} |") if "ep_rew_mean" in line
              else line for i, line in enumerate(moving)]
    data = verdict_of(tmp_path, moving)
    assert "not-learning" not in data["summary"], data["summary"]


def _lightning_test(kappa: str) -> list[str]:
    lines = ["GPU available: True (cuda), used: True",
             "  | Name  | Type           | Params",
             "0 | model | BIOTClassifier | 3.2 M"]
    for epoch in range(6):
        lines.append(f"Epoch {epoch}: 100%|██████████| 13/13 [00:04<00:00,  2.84it/s, "
                     f"loss={1.41 - epoch / 500:.3g}, v_num=0]")
    lines += ["`Trainer.fit` stopped: `max_epochs=6` reached.",
              "Restoring states from the checkpoint path at ./best-epoch=00.ckpt",
              f"{{'test_acc': 0.2409638613462448, 'test_cohen': {kappa}, "
              f"'test_f1': 0.09357819706201553}}"]
    return lines


def test_a_final_test_s_chance_corrected_agreement_of_exactly_0_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _lightning_test("0.0"))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "test_cohen" in data["summary"]
    data = verdict_of(tmp_path, _lightning_test("0.31"))
    assert "test_cohen" not in data["summary"], data["summary"]


def _trainer_stdout_after_an_evaluation_bar(records: int) -> list[str]:
    # The Trainer's stdout in a notebook: an evaluation before training draws its bar to
    # the end (`100% 31/31`), then the loss dicts come with no bar of their own.
    lines = ["warmup_steps=50,", "weight_decay=0.0,", ")",
             "100% 31/31 [00:08<00:00,  3.90it/s]{'mr': 1460.93, 'mrr': 0.00435, "
             "'hits@1': 0.0, 'hits@10': 0.00926}",
             "100% 31/31 [00:08<00:00,  3.76it/s]"]
    for i in range(1, records + 1):
        lines.append(f"{{'loss': {0.6931 + (-1) ** i * 0.002:.4f}, 'grad_norm': 0.07, "
                     f"'learning_rate': 0.001, 'epoch': {i * 5 / (records + 2):.2f}}}")
    return [*lines, "{'train_runtime': 895.934, 'train_samples_per_second': 23.69, "
            "'train_steps_per_second': 1.484, 'train_loss': 0.6904, 'epoch': 5.0}"]


def test_an_evaluation_bar_before_the_trainer_s_records_counts_no_training_step(
        tmp_path: Path):
    records = _records(_trainer_stdout_after_an_evaluation_bar(30))
    steps = [step for step, _, m in records if "loss" in m]
    assert steps == sorted(set(steps)) and len(steps) == 30, steps  # the records count
    data = verdict_of(tmp_path, _trainer_stdout_after_an_evaluation_bar(30))
    # a loss at ln 2 from its first record to the end: the model never learned
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "not-learning" in data["summary"]


def _one_epoch(val: str) -> list[str]:
    # A hand-written loop's one planned epoch, its bar and its two summary lines.
    return ["Device: cpu", "Parameters: 14,369,538", "Epoch 01/1",
            "  train: 100%|██████████| 211/211 [05:02<00:00,  1.43s/it]",
            "  Train  loss=0.7598  acc=0.5269", f"  Val    {val}",
            "Training done. Best val acc: 0.5000"]


def test_a_finished_run_whose_evaluation_scores_exactly_a_guess_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, _one_epoch("loss=0.8240  acc=0.5000"))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert "exactly 1/2" in data["summary"]
    # a loss below ln 2 beside it learned something; an accuracy off 1/2 likewise
    for val in ("loss=0.6120  acc=0.5000", "loss=0.8240  acc=0.5125"):
        data = verdict_of(tmp_path, _one_epoch(val))
        assert "exactly 1/2" not in data["summary"], data["summary"]

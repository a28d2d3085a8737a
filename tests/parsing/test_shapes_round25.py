"""Shapes read and judged since the twenty-fifth session, each on lines written in the
real shape of a public log (sealed-55 and the sets before it)."""

from __future__ import annotations

import random
from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.parsing.records import metric_records as _records
from tests.rules.test_loss_rules import verdict_of


def _darcy(epochs: int, last: int) -> list[str]:
    # A neural-operator run: its configuration as `key: value` lines, then one line per
    # epoch under names no format knows, counted from 0.
    lines = ["--train--", "base_lr: 0.001", "weight_decay: 0.0001", f"epochs: {epochs}",
             "scheduler: OneCycleLR", "--Start Training--"]
    lines += [f"Epoch: {e}  Train rel: {0.16 / (e + 1):.6f}  Test rel: {0.08 / (e + 1) ** 0.5:.6f}"
              f"  Time: 11.1" for e in range(last + 1)]
    return lines


def test_a_templates_first_line_is_its_first_record():
    # The first `Epoch: 0` line, read as none when it came (nothing said it was a metric
    # line yet), is a record once the second shows its template.
    read = [r for r in _records(_darcy(40, 5)) if "train_rel" in r.metrics]
    assert [r.epoch for r in read] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert read[0].metrics["train_rel"] == 0.16


def test_a_run_counting_epochs_from_0_reaches_its_plan(tmp_path: Path):
    finished = verdict_of(tmp_path, _darcy(40, 39))
    assert (finished["terminal_state"], finished["decision"]) == ("SUCCEEDED", "GO")


def test_one_epoch_short_of_the_plan_is_still_running(tmp_path: Path):
    cut = verdict_of(tmp_path, _darcy(40, 38))
    assert cut["terminal_state"] == "RUNNING"


def test_an_earlier_line_goes_back_only_where_it_was_printed():
    # nanochat: `Step 00000 | Validation bpb: 3.32` before training, the same template
    # again at step 20: that first line is no record to add after step 19's.
    lines = ["Step 00000 | Validation bpb: 3.3300"]
    lines += [f"step {s:05d}/00020 ({s * 5:.2f}%) | loss: {10.4 - s / 100:.6f} | dt: 38.87ms"
              for s in range(20)]
    lines.append("Step 00020 | Validation bpb: 3.3247")
    steps = [r.step for r in _records(lines) if r.step is not None]
    assert steps == sorted(steps)


def test_a_progress_lines_iters_is_no_plan(tmp_path: Path):
    # pix2pix / CycleGAN: `(epoch: 1, iters: 1, time: 3.252) D_A: 1.537 …` counts; the
    # run that printed only that line, again and again on each relaunch, finished nothing.
    lines = []
    for _ in range(9):
        lines += ["================ Training Loss (Fri Dec  1 07:13:56 2017) ================",
                  "(epoch: 1 , iters: 1   , time: 3.252) D_A: 1.537 G_A: 2.341 Cyc_A: 6.165 "
                  "D_B: 1.288 G_B: 1.555 Cyc_B: 6.172 idt_A: 3.095 idt_B: 3.067 ", ""]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] != "SUCCEEDED"
    assert artifact["decision"] != "GO"
    parser = LogParser()
    parser.feed_lines(["iters: 1000"])
    assert parser.plan.announced == 1000


def test_dlrm_counts_its_iterations_as_it(tmp_path: Path):
    # facebookresearch/dlrm: `Finished training it 1000/19186 of epoch 0, …, loss 0.534`,
    # then a test, a save and the total time.
    lines = ["time/loss/accuracy (if enabled):"]
    for it in range(1000, 19186, 1000):
        lines += [f"Finished training it {it}/19186 of epoch 0, -1.00 ms/it, loss "
                  f"{0.55 - it / 1e6:.6f}",
                  "Embedding lookup time: 1.68 ms, MLP time: 1.87 ms, interaction time: 2.63 ms ",
                  "Running dlrm: 4.97 ms, backpropagation after dlrm: 12.65 ms, backpass: 8.01 ms"]
    lines += ["Finished training it 19186/19186 of epoch 0, -1.00 ms/it, loss 0.474420",
              "Testing at - 19186/19186 of epoch 0,", " accuracy 76.741 %, best 76.741 %",
              "Saving model to ./models/dlrm_kaggle_1epoch_new.pt", "The total time is 1005.38"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    assert artifact["total_steps"] == 19186


def _notebook_epochs(valid_losses: list[float], accuracies: list[float]) -> list[str]:
    # A Colab notebook's loop: `[Epoch N/10]`, then a `train:` and a `valid:` block of
    # indented `name: value` lines.
    lines: list[str] = []
    epochs = len(valid_losses)
    for epoch, (loss, accuracy) in enumerate(zip(valid_losses, accuracies, strict=True), 1):
        lines += [f"[2020-09-18 11:3{epoch % 10}:29]", f"[Epoch {epoch}/{epochs}]", "train:",
                  f"      loss: {1.5 / epoch:.4f}", "valid:", f"      loss: {loss:.4f}",
                  f"  accuracy: {accuracy:.4f}", ""]
    return lines


def test_a_split_label_names_the_figures_under_it():
    read = _records(_notebook_epochs([1.3, 1.2, 1.1], [0.52, 0.58, 0.61]))
    assert [r.metrics for r in read[:3]] == [
        {"loss": 1.5}, {"valid/loss": 1.3}, {"valid/accuracy": 0.52}]
    assert {r.epoch for r in read} == {1.0, 2.0, 3.0}


def test_a_fine_tune_that_settled_far_above_its_start_diverged(tmp_path: Path):
    # DeepSpeed Ulysses: `Iteration 0: loss=3.7528`, then 11.7, 15.0, and 7.6-8.2 for
    # the rest of the log, drifting down by hundredths.
    rng = random.Random(5)
    values = [3.7528, 11.6669, 15.0408, 9.6855, 8.5036, 9.8856, 8.6059]
    values += [8.1 - i * 0.02 + rng.uniform(-0.15, 0.15) for i in range(23)]
    lines = [f"0: Iteration {i}: loss={v:.4f}" for i, v in enumerate(values)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "NO-GO"
    assert "divergence" in {a["type"] for a in artifact["anomalies_detected"]}


def test_a_spike_that_drains_back_to_the_start_is_no_divergence(tmp_path: Path):
    values = [3.75, 11.7, 15.0, 9.7, 7.1, 5.9, 4.9, 4.2, 3.9, 3.7]
    values += [3.7 - i * 0.02 for i in range(20)]
    lines = [f"0: Iteration {i}: loss={v:.4f}" for i, v in enumerate(values)]
    artifact = verdict_of(tmp_path, lines)
    assert "divergence" not in {a["type"] for a in artifact["anomalies_detected"]
                                if "resolved:" not in a["description"]}
    assert artifact["decision"] != "NO-GO"


def test_an_evaluated_return_that_never_rose_is_no_learning(tmp_path: Path):
    # ARS on MuJoCo: each policy scored by evaluating it (`eval_return=…`), its only
    # return, noise around 3,000 from the first epoch to the 101st, one lucky 11,116.
    rng = random.Random(11)
    lines, step = [], 0
    for epoch in range(1, 102):
        step += rng.randint(500, 800)
        value = 11116.19 if epoch == 23 else rng.uniform(1600, 6500)
        lines.append(f"global_step={step}, epoch={epoch}, eval_return={value:.2f}, "
                     f"eval_length={rng.randint(20, 90)}, sigma_r={rng.uniform(700, 3000):.4f}")
    lines += [f"[CHECKPOINT] Saved at step {step} -> checkpoints/ars_ckpt_{step}.pt",
              f"Training completed. Total steps: {step}"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert artifact["decision"] == "NO-GO"
    assert "not-learning" in {a["type"] for a in artifact["anomalies_detected"]}


def test_an_episodes_own_steps_are_no_global_step():
    # A hand-written DQN's line: its episode leads, its `Steps` are the moves that episode
    # took (300 when it timed out, 5 when it solved the maze).
    lines = [f"2025-12-19 00:49:27,525 - INFO - Episode {e}, Total Reward: {r:.2f}, "
             f"Epsilon: 0.05, Steps: {n}"
             for e, r, n in [(0, -228.4, 300), (50, 22.0, 5), (100, -256.7, 300), (150, 23.0, 7)]]
    read = _records(lines)
    assert [r.step for r in read] == [0, 50, 100, 150]
    assert [r.metrics["episode_steps"] for r in read] == [300, 5, 300, 7]


# The last of five runs in a public DQN log (sealed-55's tank maze), its return each 50th
# episode rounded: +20 or so when the maze is solved, -200 to -290 when the episode times
# out.
_MAZE_RETURNS = [
    -228, -232, -244, -232, -64, -86, 4, -264, -245, -246, -224, -54, -258, -248, -83, -228,
    -235, -237, -224, -239, -22, -84, -220, -234, -254, -84, -247, -46, -73, -224, -220, -269,
    -235, 19, -219, -229, 17, 13, -31, -205, -6, 2, 1, -144, 2, -47, -233, 22,
    -231, -280, -246, 22, -247, -36, -243, -4, -155, -29, 24, -272, 22, -255, 21, 20,
    18, -155, -240, -125, -256, 20, -242, -233, 22, -224, -260, -271, -217, 20, -256, -11,
    -244, 20, -225, -222, 33, -233, 21, 22, -276, -231, -207, 21, -278, -44, 22, 4,
    -229, -71, 24, -220, 21, -114, 24, -254, -41, 27, 26, 23, -268, -266, -222, 22,
    -242, -194, -24, 24, 25, 26, -247, -271, -257, 26, -240, 24, 21, -250, 27, 38,
    23, -221, 20, 24, -54, 26, 25, 20, -246, 22, -28, -66, 21, -233, 24, -244,
    4, 25, 26, -249, -285, -241, -183, 22, 15, -51, 25, -170, -238, -276, -278, -272,
    22, 33, 22, 26, 20, -219, -230, 20, 14, 22, -219, -154, 28, 22, -253, -261,
    -262, 27, 26, 24, -228, 20, 24, 22, -117, -294, -208, 23, -5, 22, 24, -277,
    -254, -251, -50, -51, -9, 22, 23, -257,
]


def test_a_return_won_more_often_is_learning(tmp_path: Path):
    # The agent starts by timing out nearly always and ends solving the maze about half
    # the time: the share of wins rose, so it learned, though five points in a row swing
    # as much as its whole rise.
    lines = [f"2025-12-19 00:49:27,525 - INFO - Episode {i * 50}, Total Reward: {value:.2f}, "
             f"Epsilon: 0.05, Steps: {7 if value > 0 else 300}"
             for i, value in enumerate(_MAZE_RETURNS)]
    lines.append("2025-12-19 02:27:07,489 - INFO - Training complete. Model saved to "
                 "maze_dqn_model.pth")
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "SUCCEEDED"
    assert not [a for a in artifact["anomalies_detected"]
                if a["type"] == "not-learning" and "resolved:" not in a["description"]]

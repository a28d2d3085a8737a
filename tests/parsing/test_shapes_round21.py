"""Shapes read since the twenty-first session, each on lines written in the real shape of
a public log."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.formats import parse_key_values
from tests.rules.test_loss_rules import verdict_of


def test_a_qualifier_in_parentheses_may_hold_a_number():
    # A policy-gradient notebook's `Average Reward (last 100)`: the window is part of the
    # name, and the episode that opens the line is the loop's counter.
    parsed = parse_key_values("Episode 20, Average Reward (last 100): 21.65")
    assert parsed is not None
    assert parsed.metrics == {"average_reward_last_100": 21.65}
    assert parsed.step == 20
    # A qualifier in words reads as before.
    parsed = parse_key_values("Epoch 3, Loss (avg): 0.31, Acc (top-1): 55.2")
    assert parsed is not None and parsed.metrics == {"loss_avg": 0.31, "acc_top_1": 55.2}


def test_an_episode_counter_opening_its_line_is_the_step():
    parsed = parse_key_values("Episode 154 reward: 15.998000144958496")
    assert parsed is not None and parsed.step == 154
    # Not an episode's share or a count of a total (the latter is `episode 8/10`'s own).
    parsed = parse_key_values("Episode 8/10 reward: 3.5")
    assert parsed is not None and (parsed.step, parsed.target) == (8, 10)


_ANSI_RED, _ANSI_GREEN, _ANSI_OFF = "\x1b[0;31m", "\x1b[0;32m", "\x1b[0m"


def _ipython8_interrupt(after: list[str]) -> list[str]:
    # IPython 8's traceback of Ctrl-C in a notebook cell, as VS Code's Jupyter output keeps
    # it: frames as `Cell In[20], line 28` and `File /path/module.py:1736, in f(self)`, the
    # path unquoted, then the frontend's own lines after the exception.
    lines = [f"Episode {e} loss: {-250.0 - e:.4f}" for e in range(40)]
    lines += [f"Episode {e} reward: {9.4 + (e % 7) * 0.5:.4f}" for e in range(40)]
    lines += [
        f"{_ANSI_RED}{'-' * 75}{_ANSI_OFF}",
        f"{_ANSI_RED}KeyboardInterrupt{_ANSI_OFF}                         "
        "Traceback (most recent call last)",
        f"Cell {_ANSI_GREEN}In[20], line 28{_ANSI_OFF}",
        "\x1b[1;32m     26\x1b[0m total_rewards = torch.zeros(1000)",
        "\x1b[0;32m---> 28\x1b[0m     loss, total_reward = run_episode()",
        "",
        f"File {_ANSI_GREEN}/opt/anaconda3/lib/python3.10/site-packages/torch/nn/modules/"
        f"module.py:1736{_ANSI_OFF}, in \x1b[0;36mModule._wrapped_call_impl\x1b[0;34m"
        "(self, *args, **kwargs)\x1b[0m",
        "\x1b[1;32m   1734\x1b[0m     return self._compiled_call_impl(*args, **kwargs)",
        "",
        f"{_ANSI_RED}KeyboardInterrupt{_ANSI_OFF}: ",
    ]
    return lines + after


def test_an_ipython8_traceback_is_read_through_its_frames(tmp_path: Path):
    vscode = ["\x1b[1;31mThe Kernel crashed while executing code in the current cell or a "
              "previous cell. ", "",
              "\x1b[1;31mPlease review the code in the cell(s) to identify a possible cause "
              "of the failure. "]
    for after in ([], vscode):
        data = verdict_of(tmp_path, _ipython8_interrupt(after))
        assert (data["terminal_state"], data["decision"]) == ("CANCELLED", "NO-GO"), \
            data["summary"]


def _bare_split_fields(epochs: int) -> list[str]:
    # A FourCastNet-style notebook: `Epoch e/E | Train x | Val y`, fields apart by bars
    # only (no colon, no double space), a best-model line between some of them.
    lines = []
    for epoch in range(1, epochs + 1):
        lines.append(f"Epoch {epoch}/30 | Train {0.22 - 0.005 * epoch:.4f} | "
                     f"Val {0.15 - 0.0015 * epoch:.4f}")
        if epoch % 3 == 0:
            lines.append(f"New Best Model: {0.15 - 0.0015 * epoch:.4f}")
    return lines


def test_fields_set_apart_by_bars_alone_are_read(tmp_path: Path):
    data = verdict_of(tmp_path, _bare_split_fields(30))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    data = verdict_of(tmp_path, _bare_split_fields(12))
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert "could not read" not in data["summary"]


def _nnunet_v1(last_epoch: int, after: list[str]) -> list[str]:
    # nnU-Net v1's per-epoch block, its poly schedule reaching exactly 0 at the last epoch
    # (299 of 300), then the script's next phase: predicting the validation cases.
    lines = []
    for epoch in range(last_epoch + 1):
        stamp = f"2022-02-09 11:{epoch % 60:02d}:30.455816: "
        lr = 0.01 * (1 - (epoch + 1) / 300) ** 0.9
        lines += ["", f"epoch:  {epoch} ",
                  f"{stamp}train loss : {-0.05 - 0.0008 * epoch:.4f} ",
                  f"{stamp}validation loss: {-0.04 - 0.0007 * epoch:.4f} ",
                  f"{stamp}lr: {round(lr, 6)} ",
                  f"{stamp}saving checkpoint... ",
                  f"{stamp}done, saving took 0.86 seconds ",
                  f"{stamp}This epoch took 321.170642 s"]
    return lines + after


def test_the_script_going_on_to_predict_after_its_schedule_ended_is_a_finished_run(
        tmp_path: Path):
    phase = ["2022-02-09 12:14:32.975412: finished prediction ",
             "2022-02-09 12:14:32.988422: evaluation of raw predictions ",
             "2022-02-09 12:14:53.327331: determining postprocessing "]
    data = verdict_of(tmp_path, _nnunet_v1(299, phase))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    # Without the next phase the schedule's end alone says the loop is over, not how.
    data = verdict_of(tmp_path, _nnunet_v1(299, []))
    assert data["terminal_state"] == "ENDED", data["summary"]


def _summed_epochs(epochs: int) -> list[str]:
    # A Paddle restoration loop: batch lines with their mean loss, then each epoch's
    # summary with the loss summed over its 6000 batches.
    lines = []
    for epoch in range(1, epochs + 1):
        for batch in range(200, 6000, 200):
            lines.append(f"Epoch: {epoch}\tBatch: {batch}/6000\tTime: {batch * 0.6:.4f}\t"
                         f"Loss: {0.012 - 0.0001 * epoch + 0.0004 * (batch % 600 == 0):.4f}")
        lines += ["-" * 66,
                  f"Epoch: {epoch}\tTime: 3904.7457\tLoss: {62.2 - 0.5 * epoch:.4f}\t"
                  "LearningRate 0.000133", "-" * 66]
    return lines


def test_an_epochs_summed_loss_is_not_a_spike_of_its_batches(tmp_path: Path):
    data = verdict_of(tmp_path, _summed_epochs(6))
    kinds = {a["type"] for a in data["anomalies_detected"]}
    assert "loss-spike" not in kinds and "divergence" not in kinds, data["anomalies_detected"]


def test_a_batch_counter_glued_to_the_epoch_places_the_record():
    # MiniMind's trainers: `Epoch:[e/E](i/N), name: value, …`.
    parsed = parse_key_values("Epoch:[1/2](37/500), Reward: 0.3846, Fmt: 1.00, Correct: 0.00, "
                              "KL_ref: 0.0004, Actor Loss: 0.0000, LR: 0.00000100")
    assert parsed is not None and parsed.fmt == "kv-epoch-batch"
    assert (parsed.step, parsed.target, parsed.epoch, parsed.per_epoch) == (37, 500, 1.0, 500)


def _grpo_flat(steps: int) -> list[str]:
    # A GRPO run whose reward never leaves where it began, over the whole of its one epoch.
    return [f"Epoch:[1/1]({i}/{steps}), Reward: {0.33 + 0.05 * ((i * 7) % 5 - 2) / 2:.4f}, "
            f"Fmt: 1.00, Correct: 0.00, KL_ref: 0.0004, Adv Std: 0.9248, "
            f"Actor Loss: 0.0000, Avg Len: 129, LR: 0.00000100" for i in range(1, steps + 1)]


def test_a_return_flat_over_a_whole_finished_run_is_no_go(tmp_path: Path):
    data = verdict_of(tmp_path, [*_grpo_flat(500), "Training finished."])
    assert data["decision"] == "NO-GO", data["summary"]
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in data["anomalies_detected"]), data["anomalies_detected"]


def _ultralytics_stdout(epochs: int, planned: int) -> list[str]:
    # Ultralytics with stdout alone captured (the bars, and the validation header drawn
    # with its bar, go to stderr): each epoch's table header, then its `all` row.
    lines = ["engine/trainer: task=detect, mode=train, model=None, data=ast.yaml, "
             f"epochs={planned}, time=None, patience=50, batch=16, imgsz=640"]
    for epoch in range(1, epochs + 1):
        lines += ["",
                  "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
                  f"                   all       4146      20410      {0.75 + 0.001 * epoch:.3f}"
                  f"      {0.70 + 0.001 * epoch:.3f}      {0.76 + 0.001 * epoch:.3f}"
                  f"      {0.57 + 0.001 * epoch:.3f}"]
    return lines


def test_ultralytics_validation_rows_on_stdout_alone_are_read(tmp_path: Path):
    data = verdict_of(tmp_path, [*_ultralytics_stdout(93, 300), "",
                                 "Stopping training early as no improvement observed in last "
                                 "50 epochs. Best results observed at epoch 43, best model "
                                 "saved as best.pt.", "", "93 epochs completed in 10.314 hours."])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    assert "could not read" not in data["summary"]
    assert data["final_metrics"]["val/map50"] == 0.853

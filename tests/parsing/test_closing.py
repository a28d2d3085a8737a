"""A run's ending read from its closing block: what it prints once after its last
training record (issue 23). Each log below is written in the shape its public source
prints; none says one of the completion sentences `parsing.events` knows."""

from __future__ import annotations

from pathlib import Path

import pytest

from babysit.model import EventKind, LogEvent
from babysit.parsing.closing import CELL_ENDED, CLOSING, ClosingBlock
from babysit.parsing.frameworks import planned_epochs
from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _cifar10_tutorial() -> list[str]:
    # pytorch/tutorials beginner_source/blitz/cifar10_tutorial.py: `[epoch, batch] loss:`
    # every 2000 mini-batches, then `Finished Training` and the test accuracy.
    lines = [f"[{e}, {i:5d}] loss: {2.2 - 0.3 * e - i / 1e5:.3f}"
             for e in (1, 2) for i in range(2000, 12001, 2000)]
    return [*lines, "Finished Training",
            "Accuracy of the network on the 10000 test images: 54 %"]


def _gcn() -> list[str]:
    # tkipf/gcn gcn/train.py: one line per epoch, `Optimization Finished!`, the test set.
    lines = [f"Epoch: {e:04d} train_loss= {1.95 - e * 0.005:.5f} train_acc= 0.30000 "
             f"val_loss= {1.9 - e * 0.001:.5f} val_acc= {0.4 + e * 0.002:.5f} time= 0.02000"
             for e in range(1, 201)]  # (an accuracy the same on every epoch never learned)
    return [*lines, "Optimization Finished!",
            "Test set results: cost= 1.00412 accuracy= 0.81300 time= 0.01000"]


def _quickstart(epochs: int, done: bool) -> list[str]:
    # pytorch/tutorials beginner_source/basics/quickstart_tutorial.py: a test pass after
    # every epoch (`Test Error:` / `Accuracy: …, Avg loss: …`), then `Done!`.
    lines: list[str] = []
    for e in range(1, epochs + 1):
        lines += [f"Epoch {e}", "-------------------------------"]
        lines += [f"loss: {2.3 - 0.1 * e - b / 1e6:>7f}  [{b:>5d}/60000]"
                  for b in range(64, 60000, 6400)]
        lines += ["Test Error: ", f" Accuracy: {40 + e}.0%, Avg loss: {2.1 - 0.1 * e:>8f} ", ""]
    return [*lines, "Done!"] if done else lines


def _timed_loop() -> list[str]:
    # A hand loop that prints its wall time once at the end (`print(f"Total time: …")`).
    return [*(f"epoch {e} | loss {1.0 / e:.4f} | lr 0.001" for e in range(1, 31)),
            "Total time: 0:12:31"]


def judged_after_records(line: str, records: int = 3) -> LogEvent | None:
    """The closing block's judgement of one line after `records` training records."""
    block = ClosingBlock()
    for _ in range(records):
        block.trained()
    block.add(line)
    return block.judge()


@pytest.mark.parametrize("lines", [_cifar10_tutorial(), _gcn(), _quickstart(5, done=True),
                                   _timed_loop()], ids=["cifar10", "gcn", "quickstart", "timed"])
def test_a_closing_block_after_the_last_record_is_the_end(tmp_path: Path, lines: list[str]):
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")


@pytest.mark.parametrize("lines", [
    _quickstart(5, done=False),  # its per-epoch test pass recurs: an evaluation, not the end
    # a bare `Done!` in the middle, then more training
    [*(f"epoch {e} loss {1 / e:.4f}" for e in range(1, 5)), "Done!",
     *(f"epoch {e} loss {1 / e:.4f}" for e in range(5, 8))],
    # a closing block well short of the plan the run announced (`max_steps=1000`)
    ["max_steps=1000", *(f"step {s} loss {1 / s:.4f}" for s in range(10, 210, 10)),
     "Training done"],
], ids=["recurring-test", "done-mid-run", "short-of-plan"])
def test_what_is_no_closing_block(tmp_path: Path, lines: list[str]):
    assert verdict_of(tmp_path, lines)["terminal_state"] != "SUCCEEDED"


def test_the_parser_says_the_closing_block_once_at_the_end_of_a_read():
    parser = LogParser()
    # A bare `Done!`: no sentence a single line proves (`Finished Training` is read as
    # the run's own word as it comes, see tests/parsing/test_completion_words.py).
    lines = [*_cifar10_tutorial()[:-2], "Done!",
             "Accuracy of the network on the 10000 test images: 54 %"]
    first = parser.feed_lines(lines[:-2])
    assert not any(e.kind is EventKind.COMPLETED for r in first for e in r.events)
    closing = [e for r in parser.feed_lines(lines[-2:]) for e in r.events
               if e.kind is EventKind.COMPLETED]
    # (the test accuracy after it is the tutorial's `test_accuracy`, a final test of its own)
    assert [(e.detail, e.line) for e in closing] == [
        (CLOSING, "Done!"),
        ("final-test", "Accuracy of the network on the 10000 test images: 54 %")]
    assert parser.feed_lines([]) == []  # judged once


@pytest.mark.parametrize("line", [
    "Finished Training", "Optimization Finished!", "Done!", "done training", "training is done",
    "finished run", "average loss = 0.1234", "Test accuracy: 0.91", "test loss 0.31",
    "Final PPO metrics: loss_objective=-0.03", "It took 12.3 seconds", "Training time 0:13:00",
    "========================Evaluation Metrics========================",
    "Did not meet early stopping. Best iteration is:",
    # a final figure whatever its name, the average time an epoch or a step took
    "Final avg. r2:  0.7756", "FINAL MAE = 4.3", "Avg epoch time: 7.1649", "Mean step time: 0.31 s",
    # the time the whole script took, its units in words (sealed-12 cavia_meta_learning_…)
    "Total script time in hours minutes seconds:  00:27:44",
    # what a notebook displays when the training cell ends, or the next cell's plot
    "tensor(0.5321, device='cuda:0', grad_fn=<NllLossBackward0>)",
    "[<matplotlib.lines.Line2D at 0x7f3a9c0d2e50>]", "<Figure size 640x480 with 1 Axes>",
    # the final model's output after the loop: a language model's last sample
    "Final generated text:", "Final samples", "Final model outputs:",
    # `Done!` alone in other languages: sealed-7/voxelmorph_utf16le_crlf_checkpoint_sweep_…
    # ends its sweep with `完成！`
    "完成！", "全部完成", "終了", "완료",
    # the time training took, its word capitalised (sealed-15's StarGAN-VC, TF1)
    "Training Time: 04:44:00", "Total Time: 1:02:03",
    # the word alone in capitals (sealed-18's slot-attention ablation: `=== ALL DONE ===`)
    "=== ALL DONE ===", "All Done!",
    # the results written to a file once the loop is over (sealed-16's liquid-network CTC
    # run, sealed-8's drug-response seeds, sealed-11's peptide VAE)
    "Results saved to predictions_lnn.txt", "wrote: results/train.log, metrics.csv, curves.png",
    "2022-10-15 00:16:46,983 - INFO(root): saving result.json and vae_result.json at output/amp",
    # an aggregate over runs, folds or seeds
    "Test accuracy: 81.2 ± 0.5", "F1 = 0.63 +/- 0.02",
])
def test_closing_words(line: str):
    event = judged_after_records(line)
    assert event is not None and event.detail in (CLOSING, CELL_ENDED)


@pytest.mark.parametrize("line", [
    "Epoch 3/10 done", "Training done for stage 1", "loading data... finished in 3/10 s",
    "Saving model checkpoint to out/checkpoint-500", "Evaluating...",
    "Final learning rate will be 1e-5 after warmup",  # a final figure needs its value
    "x = tensor(0.53)",  # a value inside a sentence, not a displayed one
    "数据加载完成", "第3轮完成",  # a part of the run, not the word alone
    # a bare folder of results is YOLOv5's after its final validation's table
    "Results saved to runs/train/exp",
    # a mean or a spread alone is an iteration's (rsl_rl's block)
    "Mean reward: -4.08", "Mean action std: 0.88",
])
def test_lines_that_do_not_close_a_run(line: str):
    assert judged_after_records(line) is None


@pytest.mark.parametrize(("lines", "closes"), [
    # a script's own name for its work, on the log's last line
    (["Model comparison complete!"], True),
    (["Evaluating...", "train AlexNet done"], True),
    (["2025-09-13 15:57:11,727 - __main__ - INFO - Ablation study completed!"], True),
    # what a run does along the way, or a counter part-way
    (["Saving checkpoint to out/ckpt-500... done"], False),
    (["Loading test data done"], False),
    (["epoch 3 of 10 finished"], False),
    # prose after training (a language model's samples) that happens to end on the word,
    # with more after it: only the last line counts
    (["KING RICHARD II:", "I duke! I he do done.", "saving model"], False),
], ids=["comparison", "model-done", "timestamped", "save", "load", "epoch", "samples"])
def test_the_last_line_ending_on_a_word_of_completion(lines: list[str], closes: bool):
    block = ClosingBlock()
    for _ in range(3):
        block.trained()
    for line in lines:
        block.add(line)
    event = block.judge()
    assert (event is not None and event.detail == CLOSING) is closes


def test_a_closing_line_the_run_printed_between_records_is_not_the_end():
    block = ClosingBlock()
    block.add("Test accuracy: 0.81")
    block.trained()
    block.add("Test accuracy: 0.84")
    assert block.judge() is None


def _epoch_lines(last: int) -> list[str]:
    # A hand loop whose every line is one epoch (`print(f"Epoch {e}/{epochs} - loss: …")`),
    # after argparse's `Namespace(...)`: the plan is in the line and in the config dump.
    return ["Namespace(batch_size=64, epochs=20, lr=0.001)",
            *(f"Epoch {e}/20 - loss: {1 / e:.4f} - acc: 0.9" for e in range(1, last + 1))]


def test_the_last_planned_epoch_with_nothing_after_it_is_the_end(tmp_path: Path):
    data = verdict_of(tmp_path, _epoch_lines(20))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")


def test_an_epoch_short_of_the_plan_is_not(tmp_path: Path):
    assert verdict_of(tmp_path, _epoch_lines(12))["terminal_state"] == "RUNNING"


@pytest.mark.parametrize(("line", "epochs"), [
    ("Namespace(batch_size=64, epochs=20, lr=0.001)", 20),
    ("{'epochs': 30, 'lr': 0.01}", 30), ("python train.py --epochs 50 --lr 0.1", 50),
    ("num_epochs: 12", 12), ("warmup_epochs=1", None),
])
def test_planned_epochs_from_a_config_dump_or_a_command_line(line: str, epochs: int | None):
    assert planned_epochs(line) == epochs


def test_a_test_result_after_the_first_record_is_not_yet_the_end():
    # A live run that prints one line an epoch and a test result after it goes quiet for a
    # whole epoch after the first one: that is no end (a word of its own would be).
    block = ClosingBlock()
    block.trained()
    block.add("Test accuracy: 0.81")
    assert block.judge() is None
    block.add("Finished Training")
    event = block.judge()
    assert event is not None and event.line == "Finished Training"


def test_a_notebook_loop_followed_by_its_displayed_loss_finished(tmp_path: Path):
    lines = [f"step {s}, loss: {3.0 - s / 600:.4f}, lr: 3.0e-04" for s in range(1, 1200)]
    data = verdict_of(tmp_path, [*lines, "tensor(1.0012, device='cuda:0', grad_fn=<AddBackward0>)"])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO")


def test_a_plot_shown_after_every_epoch_is_no_end(tmp_path: Path):
    lines = []
    for epoch in range(1, 9):
        lines += [f"epoch {epoch} loss {1 / epoch:.4f}", "<Figure size 640x480 with 1 Axes>"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_samples_printed_at_every_step_then_a_final_one_closed_the_run(tmp_path: Path):
    # A hand loop that prints a sample after each logged step, and one after training.
    lines: list[str] = []
    for step in range(200, 2001, 200):
        lines += [f"Step {step}, Loss: {4.5 - step / 1000:.4f}, Elapsed Time: 80.1 seconds",
                  "Generated text:", "Once upon a time there was a cat.", ""]
    verdict = verdict_of(tmp_path, [*lines, "Final generated text:", "Once upon a time."])
    assert verdict["terminal_state"] == "SUCCEEDED"
    verdict = verdict_of(tmp_path, lines)
    assert verdict["terminal_state"] == "RUNNING"


def _keras_fit(epochs_run: int) -> list[str]:
    # A notebook's `model.fit(epochs=20)` that stops without a word, then
    # `model.evaluate(...)`: its bar and the list of scores the cell displays. It learns
    # (a validation score that never moved from its first evaluation is not-learning).
    lines: list[str] = []
    for e in range(1, epochs_run + 1):
        lines += [f"Epoch {e}/20",
                  f"300/300 [==============================] - 3s 10ms/step - loss: "
                  f"{2.0 - e * 0.05:.4f} - accuracy: {0.5 + e * 0.02:.2f} - val_loss: "
                  f"{1.6 - e * 0.03:.2f} - val_accuracy: {0.4 + e * 0.02:.2f}"]
    return [*lines, "40/40 [==============================] - 0s 1ms/step - loss: 1.46 - "
            "accuracy: 0.50", "[1.4607702493667603, 0.5026000142097473]"]


def test_a_notebook_cell_that_returned_well_short_of_its_plan_ended(tmp_path: Path):
    verdict = verdict_of(tmp_path, _keras_fit(7))
    assert (verdict["terminal_state"], verdict["decision"]) == ("ENDED", "CONDITIONAL")


def test_a_notebook_cell_that_returned_at_its_plan_succeeded(tmp_path: Path):
    assert verdict_of(tmp_path, _keras_fit(20))["terminal_state"] == "SUCCEEDED"


def test_the_same_fit_cut_with_no_displayed_value_is_running(tmp_path: Path):
    assert verdict_of(tmp_path, _keras_fit(7)[:-2])["terminal_state"] == "RUNNING"


def test_an_eta_of_zero_on_a_bar_short_of_its_end_is_no_ending() -> None:
    # Julia's ProgressMeter rounds the time left to 0:00:00 well before the bar is full
    # (lines written for this test in its shape).
    from babysit.model import EventKind
    from babysit.parsing.parser import LogParser

    def completions(lines: list[str]) -> list[object]:
        return [e for r in LogParser().feed_lines(lines) for e in r.events
                if e.kind is EventKind.COMPLETED]

    assert completions(["Train Epoch 3:  81%|█████████        | ETA: 0:00:00 ( 6.7 ms/it)"]) == []
    assert completions(["Train Epoch 3: 100%|███████████| ETA: 0:00:00 ( 6.7 ms/it)"]) != []

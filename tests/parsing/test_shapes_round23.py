"""Shapes read and judged since the twenty-third session, each on lines written in the
real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from tests.rules.test_loss_rules import verdict_of


def test_a_traceback_frame_s_code_naming_an_error_is_not_the_error(tmp_path: Path):
    # Python prints each frame's source under it; code that raises (or catches) an
    # out-of-memory error names it without reporting one. The finding quotes the
    # closing line, which says how much memory was asked for.
    lines = [f"step {s}/50 loss {2.0 / s:.4f}" for s in range(1, 25)]
    lines += ['Traceback (most recent call last):',
              '  File "train.py", line 219, in <module>',
              '    loss = loss_fn(forward(x), y)',
              '  File "train.py", line 206, in forward',
              '    raise torch.OutOfMemoryError(',
              'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. '
              'GPU 0 has a total capacity of 79.25 GiB of which 1.31 GiB is free.']
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    oom = [f for f in artifact["findings"] if f["title"].startswith("oom")]
    assert len(oom) == 1 and "Tried to allocate 2.50 GiB" in oom[0]["description"]
    assert "raise torch" not in oom[0]["description"]


def test_an_unnamed_counter_at_the_configured_epochs_is_the_plan_reached(tmp_path: Path):
    # DGCNN's `Train 249, loss: …` after `Namespace(…, epochs=250, …)`: the loop counts
    # its epochs from 0 without naming them; its last is the plan's.
    lines = ["Namespace(batch_size=16, dropout=0.5, epochs=12, lr=0.001, use_sgd=True)"]
    for n in range(12):
        lines.append(f"Train {n}, loss: {4.0 - 0.2 * n:.6f}, train acc: {0.1 + 0.05 * n:.6f}")
        lines.append(f"Valdation {n}, loss: {4.1 - 0.2 * n:.6f}, validation acc: "
                     f"{0.1 + 0.05 * n:.6f}")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")
    # Cut at its sixth epoch, it is a run going on.
    assert verdict_of(tmp_path, lines[:13])["terminal_state"] == "RUNNING"


def test_an_unnamed_counter_past_the_configured_epochs_counts_something_else(tmp_path: Path):
    lines = ["Namespace(batch_size=16, epochs=5, lr=0.001)"]
    lines += [f"Train {n}, loss: {4.0 - 0.01 * n:.6f}, train acc: {0.1 + 0.001 * n:.6f}"
              for n in range(40)]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "RUNNING"


def test_a_remark_in_parentheses_ends_a_line_of_fields_without_spoiling_it(tmp_path: Path):
    # `Epoch 08 | train 3.066 | val 2.960 (saved)`: every epoch is a record, its remark
    # or not.
    lines = [f"10:{n:02d}:00 | Epoch {n:02d} | train {7.0 / n:.3f} | val {6.0 / n + 1:.3f}"
             + (" (saved)" if n % 2 else "") + (" | BLEU 30.1 (best BLEU saved)" if n == 6
                                                 else "")
             for n in range(1, 13)]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["final_metrics"]["train"] == float(f"{7.0 / 12:.3f}")
    assert artifact["reading"]["lines_understood"] >= 10


def test_a_bracketed_epoch_bar_counts_that_epoch_s_batches_not_the_run(tmp_path: Path):
    # ColossalAI's `[Epoch 5 / Train]: 100%|…| 1/1`: one batch an epoch, the run going on.
    lines = ["INFO: [Epoch 4 / Train]: Loss = 163.55 | LR = 0.00015 | Throughput = 0",
             "[Epoch 5 / Train]: 100%|██████████| 1/1 [00:00<00:00,  2.05it/s, loss=107, "
             "lr=0.00015]",
             "INFO: [Epoch 5 / Train]: Loss = 107.16 | LR = 0.00012 | Throughput = 0"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("RUNNING", "CONDITIONAL")


def test_a_validation_loss_creeping_up_from_the_first_epoch_is_over_fitting(tmp_path: Path):
    # 0.4631 → 0.4708 over 30 epochs, up at nearly every one, the training loss falling:
    # within 1 % of its start for the first eight, but a drift, not a model that never
    # changes: eval-degradation (CONDITIONAL), not a run that never learned (NO-GO).
    lines = [f"Epoch: {n}/30, Train Loss: {0.39 - 0.0014 * n:.6f}, "
             f"Val Loss:{0.4631 + 0.00026 * n + (0.00004 if n % 7 == 0 else 0):.6f}"
             for n in range(1, 31)]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "CONDITIONAL")
    titles = [f["title"] for f in artifact["findings"]]
    assert any(t.startswith("eval-degradation") for t in titles), titles
    assert not any(t.startswith("not-learning") for t in titles), titles


def test_a_training_loss_rising_at_every_epoch_for_a_dozen_is_raised(tmp_path: Path):
    # An epoch-averaged loss falls, bottoms out, then rises at each of its last fourteen
    # epochs (an LR schedule gone wrong): a divergence however smooth the climb.
    values = [7.0 / n + 2.0 for n in range(1, 31)] + [2.24 + 0.03 * k for k in range(1, 15)]
    lines = [f"Epoch {n} | loss {v:.3f}" for n, v in enumerate(values, 1)]
    artifact = verdict_of(tmp_path, lines)
    titles = [f["title"] for f in artifact["findings"]]
    assert any(t.startswith("divergence") for t in titles), titles


def test_a_crash_whose_cause_is_already_a_finding_names_it_once(tmp_path: Path):
    # The OOM finding quotes the message; the crash says the process died of it,
    # naming the exception, instead of printing the whole message again.
    lines = [f"step {s}/50 loss {2.0 / s:.4f}" for s in range(1, 25)]
    lines += ['Traceback (most recent call last):',
              '  File "train.py", line 219, in <module>',
              '    loss = loss_fn(forward(x), y)',
              'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.']
    artifact = verdict_of(tmp_path, lines)
    crash = [f for f in artifact["findings"] if f["title"].startswith("crash")]
    assert len(crash) == 1
    assert crash[0]["description"].startswith(
        "the run died of the oom above (torch.OutOfMemoryError)")
    assert "Tried to allocate" not in crash[0]["description"]


def test_a_stop_while_a_failure_was_being_handled_leaves_the_failure(tmp_path: Path):
    # The data reader died; Ctrl-C came while its error was still being handled (a
    # notebook's chained traceback): the run had failed, the stop only ended its dying.
    lines = [f"[2021-05-12 10:47:56] Train epoch 0, batch {b}, loss: {168.7 / (b + 1):.6f}"
             for b in range(0, 500, 100)]
    lines += ["Traceback (most recent call last):",
              '  File "dataloader_iter.py", line 779, in __next__',
              "    data = self._reader.read_next_var_list()",
              "SystemError: (Fatal) Blocking queue is killed because the data reader raises "
              "an exception.", "",
              "During handling of the above exception, another exception occurred:", "",
              "Traceback (most recent call last):",
              '  File "train.py", line 165, in <module>', "    train()",
              '  File "dataloader_iter.py", line 779, in __next__',
              "    data = self._reader.read_next_var_list()",
              "KeyboardInterrupt"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert "Blocking queue is killed" in artifact["summary"]
    # A stop, then an error as the run wound down, is still the stop.
    lines = [*lines[:5], "Traceback (most recent call last):",
             '  File "train.py", line 165, in <module>', "    train()",
             "KeyboardInterrupt", "",
             "During handling of the above exception, another exception occurred:", "",
             "Traceback (most recent call last):",
             '  File "train.py", line 170, in <module>', "    summary()",
             "KeyError: 'best'"]
    assert verdict_of(tmp_path, lines)["terminal_state"] == "CANCELLED"


def _flair_epoch(epoch: int, loss: float, stamp: str = "2021-02-11 00:56:48,228") -> list[str]:
    return [f"{stamp} epoch {epoch} - iter {i}/4 - loss {loss + 0.01 * (4 - i):.8f} - "
            f"samples/sec: 247.53" for i in range(1, 5)] + \
        [f"{stamp} {'-' * 40}", f"{stamp} EPOCH {epoch} done: loss {loss:.4f} - lr 0.1000",
         f"{stamp} BAD EPOCHS (no improvement): 0", f"{stamp} {'-' * 40}"]


def test_flair_s_quoted_max_epochs_is_the_plan_its_test_after_it_the_end(tmp_path: Path):
    # flair's parameters block quotes its values (` - max_epochs: "4"`); its last epoch,
    # then `Testing using best model ...`: a finished run.
    stamp = "2021-02-11 00:56:48,228"
    lines = [f"{stamp} Parameters:", f'{stamp}  - learning_rate: "0.1"',
             f'{stamp}  - mini_batch_size: "32"', f'{stamp}  - max_epochs: "4"']
    for epoch in range(1, 5):
        lines += _flair_epoch(epoch, 2.0 / epoch)
    lines += [f"{stamp} Testing using best model ...", f"{stamp} 0.9302\t0.9282\t0.9292",
              "Results:", "- F1-score (micro) 0.9292"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "GO")


def test_exiting_from_training_early_is_the_ctrl_c_handler_s_word(tmp_path: Path):
    # pytorch/examples' word_language_model and flair's trainer print it when Ctrl-C
    # stops them, then save and test: a cancelled run, not a finished one.
    stamp = "2019-06-11 10:34:19,814"
    lines = [f"{stamp} epoch 1 - iter {i}/6 - loss {2.4 - 0.05 * i:.8f}" for i in range(4)]
    lines += [f"{stamp} {'-' * 40}", f"{stamp} Exiting from training early.",
              f"{stamp} Saving model ...", f"{stamp} Done.",
              f"{stamp} Testing using best model ...", f"{stamp} 0.5217\t0.5217\t0.5217"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("CANCELLED", "NO-GO")


def _rsl_block(iteration: int, total: int, reward: float, surrogate: float) -> list[str]:
    return ["#" * 80, f"                       \x1b[1m Learning iteration {iteration}/{total} "
            "\x1b[0m                       ", "",
            "                       Computation: 17428 steps/s (collection: 7.554s, "
            "learning 3.727s)",
            f"               Value function loss: {0.009 / (iteration + 1):.4f}",
            f"                    Surrogate loss: {surrogate:.4f}",
            "             Mean action noise std: 1.00",
            f"                 Mean total reward: {reward:.2f}",
            f"               Mean episode length: {21.18 + 7 * iteration:.2f}",
            "-" * 80, f"                   Total timesteps: {196608 * (iteration + 1)}",
            "                    Iteration time: 11.28s",
            f"                        Total time: {11.28 * (iteration + 1):.2f}s",
            "                               ETA: 3384.3s"]


def test_rsl_rl_s_learning_iteration_blocks_are_one_record_each(tmp_path: Path):
    # rsl_rl's PPO runner (Isaac Gym, Isaac Lab, Genesis): a banner with the iteration
    # and its plan, then right-aligned figures. One record per block at its iteration;
    # its surrogate loss is the policy's, which need not fall.
    lines: list[str] = []
    for it in range(40):
        lines += _rsl_block(it, 300, 0.03 + 0.14 * it,
                            (-0.005, 0.004, -0.002, 0.001)[it % 4])
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("RUNNING", "CONDITIONAL")
    assert (artifact["total_steps"], artifact["target_steps"]) == (39, 300)
    assert not artifact["findings"], artifact["findings"]


def test_a_training_accuracy_frozen_while_its_loss_falls_is_one_class(tmp_path: Path):
    # Keras' `loss: 1.1108 - accuracy: 0.5885` on every epoch: the predictions on the very
    # data it fits never change while the loss grows surer; one class for everything.
    lines = []
    for epoch in range(1, 31):
        lines += [f"Epoch {epoch}/30",
                  f"10613/10613 [==============================] - 0s 15us/step - loss: "
                  f"{1.1 + 1.6 / epoch:.4f} - accuracy: {0.5339 if epoch == 1 else 0.5885}"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("SUCCEEDED", "NO-GO")
    assert any(f["title"].startswith("not-learning") for f in artifact["findings"])


def test_a_traceback_whose_paths_a_console_wrapped_still_ends_the_run(tmp_path: Path):
    # PowerShell wraps at its width, inside a frame's path and before its line number.
    lines = [f"Epoch {e}/3 - loss: {1.0 / e:.4f} - accuracy: {0.5 + 0.1 * e:.4f}"
             for e in range(1, 4)]
    lines += ["STEP 6: Saving Model", "Traceback (most recent call last):",
              '  File "C:\\Users\\M AJAY\\OneDrive\\Desktop\\ALL\\47.Acute_lymphoblastic_leukem',
              "ia_Classification_Based_on_Convolutional_Neural_Network (1)\\AcuteLymphobla",
              'sticLukemia1\\Code\\train_model.py", ', "line 304, in <module>",
              '    print(f"\\n\\u2713 Model saved to: {model_path}")', '  File "C:\\Users\\M ',
              'AJAY\\AppData\\Local\\Programs\\Python\\Python311\\Lib\\encodings\\cp1252.py", ',
              "line 19, in encode",
              "    return codecs.charmap_encode(input,self.errors,encoding_table)[0]",
              "UnicodeEncodeError: 'charmap' codec can't encode character '\\u2713' in ",
              "position 2: character maps to <undefined>"]
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["terminal_state"], artifact["decision"]) == ("FAILED", "NO-GO")
    assert "UnicodeEncodeError" in artifact["summary"]

"""Shapes read and judgements made since the twentieth session, each on lines written in
the real shape of a public log."""

from __future__ import annotations

from pathlib import Path

from babysit.model import EventKind
from babysit.parsing.events import find_events
from babysit.parsing.formats import parse_key_values
from tests.rules.test_loss_rules import verdict_of


def test_a_configuration_written_as_a_python_call_is_no_training_record():
    # OpenMMLab prints its whole config at the start: `lr=0.0005` in it is a setting.
    for line in ("optim_wrapper = dict(optimizer=dict(type='Adam', lr=0.0005))",
                 "param_scheduler = [dict(type='LinearLR', begin=0, end=500, start_factor=0.001)]",
                 "train_cfg = dict(by_epoch=True, max_epochs=40, val_interval=1)"):
        assert parse_key_values(line) is None, line
    # A record that happens to carry parentheses is still read.
    parsed = parse_key_values("step=100 loss=2.31 (avg 2.40) lr=1e-4")
    assert parsed is not None and parsed.metrics["loss"] == 2.31


def _openmmlab_epochs(epochs: int, planned: int) -> list[str]:
    # mmengine with a logging interval longer than an epoch: no training line at all, only
    # each epoch's save and its validation (a metric named at its threshold, `PCK@0.05`).
    lines = [f"train_cfg = dict(by_epoch=True, max_epochs={planned}, val_interval=1)",
             "optim_wrapper = dict(optimizer=dict(type='Adam', lr=0.0005))"]
    for epoch in range(1, epochs + 1):
        head = f"09/15 12:42:{epoch:02d} - mmengine - INFO - "
        lines += [f"{head}Saving checkpoint at {epoch} epochs",
                  f"09/15 12:42:{epoch:02d} - mmengine - INFO - Evaluating PCKAccuracy "
                  f"(normalized by ``\"bbox_size\"``)...",
                  f"09/15 12:42:{epoch:02d} - mmengine - INFO - Epoch(val) [{epoch}][2/2]  "
                  f"pck/PCK@0.05: {0.01 + 0.01 * epoch:.6f}"]
    return lines


def test_the_save_after_the_last_planned_epoch_ends_a_run_that_prints_no_training_line(
        tmp_path: Path):
    data = verdict_of(tmp_path, _openmmlab_epochs(40, 40))
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    data = verdict_of(tmp_path, _openmmlab_epochs(25, 40))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _vae(last: int) -> list[str]:
    # A JAX VAE: `Epoch N - Train <ELBO>, Test <ELBO>` every ten epochs, fields set apart by
    # a dash and commas only; the training figure falls (an annealed KL term) while the
    # test one rises from its first evaluation on.
    lines = [f"Epoch {e} - Train {-72.0 - 33.0 * e / 5000:.6f}, "
             f"Test {-241.2 + 129.5 * (1 - (1 - e / 5000) ** 4):.6f}"
             for e in range(10, last + 1, 10)]
    return lines


def test_a_dash_and_comma_record_is_read_and_its_unlike_twins_not_judged(tmp_path: Path):
    finished = [*_vae(5000), "Saved final params to /content/drive/My Drive/vae/params.pkl"]
    data = verdict_of(tmp_path, finished)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    assert not any(a["type"] == "eval-degradation" for a in data["anomalies_detected"])
    data = verdict_of(tmp_path, _vae(2130))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_the_shells_stop_word_after_a_logger_s_timestamp_is_a_stop():
    events = find_events("2024-11-24 04:13:57.870606: Terminated")
    assert [e.kind for e in events] == [EventKind.STOPPED_BY_SIGNAL]
    # Not a sentence that merely says the word.
    assert not find_events("2024-11-24 04:13:57.870606: Terminated workers cleanly, saving")


def _distiller(epochs: int) -> list[str]:
    # Distiller (ai8x-training): each epoch's training lines, then a validation pass printed
    # in the training's own `Epoch: [e][i/n]` shape over its own batches, its summary and
    # the best so far; after the last epoch a `--- test ---` pass.
    lines = []
    for epoch in range(epochs):
        loss = 1.9 / (1 + epoch)
        lines.append("2024-05-11 05:00:11,645 - Training epoch: 50000 samples "
                     "(100 per mini-batch)")
        lines += [f"2024-05-11 05:00:16,168 - Epoch: [{epoch}][  {i}/  500]    Overall Loss "
                  f"{loss - i / 5000:.6f}    Objective Loss {loss - i / 5000:.6f}    "
                  f"LR 0.010000    Time 0.045195" for i in range(100, 501, 100)]
        val = loss * 1.4
        lines += [f"2024-05-11 05:00:33,331 - --- validate (epoch={epoch})-----------",
                  "2024-05-11 05:00:33,332 - 10000 samples (100 per mini-batch)",
                  f"2024-05-11 05:00:36,677 - Epoch: [{epoch}][  100/  100]    Loss {val:.6f}    "
                  f"Top1 {50 + epoch:.6f}    Top5 92.270000",
                  f"2024-05-11 05:00:36,869 - ==> Top1: {50 + epoch:.3f}    Top5: 92.270    "
                  f"Loss: {val:.3f}",
                  "2024-05-11 05:00:36,875 - Saving checkpoint to: logs/checkpoint.pth.tar"]
    return lines


def test_a_validation_pass_in_the_training_format_is_no_training_record(tmp_path: Path):
    tail = ["2024-05-11 05:21:28,702 - --- test ---------------------",
            "2024-05-11 05:21:28,703 - 10000 samples (100 per mini-batch)",
            "2024-05-11 05:21:30,862 - Test: [  100/  100]    Loss 0.431733    Top1 86.930000",
            "2024-05-11 05:21:31,001 - ==> Top1: 86.930    Top5: 99.470    Loss: 0.432"]
    data = verdict_of(tmp_path, [*_distiller(12), *tail])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    assert not any(a["type"] in ("loss-spike", "divergence") for a in data["anomalies_detected"])
    data = verdict_of(tmp_path, _distiller(12))
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_a_command_line_refused_after_a_test_pass_printed_its_results_is_a_later_command(
        tmp_path: Path):
    # A Slurm job: a data-parallel test run prints each worker's results, then the job's
    # next step is refused by argparse (its usage text, then `prog: error: …`). The
    # refused command never started: no crash of the run that printed the results.
    lines = ["args: Namespace(batch_size=1, command='test', data_parallel=True, lr=0.0001)"]
    lines += [f"Test Accuracy: {89.86 - i * 0.3:.2f}  Loss: {0.3443 + i * 0.01:.4f}"
              for i in range(8)]
    lines += ["usage: sn_boilerplate_main.py [-h] {compile,run,test,measure-performance} ...",
              "sn_boilerplate_main.py: error: unrecognized arguments: -ws 8"]
    data = verdict_of(tmp_path, lines)
    assert (data["terminal_state"], data["decision"]) == ("ENDED", "CONDITIONAL"), data["summary"]
    # Refused before anything printed figures, the command line is how the job failed.
    data = verdict_of(tmp_path, [lines[0], *lines[-2:]])
    assert data["terminal_state"] == "FAILED", data["summary"]


def test_a_plan_said_in_words_or_in_a_namespace_and_no_record_made_of_the_namespace(
        tmp_path: Path):
    epochs = [f"Epoch {e} loss: {1.0 - 0.1 * e:.2f}" for e in range(1, 4)]
    for head in ("Starting training for 3 epochs...", "Namespace(epochs=3, lr=0.1)"):
        data = verdict_of(tmp_path, [head, *epochs])
        assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
        data = verdict_of(tmp_path, [head.replace("3", "5"), *epochs])
        assert data["terminal_state"] == "RUNNING", data["summary"]
    # A patience is no plan.
    data = verdict_of(tmp_path, ["ReduceLROnPlateau: lr halves when training loss has not "
                                 "improved for 3 epochs", *epochs])
    assert data["terminal_state"] == "RUNNING", data["summary"]


def test_an_epoch_summary_after_its_first_batch_stands_at_the_epoch_s_end(tmp_path: Path):
    # One planned epoch of 8 batches, only batch 0 logged, then the epoch's summary and the
    # script's own `Training completed!`: the plan is done, not stopped at step 0 of 8.
    lines = ["2025-07-05 12:59:32,237 - __main__ - INFO - Starting training for 1 epochs...",
             "2025-07-05 12:59:33,799 - __main__ - INFO - Epoch 1, Batch 0/8, Loss: 2.5475",
             "2025-07-05 12:59:34,052 - __main__ - INFO - Epoch 1 Training - Loss: 1.0774, "
             "Mod Acc: 0.8520, Time: 1.8s",
             "2025-07-05 12:59:34,517 - __main__ - INFO - Epoch 1 Validation - Loss: 0.9041, "
             "Mod Acc: 0.8300",
             "2025-07-05 12:59:34,887 - __main__ - INFO - Training completed!"]
    data = verdict_of(tmp_path, lines)
    assert data["terminal_state"] == "SUCCEEDED", data["summary"]


def _fann(errors: list[float], cap: int = 1000000, every: int = 100000) -> list[str]:
    # FANN's own report (every binding of the C library prints it): the plan and the goal,
    # then the epochs done and the current error, each a sentence.
    lines = [f"Max epochs {cap:>8}. Desired error: 0.0010000000."]
    for index, error in enumerate(errors):
        epoch = 1 if index == 0 else index * every
        lines.append(f"Epochs {epoch:>12}. Current error: {error:.10f}. Bit fail 195.")
    return lines


def test_fann_s_report_its_goal_reached_and_its_goal_never_approached(tmp_path: Path):
    # The desired error reached at epoch 69 of 500,000: the run's own stop criterion.
    reached = _fann([0.36, 0.25, 0.09, 0.0035, 0.00098, 0.000048, 0.00000017], 500000, 10)
    data = verdict_of(tmp_path, [*reached, "0,00 Xor 0,00 = 0,00", "1,00 Xor 1,00 = 0,00"])
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "GO"), data["summary"]
    # The whole budget spent 480× above the goal: finished, and never learned the task.
    stuck = _fann([0.762] + [0.4797 + 0.0002 * (i % 3) for i in range(10)])
    data = verdict_of(tmp_path, stuck)
    assert (data["terminal_state"], data["decision"]) == ("SUCCEEDED", "NO-GO"), data["summary"]
    assert any(a["type"] == "not-learning" and a["severity"] == "blocker"
               for a in data["anomalies_detected"])

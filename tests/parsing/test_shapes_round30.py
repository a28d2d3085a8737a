"""Shapes read and judged since the thirtieth session, each on lines written in the real
shape of a public log (the corpus's sealed sets, scored blind first)."""

from __future__ import annotations

from pathlib import Path

from babysit.parsing.parser import LogParser
from tests.rules.test_loss_rules import verdict_of


def _records(lines: list[str]):
    parser = LogParser()
    return [r for r in parser.feed_lines(lines) + parser.finish() if r.metrics]


# -- A library's own debug output is no record -----------------------------------------------


def test_matplotlibs_font_scoring_on_a_dataclass_repr_is_no_record():
    # matplotlib ≥ 3.5 at DEBUG level, under SpeechBrain's logger head
    head = "2023-10-25 20:56:44,670 - matplotlib.font_manager - DEBUG - findfont: "
    lines = [f"{head}score(FontEntry(fname='/usr/share/fonts/truetype/f{i}.ttf', name='F{i}', "
             f"style='normal', variant='normal', weight={400 + i}, stretch='normal', "
             f"size='scalable')) = {10 + i * 0.1:.3f}" for i in range(20)]
    assert _records(lines) == []


def test_a_julia_show_of_a_call_is_still_read():
    assert [r.metrics["loss"] for r in _records(
        [f"loss(x, y) = {0.9 - 0.01 * i:.2f}" for i in range(5)])] == [0.9, 0.89, 0.88, 0.87, 0.86]


# -- SpeechBrain: the test of the loaded checkpoint closes the run -------------------------


def _speechbrain(epochs: int, flat: bool) -> list[str]:
    head = "speechbrain.utils.train_logger - "
    lines = []
    for e in range(1, epochs + 1):
        train = 0.94 if flat else 2.0 / e
        lines += [f"{head}epoch: {e}, lr: {1e-4 - e * 1e-6:.2e} - train loss: {train:.2e} - "
                  f"valid loss: {0.0614 if flat else 1.0 / e:.2e}, valid WER: {30 - e * 0.5:.2f}",
                  "speechbrain.utils.checkpoints - Saved an end-of-epoch checkpoint in "
                  f"results/save/CKPT+2025-08-12+21-{e:02d}-45+00"]
    lines.append("speechbrain.utils.checkpoints - Loading a checkpoint from "
                 "results/save/CKPT+2025-08-12+21-20-45+00")
    # the test pass's generation warns once a batch, then its figures
    lines += ["The following generation flags are not valid and may be ignored: ['top_k']. "
              "Set `TRANSFORMERS_VERBOSITY=info` for more details."] * 80
    lines.append(f"{head}Epoch loaded: {epochs} - test loss: 1.11e-01, test CER: 1.83, "
                 "test WER: 3.96")
    return lines


def test_speechbrains_test_of_the_loaded_epoch_closes_a_finished_run(tmp_path: Path):
    artifact = verdict_of(tmp_path, _speechbrain(20, flat=False))
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


def test_the_loaded_epoch_is_no_training_record():
    records = _records(_speechbrain(5, flat=False))
    assert not any("epoch_loaded" in r.metrics and r.step is not None for r in records)


def test_a_flat_run_that_speechbrain_tested_is_finished_and_not_learned(tmp_path: Path):
    artifact = verdict_of(tmp_path, _speechbrain(50, flat=True))
    assert (artifact["decision"], artifact["terminal_state"]) == ("NO-GO", "SUCCEEDED")
    assert any(a["type"] == "not-learning" for a in artifact["anomalies_detected"])


# -- A benchmark driver's jobs, each with its ranking figures ------------------------------


def test_a_benchmark_drivers_counted_jobs_are_its_progress(tmp_path: Path):
    lines = ["Starting complete benchmark: 2 datasets x 3 models, 50 epochs each."]
    for i, (model, data) in enumerate([(m, d) for d in ("Nations", "UMLS")
                                        for m in ("TransE", "PairRE", "ConvE")], start=1):
        lines += [f"[{i}/6] Running {model} on {data}...",
                  f"[{i}/6] Finished {model} on {data} in {3 + i * 0.7:.1f}s, "
                  f"MRR={0.3 + i * 0.05:.4f}."]
    lines.append("Saved artifacts to results/complete")
    artifact = verdict_of(tmp_path, lines)
    assert (artifact["decision"], artifact["terminal_state"]) == ("GO", "SUCCEEDED")


# -- A bar per epoch, its index in brackets after the phase -------------------------------


def test_a_train_bar_with_its_epoch_in_brackets_counts_that_epochs_batches(tmp_path: Path):
    lines = ["num_epochs: 100", "patience: 3"]
    lines += [f"train (0): {100 * n // 400:3d}% {n}/400 [00:{n // 60:02d}<00:10,  3.23s/it, "
              f"loss={0.7 / (1 + n / 50):.4f}]" for n in range(1, 401)]
    lines += ["[INFO] 29 Mar 2022 01:13:37 - main ", "    train (0): loss 0.122;"]
    artifact = verdict_of(tmp_path, lines)
    assert artifact["terminal_state"] == "RUNNING"
    assert artifact["decision"] == "CONDITIONAL"


# -- A configuration printed under its heading ---------------------------------------------


def _gst_launch(at: str) -> list[str]:
    return ["", "-" * 65, "Starting new training run", "-" * 65,
            f"[2021-04-14 {at}]  Checkpoint path: logs-tacotron/model.ckpt",
            f"[2021-04-14 {at}]  Hyperparameters:",
            "  adam_beta1: 0.9", "  batch_size: 32", "  initial_learning_rate: 0.002",
            "  max_iters: 1000", "  power: 1.5", "  prenet_depths: [256, 128]"]


def test_settings_under_their_heading_are_no_training_records(tmp_path: Path):
    lines = _gst_launch("10:24:36.899") + _gst_launch("10:25:49.687")
    assert _records(lines) == []
    artifact = verdict_of(tmp_path, lines)
    assert artifact["decision"] == "CONDITIONAL"
    assert artifact["terminal_state"] == "RUNNING"


def test_records_after_the_settings_block_are_read():
    lines = [*_gst_launch("10:24:36.899"), ""]
    lines += [f"[2021-04-14 10:30:{i:02d}.000]  Step {i:7d}  [0.912 sec/step, loss=0.{90 - i}, "
              f"avg_loss=0.{91 - i}]" for i in range(1, 11)]
    records = _records(lines)
    assert [r.step for r in records] == list(range(1, 11))
    assert records[-1].target_steps in (None, 1000)

"""Which counter is the run's plan (issue 24): never a total below the step the run has
already reached, never a data pass's bar, never one epoch's bar that starts again."""

from __future__ import annotations

from pathlib import Path

from babysit.config import RuleSettings
from babysit.core.series import MetricSeries
from babysit.model import Record
from babysit.parsing.bars import parse_bar
from babysit.parsing.parser import LogParser
from tests.core.test_endings import once


def _series(records: list[Record]) -> MetricSeries:
    series = MetricSeries(RuleSettings())
    for record in records:
        series.absorb(record)
    return series


def test_a_total_the_run_trains_past_is_not_its_plan():
    # `Number of train images: 49,400, iters: 6,175` (one epoch's) at start-up, then the
    # run logs every 100 iterations far past it.
    records = [Record(target_steps=6175)]
    records += [Record(step=s, target_steps=6175, metrics={"l_pix": 0.01}) for s in
                range(100, 20_000, 100)]
    series = _series(records)
    assert series.target_steps is None
    assert not series.reached_target()


def test_a_refused_total_stays_refused_whichever_line_repeats_it():
    series = _series([Record(step=7000, target_steps=6000), Record(step=7100, target_steps=6000),
                      Record(target_steps=6000)])
    assert series.target_steps is None


def test_a_larger_plan_said_later_is_taken():
    series = _series([Record(step=500, target_steps=300), Record(step=600, target_steps=90_000)])
    assert series.target_steps == 90_000


def test_the_plan_at_the_last_step_is_reached():
    series = _series([Record(step=s, target_steps=1000) for s in (10, 500, 1000)])
    assert series.target_steps == 1000
    assert series.reached_target()


def test_after_a_restart_a_plan_below_the_old_step_is_taken():
    # A new run in the same log (the step went back to 0) with a shorter plan.
    series = _series([Record(step=5000, target_steps=10_000), Record(step=10, target_steps=3000),
                      Record(step=20, target_steps=3000)])
    assert series.target_steps == 3000


def test_bars_that_count_data_are_a_data_pass():
    for line in ("Filtering prompts longer than 1024 tokens (num_proc=32): 100%|██████████| "
                 "1000000/1000000 [00:09<00:00, 109164.09 examples/s]",
                 "Map (num_proc=8): 100%|██████████| 87599/87599 [00:21<00:00, 4104.37 examples/s]",
                 "Generating train split: 100%|██████████| 500/500 [00:00<00:00, 9000.1it/s]",
                 "Downloading data: 100%|██████████| 41.2M/41.2M [00:01<00:00, 30.1MB/s]",
                 "Loading checkpoint shards: 100%|██████████| 2/2 [00:05<00:00,  2.61s/it]",
                 "Running tokenizer on dataset: 100%|██████████| 12/12 [00:02<00:00, 5.1ba/s]"):
        bar = parse_bar(line)
        assert bar is None or bar.data_pass, line
    training = parse_bar(" 45%|████▌     | 450/1000 [00:10<00:12, 44.10it/s, loss=0.52]")
    assert training is not None and not training.data_pass


def test_a_data_pass_bar_neither_places_nor_plans_the_run():
    parser = LogParser()
    lines = [f"Map: {p:3d}%|{'█' * (p // 10):<10}| {p * 500}/50000 [00:0{p // 20}<00:01, "
             f"{3000 + p} examples/s]" for p in (10, 50, 100)]
    lines += [f"Training Progress: {s // 10:3d}%|          | {s}/1000 [00:{s:02d}<10:00, "
              f"6.1s/it]" for s in (1, 2, 3)]
    records = [r for line in lines for r in parser.feed_lines([line + "\n"])]
    steps = [(r.step, r.target_steps) for r in records if r.step is not None]
    assert steps[-1] == (3, 1000)
    assert all(step <= 3 for step, _ in steps)


def _epoch(total: int, seconds: int, loss: float) -> list[str]:
    # One epoch of a hand loop: a bar with no description, of which the log kept only
    # its last frame, then a validation pass and its result.
    return [f"100%|██████████| {total}/{total} [{seconds // 60:02d}:{seconds % 60:02d}<00:00,"
            f"  3.64it/s]",
            "Running validation: 100%|██████████| 289/289 [00:36<00:00,  7.88it/s]",
            f"Validation loss: {loss}"]


def test_a_bar_whose_clock_went_back_is_a_new_epochs(tmp_path: Path):
    lines = _epoch(1156, 318, 5.9) + _epoch(1156, 317, 5.0) + _epoch(1156, 321, 4.8)
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "RUNNING", data["summary"]
    assert data["total_steps"] > 1156


def test_a_bar_counting_again_from_zero_is_a_new_epochs(tmp_path: Path):
    # Each frame followed by a line of the loop's own (so no frame is a mere redraw).
    lines = []
    for _ in range(3):
        for i in range(0, 41, 8):
            lines += [f"{100 * i // 40:3d}%|{'█' * (i // 4):<10}| {i}/40 "
                      f"[00:{i:02d}<00:10, 3.2it/s]", f"batch {i} done"]
        lines.append("Validation loss: 1.0")
    data = once(tmp_path, "\n".join(lines) + "\n")
    assert data["terminal_state"] == "RUNNING", data["summary"]


def _inner_counter(last: int, total: int, saved: str) -> str:
    lines = [f"2023-05-31 22:13:22,478 - INFO - fit() : [Iter {n} / {total}] loss: "
             f"{1.4 - n / 2000:.4f}" for n in range(228, last + 1, 76)]
    lines.append(f"2023-06-01 02:22:28,619 - INFO - Save model to {saved}")
    lines.append("2023-06-01 02:22:35,218 - INFO - Epoch 3 evaluation")
    return "\n".join(lines) + "\n"


def test_a_checkpoint_named_past_a_counters_total_shows_it_counted_an_epoch(tmp_path: Path):
    for saved in ("results/model/run-n8/3048", "out/checkpoint-3048", "ckpt/step_3048.pt"):
        data = once(tmp_path, _inner_counter(760, 762, saved))
        assert data["terminal_state"] == "RUNNING", (saved, data["summary"])


def test_a_checkpoint_named_within_the_plan_leaves_it(tmp_path: Path):
    data = once(tmp_path, _inner_counter(760, 762, "out/checkpoint-760"))
    assert data["target_steps"] == 762, data["summary"]


def test_passes_that_each_end_at_a_total_of_their_own_have_no_plan():
    # Keras `fit` once per data chunk: every bar completes, each at its own length.
    records = [Record(step=n, target_steps=n, metrics={"loss": 3e-4}) for n in (64, 68, 16, 55)]
    series = _series(records)
    assert series.target_steps is None
    assert not series.reached_target()


def test_a_training_pass_and_an_evaluation_pass_keep_the_plan():
    # A training bar and an evaluation bar take turns, each reaching its end: two totals.
    records = []
    for _ in range(3):
        records += [Record(step=500, target_steps=500), Record(step=50, target_steps=50)]
    records.append(Record(step=500, target_steps=500))
    assert _series(records).target_steps == 500


def test_a_relaunch_with_a_new_plan_is_still_a_plan():
    records = [Record(step=s, target_steps=1000) for s in (500, 1000)]
    records += [Record(step=s, target_steps=3000) for s in (10, 1500, 3000)]
    series = _series(records)
    assert series.target_steps == 3000
    assert series.reached_target()

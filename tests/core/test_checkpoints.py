"""A checkpoint any file of which failed to be written is never named best, however the
failure spells its path."""

from __future__ import annotations

from pathlib import Path

from babysit.core.checkpoints import Checkpoints
from tests.rules.test_loss_rules import verdict_of


def test_a_failed_file_inside_a_checkpoint_rules_the_checkpoint_out():
    saves = Checkpoints()
    saves.saved("/runs/a/out/checkpoint-500", 500, blocked=False)
    saves.saved("/runs/a/out/checkpoint-1000", 1000, blocked=False)
    saves.failed("out/checkpoint-1000/model.safetensors")  # relative, a file inside
    saves.named_best("/runs/a/out/checkpoint-1000", blocked=False)
    assert saves.good_path() == "/runs/a/out/checkpoint-500"


def test_a_failure_in_another_directory_of_the_same_name_does_not_count():
    saves = Checkpoints()
    saves.saved("out/checkpoint-1000", 1000, blocked=False)
    saves.failed("other/checkpoint-1000/model.safetensors")
    assert saves.good_path() == "out/checkpoint-1000"


def test_a_save_that_ran_out_of_disk_on_one_file_is_not_named_best(tmp_path: Path):
    lines = [f"step={s} loss={3.0 - 0.002 * s:.3f}" for s in range(1, 1001, 50)]
    lines.insert(10, "Saving model checkpoint to out/checkpoint-500")
    lines += ["Saving model checkpoint to out/checkpoint-1000",
              "OSError: [Errno 28] No space left on device: "
              "'out/checkpoint-1000/model.safetensors'",
              "Loading best model from out/checkpoint-1000 (score: 0.41).",
              "Training complete"]
    data = verdict_of(tmp_path, lines)
    assert data["best_checkpoint"] == "out/checkpoint-500"
    assert "checkpoint-failure" in {a["type"] for a in data["anomalies_detected"]}
